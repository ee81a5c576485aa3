import { loopProgressText, loopToldTo, type LoopProgress } from '../../sessionFormat/loopProgress.js';
import type { Forecast } from '../../sessionFormat/forecast.js';
import type { LoopGuards, RunEvent, Spend } from '../../sessionFormat/runEvents.js';
import type { CandidatesProcess } from '../runner/candidatesProcess.js';
import type { Disposable, EditorCommands, EditorWindow, Event, FolderRef, RunLog } from '../editorPorts.js';
import { Emitter } from '../emitter.js';
import { CONTEXT_PAUSED, CONTEXT_RUNNING } from '../ids.js';
import type { LoopProcess } from '../runner/loopProcess.js';

/**
 * What runs in a workspace folder of this window, as the editor names it:
 *   - a loop (`RunningLoop`): one runner, one session, started by `RunController`
 *     (after `LoopStarter` has asked for the folder and the prompt);
 *   - a candidate group (`RunningGroup`): one runner, a session per candidate
 *     (`RunningCandidate`), started by `CandidateRuns`.
 * A folder runs at most one of each kind at a time. The runner is the CLI
 * (`codeloops run --events ndjson`) as a child process: `LoopProcess` for a loop,
 * `CandidatesProcess` for a group; inside it the engine's `runLoop` runs the loop.
 * Where a loop is (its iteration, its stage, a pause) is its `LoopProgress`, folded
 * from its run events (sessionFormat/loopProgress.ts).
 */
export type RunKind = 'loop' | 'group';

export function isRunKind(value: unknown): value is RunKind {
  return value === 'loop' || value === 'group';
}

export interface RunningLoop<F extends FolderRef = FolderRef> {
  readonly kind: 'loop';
  readonly folder: F;
  readonly process: LoopProcess;
  sessionId: string | undefined;
  /** Where it is: its iteration, its stage, whether it waits for the user's review. */
  progress: LoopProgress;
  readonly startedAt: number;
  /** Its checks, budget and stall detection, once it has started. */
  guards: LoopGuards | null;
  /** What its agents have used so far. */
  spend: Spend | null;
  /** What past tasks with its agents took (`codeloops forecast`), once known; null when it was not asked for or could not be had. */
  forecast: Forecast | null;
}

/** A candidate of a running group, as the views need it. */
export interface RunningCandidate {
  readonly label: string;
  sessionId: string | undefined;
  /** Where its loop is; `ended` once it has. */
  progress: LoopProgress;
}

export interface RunningGroup<F extends FolderRef = FolderRef> {
  readonly kind: 'group';
  readonly folder: F;
  readonly process: CandidatesProcess;
  groupId: string | undefined;
  readonly candidates: Map<string, RunningCandidate>;
  readonly startedAt: number;
}

export type FolderRun<F extends FolderRef = FolderRef> = RunningLoop<F> | RunningGroup<F>;

/** A run event of one of the window's loops (a single loop's, or a candidate's), with its session once the loop has named it. */
export interface LoopEvent<F extends FolderRef = FolderRef> {
  folder: F;
  kind: RunKind;
  sessionId: string | undefined;
  event: RunEvent;
}

/** What a command may name to interrupt: a folder, or a session or candidate group of the Sessions view. */
export type RunTarget<F extends FolderRef> = F | { kind: 'session' | 'group'; id: string };

/** What the views need of the running loops (the tree, the viewers, the comparison pages): which sessions run, and their events. */
export interface RunningLoopsView {
  /** Whether anything runs in this window. */
  anyRunning(): boolean;
  runningSessionIds(): Set<string>;
  onEvent: Event<LoopEvent>;
  /** A loop or a group has ended (and no longer counts as running). */
  onDidEnd: Event<unknown>;
}

/** The one way of saying that something still runs. */
const WAIT_OR_INTERRUPT = 'Interrupt it first, or wait for it to finish.';
const WHAT_RUNS: Readonly<Record<RunKind, string>> = { loop: 'A Codeloops loop', group: 'A Codeloops candidate group' };

/**
 * Every loop and candidate group this window runs, in one place: the controllers
 * register what they start for as long as it runs, the views follow it from here,
 * and the registry alone sets the context keys the manifest's `when` clauses read
 * (`codeloops.running`, `codeloops.pausedForReview`) and says that something is
 * already running.
 */
export class LoopRegistry<F extends FolderRef = FolderRef> implements RunningLoopsView, Disposable {
  private readonly runs = new Map<string, FolderRun<F>>();
  private readonly events = new Emitter<LoopEvent<F>>();
  private readonly ends = new Emitter<{ folder: F; kind: RunKind }>();
  /** The context keys as last set: each is set again only when it changes (events come by the hundred). */
  private readonly contextShown = new Map<string, boolean>();
  readonly onEvent = this.events.event;
  readonly onDidEnd = this.ends.event;

  constructor(private readonly ports: { window: EditorWindow; commands: EditorCommands; log: RunLog }) {
    this.syncContext();
  }

  loops(): RunningLoop<F>[] {
    return [...this.runs.values()].filter((run): run is RunningLoop<F> => run.kind === 'loop');
  }

  groups(): RunningGroup<F>[] {
    return [...this.runs.values()].filter((run): run is RunningGroup<F> => run.kind === 'group');
  }

  loopIn(folder: F): RunningLoop<F> | undefined {
    const run = this.runs.get(keyOf('loop', folder));
    return run?.kind === 'loop' ? run : undefined;
  }

