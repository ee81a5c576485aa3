import path from 'node:path';
import { describeEvent, type LineTone } from '../../loop/describeEvent.js';
import type { FailureCode } from '../../sessionFormat/failures.js';
import type { LoopGuards, RunEvent, Spend } from '../../sessionFormat/runEvents.js';
import type { Disposable, EditorCommands, EditorWindow, Event, FolderRef, RunLog } from '../editorPorts.js';
import { Emitter } from '../emitter.js';
import { COMMANDS, CONTEXT_RUNNING, SETTINGS_SECTION } from '../ids.js';
import { LoopProcess, type LoopProcessEnd, type LoopProcessOptions } from './loopProcess.js';

export interface RunningLoop<F extends FolderRef = FolderRef> {
  folder: F;
  process: LoopProcess;
  sessionId: string | undefined;
  iteration: number;
  phase: string;
  startedAt: number;
  /** Its checks, budget and stall detection, once it has started. */
  guards: LoopGuards | null;
  /** What its agents have used so far. */
  spend: Spend | null;
}

export interface LoopEvent<F extends FolderRef = FolderRef> {
  folder: F;
  event: RunEvent;
}

export interface RunControllerDeps<F extends FolderRef> {
  /** The bundled runner, `dist/cli.js`, and the program that runs it. */
  cliPath: string;
  nodePath: string;
  log: RunLog;
  window: EditorWindow;
  commands: EditorCommands;
  /** Shows a running loop in the status bar until disposed. */
  showStatus: (loop: RunningLoop<F>) => Disposable;
  /** The editor's settings for a folder, as the runner's `--editor-settings` layer. */
  editorSettingsJson: (folder: F) => string | undefined;
  /** Whether the agents' text streams into the log. */
  showAgentText: () => boolean;
  /** The runner's environment (default: the editor's own). */
  env?: NodeJS.ProcessEnv;
  /** Whether anything else runs loops in this window (candidate groups), for the `codeloops.running` context key. */
  othersRunning?: () => boolean;
}

export interface StartOptions {
  /** Refusals the caller deals with itself (resume offers "Resume Anyway" for a changed tree): not reported here. */
  handles?: readonly FailureCode[];
}

/**
 * Starts and stops loops, one per workspace folder, and shows them as they run:
 * the log channel streams each phase, a status bar item shows the iteration, phase
 * and elapsed time and interrupts on click, and listeners (the tree, viewers) get
 * every run event. Every decision is made on typed events and failure codes.
 */
export class RunController<F extends FolderRef = FolderRef> implements Disposable {
  private readonly running = new Map<string, RunningLoop<F>>();
  private readonly emitter = new Emitter<LoopEvent<F>>();
  private readonly endEmitter = new Emitter<{ folder: F; end: LoopProcessEnd }>();
  readonly onEvent = this.emitter.event;
  readonly onDidEnd = this.endEmitter.event;

  constructor(private readonly deps: RunControllerDeps<F>) {}

  isRunning(folder: F): boolean {
    return this.running.has(folder.uri.toString());
  }

  runningLoops(): RunningLoop<F>[] {
    return [...this.running.values()];
  }

  runningSessionIds(): Set<string> {
    return new Set(this.runningLoops().flatMap((loop) => (loop.sessionId ? [loop.sessionId] : [])));
  }

  /** Starts a loop; resolves when it has ended. Refuses a second loop in the same folder. */
  async start(folder: F, prompt: LoopProcessOptions['prompt'], options: StartOptions = {}): Promise<LoopProcessEnd | undefined> {
    const { deps } = this;
    const key = folder.uri.toString();
    if (this.running.has(key)) {
      void deps.window.showWarning(`A Codeloops loop is already running in ${folder.name}. Interrupt it first, or wait for it to finish.`);
      return undefined;
    }
    const process = new LoopProcess(
      {
        cliPath: deps.cliPath,
        nodePath: deps.nodePath,
        workingDir: folder.uri.fsPath,
        prompt,
        editorSettings: deps.editorSettingsJson(folder),
        env: deps.env,
      },
      (event) => this.handle(folder, event),
    );
    const loop: RunningLoop<F> = { folder, process, sessionId: undefined, iteration: 0, phase: 'starting', startedAt: Date.now(), guards: null, spend: null };
    this.running.set(key, loop);
    const status = deps.showStatus(loop);
    deps.commands.setContext(CONTEXT_RUNNING, true);
    deps.log.info(`Starting a loop in ${folder.uri.fsPath}`);
    let end: LoopProcessEnd | undefined;
    try {
      end = await process.done;
      this.report(folder, end, options);
      return end;
    } finally {
      status.dispose();
      this.running.delete(key);
      deps.commands.setContext(CONTEXT_RUNNING, this.running.size > 0 || Boolean(deps.othersRunning?.()));
      // Listeners hear of the end once the loop is no longer counted as running.
      if (end) this.endEmitter.fire({ folder, end });
    }
  }

  /** Interrupts the loop of a folder, or the only one running; asks when several run. */
  async interrupt(folder?: F): Promise<void> {
    let loop = folder ? this.running.get(folder.uri.toString()) : undefined;
    if (!loop) {
      const loops = this.runningLoops();
      if (loops.length === 0) {
        void this.deps.window.showInfo('No Codeloops loop is running.');
        return;
      }
      loop =
        loops.length === 1
          ? loops[0]
          : await this.deps.window.pick(
              loops.map((candidate) => ({
                label: candidate.folder.name,
                description: `iteration ${candidate.iteration}, ${candidate.phase}`,
                value: candidate,
              })),
              'Which loop should stop?',
            );
    }
    if (!loop) return;
    this.deps.log.warn(`Interrupting the loop in ${loop.folder.name}`);
    loop.phase = 'stopping';
    loop.process.interrupt();
  }

