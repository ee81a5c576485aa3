import path from 'node:path';
import { describeEvent, type LineTone } from '../../loop/describeEvent.js';
import type { AgentProblem, AgentProblemCode, DoctorReport } from '../../sessionFormat/doctorReport.js';
import type { FailureCode } from '../../sessionFormat/failures.js';
import { advanceLoop, LOOP_STARTING, loopProgressText, loopToldTo, type LoopProgress } from '../../sessionFormat/loopProgress.js';
import type { RunControl } from '../../sessionFormat/reviewRecords.js';
import type { LoopGuards, RunEvent, Spend } from '../../sessionFormat/runEvents.js';
import type { Disposable, EditorCommands, EditorWindow, Event, FolderRef, RunLog } from '../editorPorts.js';
import { Emitter } from '../emitter.js';
import { COMMANDS, CONTEXT_PAUSED, CONTEXT_RUNNING, SETTINGS_SECTION } from '../ids.js';
import { blockingProblem, runAgentDoctor } from './agentDoctorProcess.js';
import { LoopProcess, type LoopProcessEnd, type LoopProcessOptions } from './loopProcess.js';

export interface RunningLoop<F extends FolderRef = FolderRef> {
  folder: F;
  process: LoopProcess;
  sessionId: string | undefined;
  /** Where it is: its iteration, its stage, whether it waits for the user's review. */
  progress: LoopProgress;
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
  /** Whether VS Code trusts the workspace; asked at each start, since trust can be given at any time. */
  isTrusted: () => boolean;
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
        trusted: deps.isTrusted(),
        env: deps.env,
      },
      (event) => this.handle(folder, event),
    );
    const loop: RunningLoop<F> = {
      folder,
      process,
      sessionId: undefined,
      progress: LOOP_STARTING,
      startedAt: Date.now(),
      guards: null,
      spend: null,
    };
    this.running.set(key, loop);
    const status = deps.showStatus(loop);
    deps.commands.setContext(CONTEXT_RUNNING, true);
    deps.log.info(`Starting a loop in ${folder.uri.fsPath}`);
    let end: LoopProcessEnd | undefined;
    try {
      end = await process.done;
      await this.report(folder, end, options);
      return end;
    } finally {
      status.dispose();
      this.running.delete(key);
      deps.commands.setContext(CONTEXT_RUNNING, this.running.size > 0 || Boolean(deps.othersRunning?.()));
      this.updatePausedContext();
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
                description: loopProgressText(candidate.progress, ', '),
                value: candidate,
              })),
              'Which loop should stop?',
            );
    }
    if (!loop) return;
    this.deps.log.warn(`Interrupting the loop in ${loop.folder.name}`);
    loop.progress = loopToldTo(loop.progress, 'stop');
    this.updatePausedContext();
    loop.process.interrupt();
  }

  /** Tells a loop paused for review to go on (or to stop); the loop of this session, or the only one paused. */
  async resumeAfterReview(action: RunControl['type'], sessionId?: string): Promise<void> {
    const paused = this.runningLoops().filter((loop) => loop.progress.pausedAfter !== null && (sessionId === undefined || loop.sessionId === sessionId));
    const loop =
      paused.length <= 1
        ? paused[0]
        : await this.deps.window.pick(
            paused.map((candidate) => ({ label: candidate.folder.name, description: `after iteration ${candidate.progress.pausedAfter}`, value: candidate })),
            action === 'continue' ? 'Which loop should go on?' : 'Which loop should stop?',
          );
    if (!loop) {
      if (paused.length === 0) void this.deps.window.showInfo('No Codeloops loop is waiting for your review.');
      return;
    }
    loop.progress = loopToldTo(loop.progress, action);
    this.updatePausedContext();
    loop.process.control(action);
  }

  /** Whether any loop waits for the user's review: the Continue and Stop commands show while one does. */
  private updatePausedContext(): void {
    this.deps.commands.setContext(
      CONTEXT_PAUSED,
      this.runningLoops().some((loop) => loop.progress.pausedAfter !== null),
    );
  }

  private handle(folder: F, event: RunEvent): void {
    const loop = this.running.get(folder.uri.toString());
    if (loop) {
      if (event.type === 'run_started') {
        loop.sessionId = event.session_id;
        loop.guards = event.guards ?? null;
      }
      if (event.type === 'spend') loop.spend = event;
      const before = loop.progress;
      loop.progress = advanceLoop(before, event);
      if (loop.progress.pausedAfter !== before.pausedAfter) this.updatePausedContext();
      if (event.type === 'review_paused') this.offerReview(loop, event.iteration);
    }
    // A refusal is reported once, in report(), in the editor's own words.
    if (event.type !== 'run_refused') for (const line of describeEvent(event, { showAgentText: this.deps.showAgentText() })) this.write(line.text, line.tone);
    this.emitter.fire({ folder, event });
  }

  /**
   * The loop waits for the user's review: a notification says so and offers to go on,
   * to stop, or to look at the changes first. It takes no focus: the user reviews in
   * their own time, and the status bar keeps saying that the loop waits.
   */
  private offerReview(loop: RunningLoop<F>, iteration: number): void {
    const [go, stop, look] = ['Continue', 'Stop', 'Show Changes'];
    const ask = (): void =>
      void this.deps.window
        .showInfo(
          `Codeloops in ${loop.folder.name} is waiting for your review of iteration ${iteration}: comment, reject hunks, then continue.`,
          go,
          look,
          stop,
        )
        .then((choice) => {
          if (loop.progress.pausedAfter !== iteration) return; // already answered elsewhere (the viewer, the status bar)
          if (choice === go) void this.resumeAfterReview('continue', loop.sessionId);
          else if (choice === stop) void this.resumeAfterReview('stop', loop.sessionId);
          else if (choice === look && loop.sessionId) {
            void this.deps.commands.execute(COMMANDS.showIterationChanges, { kind: 'iteration', sessionId: loop.sessionId, number: iteration });
            ask(); // the question stays until it is answered
          }
        });
    ask();
  }

  private write(text: string, tone: LineTone): void {
    for (const line of text.split('\n')) {
      if (tone === 'error') this.deps.log.error(line);
      else if (tone === 'warning') this.deps.log.warn(line);
      else this.deps.log.info(line);
    }
  }

  private async report(folder: F, end: LoopProcessEnd, options: StartOptions): Promise<void> {
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
      else {
        const failed = `Codeloops failed in ${folder.name} ${after}: ${summary.error ?? 'unknown error'}`;
        // An agent that failed may be one that cannot work here at all: ask the doctor what it finds.
        const problem = summary.error_code && AGENT_FAILURES.has(summary.error_code) ? await this.agentProblem(folder) : undefined;
        if (!problem) offerOpen(window.showError(failed, open));
        else
          this.offerFix(
            `${failed} ${problemText(problem.problem)}`,
            problem,
            [open],
            (choice) => choice === open && commands.execute(COMMANDS.openViewer, summary.session_id),
          );
      }
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
    const showLog = 'Show Log';
    const onShowLog = (choice: string | undefined) => choice === showLog && log.show(true);
    if (end.code === 'agent_missing') {
      // The same check as `codeloops doctor`: every agent of the run, and the fix for the first that cannot run.
      const problem = await this.agentProblem(folder, end.details.agent);
      if (problem) {
        this.offerFix(`Codeloops could not start in ${folder.name}: ${problemText(problem.problem)}`, problem, [showLog], onShowLog);
        return;
      }
    }
    const fix = FIXES[end.code];
    const actions = fix ? [fix.action, showLog] : [showLog];
    void window.showError(`Codeloops could not start in ${folder.name}: ${end.message}`, ...actions).then((choice) => {
      if (choice === showLog) log.show(true);
      else if (fix && choice === fix.action) void fix.run({ window, commands }, end.details);
    });
  }

  /** What `codeloops doctor` finds wrong with the folder's agents, with its report, or undefined. */
  private async agentProblem(folder: F, agent?: unknown): Promise<{ problem: AgentProblem; report: DoctorReport } | undefined> {
    const { deps } = this;
    const report = await runAgentDoctor({
      cliPath: deps.cliPath,
      nodePath: deps.nodePath,
      workingDir: folder.uri.fsPath,
      editorSettings: deps.editorSettingsJson(folder),
      env: deps.env,
    });
    const problem = report && blockingProblem(report, agent);
    if (!report || !problem) return undefined;
    deps.log.error(`codeloops doctor: ${problem.message} Fix: ${problem.fix}`);
    return { problem, report };
  }

  /** An error with the doctor's fix as a button, when the editor can do it, then the other actions. */
  private offerFix(
    message: string,
    { problem, report }: { problem: AgentProblem; report: DoctorReport },
    actions: string[],
    onOther: (choice: string | undefined) => unknown,
  ): void {
    const { window, commands } = this.deps;
    const fix = PROBLEM_FIXES[problem.code];
    const offered = fix && fix.available(report) ? fix : undefined;
    void window.showError(message, ...(offered ? [offered.action] : []), ...actions).then((choice) => {
      if (offered && choice === offered.action) void offered.run({ window, commands }, report);
      else onOther(choice);
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
  // The workspace is not trusted, so neither is its codeloops.toml: trusting the workspace trusts the file.
  project_untrusted: { action: 'Manage Workspace Trust', run: ({ commands }) => commands.execute('workbench.trust.manage') },
};

/** Failures of a loop that may come from an agent that cannot work here: the doctor is asked. */
const AGENT_FAILURES: ReadonlySet<FailureCode> = new Set(['agent_not_started', 'actor_failed', 'critic_failed']);

/** A doctor's problem in a sentence, with its fix. */
function problemText(problem: AgentProblem): string {
  return `${problem.message} Fix: ${problem.fix}.`;
}

/** What the editor offers for a problem `codeloops doctor` found, by its code. */
const PROBLEM_FIXES: Partial<
  Record<
    AgentProblemCode,
    {
      action: string;
      available: (report: DoctorReport) => boolean;
      run: (ports: { window: EditorWindow; commands: EditorCommands }, report: DoctorReport) => Thenable<unknown>;
    }
  >
> = {
  not_found: {
    action: 'Set Agent Path',
    available: () => true,
    run: ({ commands }) => commands.execute('workbench.action.openSettings', `${SETTINGS_SECTION}.agentPaths`),
  },
  not_executable: {
    action: 'Set Agent Path',
    available: () => true,
    run: ({ commands }) => commands.execute('workbench.action.openSettings', `${SETTINGS_SECTION}.agentPaths`),
  },
  // Logging in happens in the agent's own CLI, in a terminal.
  not_logged_in: { action: 'Open Terminal', available: () => true, run: ({ commands }) => commands.execute('workbench.action.terminal.new') },
  // IS_SANDBOX goes under [agents.claude.env] in the global config: open it when there is one.
  root_needs_sandbox: {
    action: 'Open Global Config',
    available: (report) => report.config_files.includes(report.global_config),
    run: ({ window }, report) => window.openFile(report.global_config),
  },
  config_invalid: {
    action: 'Open Settings',
    available: () => true,
    run: ({ commands }) => commands.execute('workbench.action.openSettings', SETTINGS_SECTION),
  },
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
