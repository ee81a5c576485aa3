import path from 'node:path';
import * as vscode from 'vscode';
import { describeEvent, type LineTone } from '../../loop/describeEvent.js';
import type { RunEvent } from '../../loop/runEvents.js';
import { CONTEXT_RUNNING } from '../ids.js';
import { editorSettingsJson, showAgentText } from '../settings.js';
import { LoopProcess, type LoopProcessEnd, type LoopProcessOptions } from './loopProcess.js';
import { RunStatusItem } from './runStatusItem.js';

export interface RunningLoop {
  folder: vscode.WorkspaceFolder;
  process: LoopProcess;
  sessionId: string | undefined;
  iteration: number;
  phase: string;
  startedAt: number;
}

export interface LoopEvent {
  folder: vscode.WorkspaceFolder;
  event: RunEvent;
}

/**
 * Starts and stops loops, one per workspace folder, and shows them as they run:
 * the log channel streams each phase, a status bar item shows the iteration, phase
 * and elapsed time and interrupts on click, and listeners (the tree, viewers) get
 * every run event.
 */
export class RunController implements vscode.Disposable {
  private readonly running = new Map<string, RunningLoop>();
  private readonly emitter = new vscode.EventEmitter<LoopEvent>();
  private readonly endEmitter = new vscode.EventEmitter<{ folder: vscode.WorkspaceFolder; end: LoopProcessEnd }>();
  readonly onEvent = this.emitter.event;
  readonly onDidEnd = this.endEmitter.event;

  constructor(
    private readonly cliPath: string,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  isRunning(folder: vscode.WorkspaceFolder): boolean {
    return this.running.has(folder.uri.toString());
  }

  runningLoops(): RunningLoop[] {
    return [...this.running.values()];
  }

  runningSessionIds(): Set<string> {
    return new Set(this.runningLoops().flatMap((loop) => (loop.sessionId ? [loop.sessionId] : [])));
  }

  /** Starts a loop; resolves when it has ended. Refuses a second loop in the same folder. */
  async start(folder: vscode.WorkspaceFolder, prompt: LoopProcessOptions['prompt']): Promise<LoopProcessEnd | undefined> {
    const key = folder.uri.toString();
    if (this.running.has(key)) {
      void vscode.window.showWarningMessage(`A Codeloops loop is already running in ${folder.name}. Interrupt it first, or wait for it to finish.`);
      return undefined;
    }
    const process = new LoopProcess(
      { cliPath: this.cliPath, nodePath: globalThis.process.execPath, workingDir: folder.uri.fsPath, prompt, editorSettings: editorSettingsJson(folder) },
      (event) => this.handle(folder, event),
    );
    const loop: RunningLoop = { folder, process, sessionId: undefined, iteration: 0, phase: 'starting', startedAt: Date.now() };
    this.running.set(key, loop);
    const status = new RunStatusItem(loop);
    void vscode.commands.executeCommand('setContext', CONTEXT_RUNNING, true);
    this.log.info(`Starting a loop in ${folder.uri.fsPath}`);
    let end: LoopProcessEnd | undefined;
    try {
      end = await process.done;
      this.report(folder, end);
      return end;
    } finally {
      status.dispose();
      this.running.delete(key);
      void vscode.commands.executeCommand('setContext', CONTEXT_RUNNING, this.running.size > 0);
      // Listeners hear of the end once the loop is no longer counted as running.
      if (end) this.endEmitter.fire({ folder, end });
    }
  }

  /** Interrupts the loop of a folder, or the only one running; asks when several run. */
  async interrupt(folder?: vscode.WorkspaceFolder): Promise<void> {
    let loop = folder ? this.running.get(folder.uri.toString()) : undefined;
    if (!loop) {
      const loops = this.runningLoops();
      if (loops.length === 0) {
        void vscode.window.showInformationMessage('No Codeloops loop is running.');
        return;
      }
      if (loops.length === 1) loop = loops[0];
      else {
        const pick = await vscode.window.showQuickPick(
          loops.map((candidate) => ({ label: candidate.folder.name, description: `iteration ${candidate.iteration}, ${candidate.phase}`, loop: candidate })),
          { placeHolder: 'Which loop should stop?' },
        );
        loop = pick?.loop;
      }
    }
    if (!loop) return;
    this.log.warn(`Interrupting the loop in ${loop.folder.name}`);
    loop.phase = 'stopping';
    loop.process.interrupt();
  }

  private handle(folder: vscode.WorkspaceFolder, event: RunEvent): void {
    const loop = this.running.get(folder.uri.toString());
    if (loop) {
      if (event.type === 'run_started') loop.sessionId = event.session_id;
      if (event.type === 'iteration_started') {
        loop.iteration = event.iteration;
        loop.phase = 'snapshot';
      }
      if (event.type === 'phase' && event.status === 'started' && loop.phase !== 'stopping') loop.phase = event.phase === 'critic_repair' ? 'critic' : event.phase;
    }
    for (const line of describeEvent(event, { showAgentText: showAgentText() })) this.write(line.text, line.tone);
    this.emitter.fire({ folder, event });
  }

  private write(text: string, tone: LineTone): void {
    for (const line of text.split('\n')) {
      if (tone === 'error') this.log.error(line);
      else if (tone === 'warning') this.log.warn(line);
      else this.log.info(line);
    }
  }

  private report(folder: vscode.WorkspaceFolder, end: LoopProcessEnd): void {
    if (end.kind === 'finished') {
      const { summary } = end;
      const open = 'Open Session';
      const after = `after ${summary.iterations} iteration${summary.iterations === 1 ? '' : 's'}`;
      const show = (message: Thenable<string | undefined>) =>
        void message.then((choice) => choice === open && vscode.commands.executeCommand('codeloops.openViewer', summary.session_id));
      if (summary.status === 'success') show(vscode.window.showInformationMessage(`Codeloops finished in ${folder.name} ${after}: ${summary.summary ?? 'done'}`, open));
      else if (summary.status === 'interrupted') show(vscode.window.showWarningMessage(`Codeloops loop in ${folder.name} interrupted ${after}.`, open));
      else if (summary.status === 'max_iterations_reached') show(vscode.window.showWarningMessage(`Codeloops stopped at the iteration limit in ${folder.name} ${after}.`, open));
      else show(vscode.window.showErrorMessage(`Codeloops failed in ${folder.name} ${after}: ${summary.error ?? 'unknown error'}`, open));
      return;
    }
    this.log.error(end.message);
    const showLog = 'Show Log';
    void vscode.window
      .showErrorMessage(end.kind === 'refused' ? `Codeloops could not start in ${folder.name}: ${end.message}` : `The Codeloops runner stopped unexpectedly: ${end.message}`, showLog)
      .then((choice) => choice === showLog && this.log.show(true));
  }

  dispose(): void {
    // Closing the window ends running loops properly: their sessions end `interrupted`.
    for (const loop of this.running.values()) loop.process.interrupt();
    this.emitter.dispose();
    this.endEmitter.dispose();
  }
}

export function bundledCliPath(extensionPath: string): string {
  return path.join(extensionPath, 'dist', 'cli.js');
}