  groupIn(folder: F): RunningGroup<F> | undefined {
    const run = this.runs.get(keyOf('group', folder));
    return run?.kind === 'group' ? run : undefined;
  }

  anyRunning(): boolean {
    return this.runs.size > 0;
  }

  /** The sessions of every loop that runs: single loops, and the candidates of groups that have not ended. */
  runningSessionIds(): Set<string> {
    const ids = [...this.runs.values()].flatMap((run) =>
      run.kind === 'loop' ? [run.sessionId] : [...run.candidates.values()].filter((candidate) => candidate.progress.stage !== 'ended').map((c) => c.sessionId),
    );
    return new Set(ids.filter((id): id is string => id !== undefined));
  }

  /** True, once the user has been told, when the folder already runs one of this kind. */
  refuseBusyFolder(kind: RunKind, folder: F): boolean {
    if (!this.runs.has(keyOf(kind, folder))) return false;
    void this.ports.window.showWarning(`${WHAT_RUNS[kind]} is already running in ${folder.name}. ${WAIT_OR_INTERRUPT}`);
    return true;
  }

  /** True, once the user has been told, when the session's loop has not ended: its files and records are not to be touched yet. */
  refuseRunningSession(sessionId: string): boolean {
    if (!this.runningSessionIds().has(sessionId)) return false;
    void this.ports.window.showWarning(`This session is still running. ${WAIT_OR_INTERRUPT}`);
    return true;
  }

  /**
   * A run from its start to its end: it counts as running (the context keys, its
   * status item) until its end has been reported, then no longer, and only then do
   * listeners hear of the end.
   */
  async run<E>(run: FolderRun<F>, done: Promise<E>, after: { status: () => Disposable; report: (end: E) => unknown }): Promise<E> {
    const key = keyOf(run.kind, run.folder);
    this.runs.set(key, run);
    const status = after.status();
    this.syncContext();
    let ended = false;
    try {
      const end = await done;
      ended = true;
      await after.report(end);
      return end;
    } finally {
      status.dispose();
      this.runs.delete(key);
      this.syncContext();
      if (ended) this.ends.fire({ folder: run.folder, kind: run.kind });
    }
  }

  /** A run event, once the loop it came from has taken it in: the context keys follow, then every listener hears it. */
  fire(event: LoopEvent<F>): void {
    this.syncContext();
    this.events.fire(event);
  }

  /**
   * Interrupts what the target names (a folder, a session, a group), or else the only
   * run (of this kind, when given), or the user's pick among them.
   */
  async interrupt(target?: RunTarget<F>, kind?: RunKind): Promise<void> {
    const all = [...this.runs.values()].filter((run) => kind === undefined || run.kind === kind);
    const named = target === undefined ? [] : all.filter((run) => names(target, run));
    const choices = named.length > 0 ? named : all;
    if (choices.length === 0) {
      void this.ports.window.showInfo('No Codeloops loop is running.');
      return;
    }
    const run =
      choices.length === 1
        ? choices[0]
        : await this.ports.window.pick(
            choices.map((choice) => ({ label: choice.folder.name, description: whereItIs(choice), value: choice })),
            'Which loop should stop?',
          );
    if (run) this.stop(run);
  }

  /** Like Ctrl+C in a terminal: every loop of the run stops, its sessions end `interrupted`; until then they show as stopping. */
  stop(run: FolderRun<F>): void {
    this.ports.log.warn(`Interrupting ${run.kind === 'loop' ? 'the loop' : 'the candidates'} in ${run.folder.name}`);
    if (run.kind === 'loop') run.progress = loopToldTo(run.progress, 'stop');
    else for (const candidate of run.candidates.values()) candidate.progress = loopToldTo(candidate.progress, 'stop');
    this.syncContext();
    run.process.interrupt();
  }

  /** Sets the context keys from what runs now: call after a loop's progress changed outside an event (the user's Continue). */
  syncContext(): void {
    this.setContext(CONTEXT_RUNNING, this.runs.size > 0);
    this.setContext(
      CONTEXT_PAUSED,
      this.loops().some((loop) => loop.progress.pausedAfter !== null),
    );
  }

  private setContext(key: string, value: boolean): void {
    if (this.contextShown.get(key) === value) return;
    this.contextShown.set(key, value);
    this.ports.commands.setContext(key, value);
  }

  dispose(): void {
    // Closing the window ends running loops properly: their sessions end `interrupted`.
    for (const run of this.runs.values()) run.process.interrupt();
    this.events.dispose();
    this.ends.dispose();
  }
}

function keyOf(kind: RunKind, folder: FolderRef): string {
  return `${kind} ${folder.uri.toString()}`;
}

function names<F extends FolderRef>(target: RunTarget<F>, run: FolderRun<F>): boolean {
  if (!('kind' in target)) return run.folder.uri.toString() === target.uri.toString();
  if (target.kind === 'group') return run.kind === 'group' && run.groupId === target.id;
  return run.kind === 'loop' ? run.sessionId === target.id : [...run.candidates.values()].some((candidate) => candidate.sessionId === target.id);
}

/** A run in a picker: where a loop is, how far a group has come. */
function whereItIs(run: FolderRun): string {
  if (run.kind === 'loop') return loopProgressText(run.progress, ', ');
  const candidates = [...run.candidates.values()];
  return `${candidates.length} candidates, ${candidates.filter((candidate) => candidate.progress.stage === 'ended').length} done`;
}
