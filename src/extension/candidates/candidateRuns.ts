import type { CandidateStreamEvent } from '../../sessionFormat/candidateGroups.js';
import { advanceLoop, LOOP_STARTING, LOOP_WAITING, loopEnded, loopToldTo, type LoopProgress } from '../../sessionFormat/loopProgress.js';
import type { RunEvent } from '../../sessionFormat/runEvents.js';
import { describeEvent } from '../../loop/describeEvent.js';
import type { Disposable, EditorCommands, EditorWindow, FolderRef, RunLog } from '../editorPorts.js';
import { Emitter } from '../emitter.js';
import { COMMANDS, CONTEXT_RUNNING } from '../ids.js';
import { CandidatesProcess, type CandidatesProcessEnd } from './candidatesProcess.js';

/** A candidate of a running group, as the views need it. */
export interface RunningCandidate {
  label: string;
  sessionId: string | undefined;
  /** Where its loop is; `ended` once it has. */
  progress: LoopProgress;
}

export interface RunningGroup<F extends FolderRef = FolderRef> {
  folder: F;
  process: CandidatesProcess;
  groupId: string | undefined;
  candidates: Map<string, RunningCandidate>;
  startedAt: number;
}

export interface CandidateRunsDeps<F extends FolderRef> {
  cliPath: string;
  nodePath: string;
  log: RunLog;
  window: EditorWindow;
  commands: EditorCommands;
  editorSettingsJson: (folder: F) => string | undefined;
  /** Shows a running group in the status bar until disposed. */
  showStatus: (group: RunningGroup<F>) => Disposable;
  /** Whether a single loop runs in this window, for the `codeloops.running` context key. */
  othersRunning: () => boolean;
  env?: NodeJS.ProcessEnv;
}

export interface CandidatesRequest {
  prompt: string;
  /** Agents or agent:model pairs, comma-separated. */
  candidates: string;
  /** Each candidate this many times. */
  times: number;
}

/**
 * Candidate groups started from the editor, one per workspace folder: the runner
 * runs them (`codeloops run --candidates … --events ndjson`), this follows them: each
 * candidate's run events reach the tree and the viewers as a single loop's do, the
 * log shows them with the candidate's label, and the end is reported with a way to
 * the comparison.
 */
export class CandidateRuns<F extends FolderRef = FolderRef> implements Disposable {
  private readonly groups = new Map<string, RunningGroup<F>>();
  private readonly events = new Emitter<{ folder: F; event: RunEvent }>();
  private readonly groupEvents = new Emitter<{ folder: F; event: CandidateStreamEvent }>();
  private readonly ends = new Emitter<{ folder: F; end: CandidatesProcessEnd }>();
  readonly onEvent = this.events.event;
  readonly onGroupEvent = this.groupEvents.event;
  readonly onDidEnd = this.ends.event;

  constructor(private readonly deps: CandidateRunsDeps<F>) {}

  isRunning(folder: F): boolean {
    return this.groups.has(folder.uri.toString());
  }

  runningGroups(): RunningGroup<F>[] {
    return [...this.groups.values()];
  }

  /** Every candidate of every running group, as the views count running loops. */
  runningLoops(): RunningCandidate[] {
    return this.runningGroups().flatMap((group) => [...group.candidates.values()].filter((candidate) => candidate.progress.stage !== 'ended'));
  }

  runningSessionIds(): Set<string> {
    return new Set(this.runningLoops().flatMap((candidate) => (candidate.sessionId ? [candidate.sessionId] : [])));
  }