  private handle(folder: F, event: RunEvent): void {
    const loop = this.running.get(folder.uri.toString());
    if (loop) {
      if (event.type === 'run_started') {
        loop.sessionId = event.session_id;
        loop.guards = event.guards ?? null;
      }
      if (event.type === 'spend') loop.spend = event;
      if (event.type === 'iteration_started') {
        loop.iteration = event.iteration;
        loop.phase = 'snapshot';
      }
      if (event.type === 'phase' && event.status === 'started' && loop.phase !== 'stopping')
        loop.phase = event.phase === 'critic_repair' ? 'critic' : event.phase;
    }
    // A refusal is reported once, in report(), in the editor's own words.
    if (event.type !== 'run_refused') for (const line of describeEvent(event, { showAgentText: this.deps.showAgentText() })) this.write(line.text, line.tone);
    this.emitter.fire({ folder, event });
  }

  private write(text: string, tone: LineTone): void {
    for (const line of text.split('\n')) {
      if (tone === 'error') this.deps.log.error(line);
      else if (tone === 'warning') this.deps.log.warn(line);
      else this.deps.log.info(line);
    }
  }

  private report(folder: F, end: LoopProcessEnd, options: StartOptions): void {
    const { window, commands, log } = this.deps;
    if (end.kind === 'finished') {
      const { summary } = end;
      const open = 'Open Session';
      const after = `after ${summary.iterations} iteration${summary.iterations === 1 ? '' : 's'}`;
      const offerOpen = (choice: Thenable<string | undefined>) =>
        void choice.then((picked) => picked === open && commands.execute(COMMANDS.openViewer, summary.session_id));
      if (summary.status === 'success') offerOpen(window.showInfo(`Codeloops finished in ${folder.name} ${after}: ${summary.summary ?? 'done'}`, open));
      else if (summary.status === 'interrupted') offerOpen(window.showWarning(`Codeloops loop in ${folder.name} interrupted ${after}.`, open));
      else if (summary.status === 'max_iterations_reached')
        offerOpen(window.showWarning(`Codeloops stopped at the iteration limit in ${folder.name} ${after}.`, open));
      else offerOpen(window.showError(`Codeloops failed in ${folder.name} ${after}: ${summary.error ?? 'unknown error'}`, open));
      return;
    }
    if (end.kind === 'crashed') {
      log.error(end.message);
      const showLog = 'Show Log';
      void window.showError(`The Codeloops runner stopped unexpectedly: ${end.message}`, showLog).then((choice) => choice === showLog && log.show(true));
      return;
    }
    if (options.handles?.includes(end.code)) return;
    log.error(end.message);
    const fix = FIXES[end.code];
    const showLog = 'Show Log';
    const actions = fix ? [fix.action, showLog] : [showLog];
    void window.showError(`Codeloops could not start in ${folder.name}: ${end.message}`, ...actions).then((choice) => {
      if (choice === showLog) log.show(true);
      else if (fix && choice === fix.action) void fix.run({ window, commands }, end.details);
    });
  }

  dispose(): void {
    // Closing the window ends running loops properly: their sessions end `interrupted`.
    for (const loop of this.running.values()) loop.process.interrupt();
    this.emitter.dispose();
    this.endEmitter.dispose();
  }
}

/** What the editor offers for a refusal it can help with, by code: the fix, as a button. */
const FIXES: Partial<
  Record<
    FailureCode,
    { action: string; run: (ports: { window: EditorWindow; commands: EditorCommands }, details: Readonly<Record<string, unknown>>) => Thenable<unknown> }
  >
> = {
  agent_missing: { action: 'Set Agent Path', run: ({ commands }) => commands.execute('workbench.action.openSettings', `${SETTINGS_SECTION}.agentPaths`) },
  config_invalid: {
    action: 'Open Config File',
    run: ({ window, commands }, details) =>
      typeof details.file === 'string' && path.isAbsolute(details.file)
        ? window.openFile(details.file)
        : commands.execute('workbench.action.openSettings', SETTINGS_SECTION),
  },
  not_a_repository: { action: 'Initialize Repository', run: ({ commands }) => commands.execute('git.init') },
};

/** What the views need of whatever runs loops (this controller, candidate groups): which sessions run, and their events. */
export interface RunningLoopsView {
  runningLoops(): readonly { sessionId: string | undefined }[];
  runningSessionIds(): Set<string>;
  onEvent: Event<{ event: RunEvent }>;
  onDidEnd: Event<unknown>;
}

/** What the loop's agents have cost so far, against its cap when it has one: `$0.42 of $5.00`. */
export function spendText(loop: Pick<RunningLoop, 'spend' | 'guards'>): string | undefined {
  const cost = loop.spend?.total_cost_usd;
  const cap = loop.guards?.max_cost_usd ?? null;
  if (cost === null || cost === undefined) return cap === null ? undefined : `$0.00 of $${cap.toFixed(2)}`;
  const estimated = loop.spend?.cost_estimated ? '≈' : '';
  return cap === null ? `${estimated}$${cost.toFixed(2)}` : `${estimated}$${cost.toFixed(2)} of $${cap.toFixed(2)}`;
}

export function bundledCliPath(extensionPath: string): string {
  return path.join(extensionPath, 'dist', 'cli.js');
}