  /** Starts a group; resolves when every candidate has ended (and the judge has ranked them). */
  async start(folder: F, request: CandidatesRequest): Promise<CandidatesProcessEnd | undefined> {
    const { deps } = this;
    const key = folder.uri.toString();
    if (this.groups.has(key)) {
      void deps.window.showWarning(`Codeloops candidates are already running in ${folder.name}. Interrupt them first, or wait for them to finish.`);
      return undefined;
    }
    const process = new CandidatesProcess(
      {
        cliPath: deps.cliPath,
        nodePath: deps.nodePath,
        workingDir: folder.uri.fsPath,
        prompt: request.prompt,
        candidates: request.candidates,
        times: request.times,
        editorSettings: deps.editorSettingsJson(folder),
        env: deps.env,
      },
      (event) => this.handle(folder, event),
    );
    const group: RunningGroup<F> = { folder, process, groupId: undefined, candidates: new Map(), startedAt: Date.now() };
    this.groups.set(key, group);
    const status = deps.showStatus(group);
    deps.commands.setContext(CONTEXT_RUNNING, true);
    deps.log.info(`Starting candidates ${request.candidates}${request.times > 1 ? ` (${request.times} of each)` : ''} in ${folder.uri.fsPath}`);
    let end: CandidatesProcessEnd | undefined;
    try {
      end = await process.done;
      this.report(folder, end);
      return end;
    } finally {
      status.dispose();
      this.groups.delete(key);
      deps.commands.setContext(CONTEXT_RUNNING, this.groups.size > 0 || deps.othersRunning());
      if (end) this.ends.fire({ folder, end });
    }
  }

  /** Stops every candidate of the folder's group (or the only group running). */
  interrupt(folder?: F): boolean {
    const group = folder ? this.groups.get(folder.uri.toString()) : this.groups.size === 1 ? [...this.groups.values()][0] : undefined;
    if (!group) return false;
    this.deps.log.warn(`Interrupting the candidates in ${group.folder.name}`);
    for (const candidate of group.candidates.values()) candidate.progress = loopToldTo(candidate.progress, 'stop');
    group.process.interrupt();
    return true;
  }

  private handle(folder: F, event: CandidateStreamEvent): void {
    const group = this.groups.get(folder.uri.toString());
    if (event.type === 'candidate_event') {
      if (group) this.track(group, event.label, event.session_id, event.event);
      for (const line of describeEvent(event.event, { showAgentText: false })) this.write(`[${event.label}] ${line.text}`, line.tone);
      this.events.fire({ folder, event: event.event });
      return;
    }
    if (group && event.type === 'group_started') {
      group.groupId = event.group_id;
      for (const candidate of event.candidates) group.candidates.set(candidate.label, { label: candidate.label, sessionId: undefined, progress: LOOP_WAITING });
    }
    if (group && event.type === 'candidate_finished') {
      const candidate = group.candidates.get(event.label);
      if (candidate) candidate.progress = loopEnded(candidate.progress, event.outcome, event.timestamp);
    }
    if (event.type === 'judged') this.write(`judge: ${event.judgment.ranking.join(' > ') || event.judgment.reasoning}`, 'info');
    this.groupEvents.fire({ folder, event });
  }

  private track(group: RunningGroup<F>, label: string, sessionId: string, event: RunEvent): void {
    const candidate = group.candidates.get(label) ?? { label, sessionId, progress: LOOP_STARTING };
    group.candidates.set(label, candidate);
    candidate.sessionId = sessionId;
    candidate.progress = advanceLoop(candidate.progress, event);
  }

  private write(text: string, tone: string): void {
    if (tone === 'error') this.deps.log.error(text);
    else if (tone === 'warning') this.deps.log.warn(text);
    else this.deps.log.info(text);
  }

  private report(folder: F, end: CandidatesProcessEnd): void {
    const { window, commands, log } = this.deps;
    if (end.kind === 'finished') {
      const compare = 'Compare Candidates';
      const best = end.ranking[0];
      const text =
        end.status === 'interrupted'
          ? `Codeloops candidates in ${folder.name} were interrupted.`
          : `Codeloops candidates finished in ${folder.name}${best ? `: ${best} ranks first` : ''}.`;
      void (end.status === 'finished' ? window.showInfo(text, compare) : window.showWarning(text, compare)).then(
        (choice) => choice === compare && commands.execute(COMMANDS.compareCandidates, end.groupId),
      );
      return;
    }
    log.error(end.message);
    const showLog = 'Show Log';
    const prefix = end.kind === 'refused' ? `Codeloops could not start the candidates in ${folder.name}` : 'The Codeloops runner stopped unexpectedly';
    void window.showError(`${prefix}: ${end.message}`, showLog).then((choice) => choice === showLog && log.show(true));
  }

  dispose(): void {
    for (const group of this.groups.values()) group.process.interrupt();
    this.events.dispose();
    this.groupEvents.dispose();
    this.ends.dispose();
  }
}
