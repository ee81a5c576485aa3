import type { CandidateStreamEvent } from '../../sessionFormat/candidateGroups.js';
import { advanceLoop, LOOP_STARTING, LOOP_WAITING, loopEnded } from '../../sessionFormat/loopProgress.js';
import { describeGroupEvent } from '../../sessionFormat/groupWording.js';
import type { RunEvent } from '../../sessionFormat/runEvents.js';
import type { Disposable, EditorCommands, EditorWindow, FolderRef, RunLog } from '../editorPorts.js';
import { Emitter } from '../emitter.js';
import { COMMANDS } from '../ids.js';
import { runnerCrashedText } from '../runs/loopEndReport.js';
import { logEvent, showErrorWithLog, writeLog } from '../runs/loopLog.js';
import type { LoopRegistry, RunningGroup } from '../runs/loopRegistry.js';
import type { RunnerClient } from '../runner/runnerClient.js';
import { CandidatesProcess, type CandidatesProcessEnd } from '../runner/candidatesProcess.js';

export interface CandidateRunsDeps<F extends FolderRef> {
  /** Where the window's running loops are kept, and the context keys set. */
  registry: LoopRegistry<F>;
  /** The runner, which runs the group. */
  runner: RunnerClient;
  log: RunLog;
  window: EditorWindow;
  commands: EditorCommands;
  editorSettingsJson: (folder: F) => string | undefined;
  /** Shows a running group in the status bar until disposed. */
  showStatus: (group: RunningGroup<F>) => Disposable;
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
 * candidate's run events reach the views through the registry as a single loop's do,
 * the log shows them with the candidate's label, and the end is reported with a way
 * to the comparison.
 */
export class CandidateRuns<F extends FolderRef = FolderRef> implements Disposable {
  private readonly groupEvents = new Emitter<{ folder: F; event: CandidateStreamEvent }>();
  /** The group's own records as they come (started, a candidate finished, judged…); its candidates' run events go to the registry. */
  readonly onGroupEvent = this.groupEvents.event;

  constructor(private readonly deps: CandidateRunsDeps<F>) {}

  /** Whether a group may start in the folder now; when not, the user has been told why. */
  canStartIn(folder: F): boolean {
    return !this.deps.registry.refuseBusyFolder('group', folder);
  }

  /** Starts a group; resolves when every candidate has ended (and the judge has ranked them). */
  async start(folder: F, request: CandidatesRequest): Promise<CandidatesProcessEnd | undefined> {
    if (!this.canStartIn(folder)) return undefined;
    const { deps } = this;
    const process = new CandidatesProcess(
      deps.runner,
      {
        workingDir: folder.uri.fsPath,
        prompt: request.prompt,
        candidates: request.candidates,
        times: request.times,
        editorSettings: deps.editorSettingsJson(folder),
      },
      (event) => this.handle(folder, event),
    );
    const group: RunningGroup<F> = { kind: 'group', folder, process, groupId: undefined, candidates: new Map(), startedAt: Date.now() };
    deps.log.info(`Starting candidates ${request.candidates}${request.times > 1 ? ` (${request.times} of each)` : ''} in ${folder.uri.fsPath}`);
    return deps.registry.run(group, process.done, { status: () => deps.showStatus(group), report: (end) => this.report(folder, end) });
  }

  /** Stops every candidate of the folder's group (or of the only group running); false when there is none. */
  interrupt(folder?: F): boolean {
    const { registry } = this.deps;
    const groups = registry.groups();
    const group = folder ? registry.groupIn(folder) : groups.length === 1 ? groups[0] : undefined;
    if (group) registry.stop(group);
    return group !== undefined;
  }

  private handle(folder: F, event: CandidateStreamEvent): void {
    const group = this.deps.registry.groupIn(folder);
    if (event.type === 'candidate_event') {
      if (group) this.followCandidate(group, event.label, event.session_id, event.event);
      logEvent(this.deps.log, event.event, { showAgentText: false, label: event.label });
      this.deps.registry.fire({ folder, kind: 'group', sessionId: event.session_id, event: event.event });
      return;
    }
    if (group) this.followGroup(group, event);
    // The group's own records in the CLI's words: how it started, a candidate that could not, the judge's ranking.
    for (const line of describeGroupEvent(event)) writeLog(this.deps.log, line.text, line.tone);
    this.groupEvents.fire({ folder, event });
  }

  /** The group's own records: its candidates, waiting at first; each one's end as the group recorded it. */
  private followGroup(group: RunningGroup<F>, event: CandidateStreamEvent): void {
    if (event.type === 'group_started') {
      group.groupId = event.group_id;
      for (const { label } of event.candidates) group.candidates.set(label, { label, sessionId: undefined, progress: LOOP_WAITING });
    }
    if (event.type === 'candidate_finished') {
      const candidate = group.candidates.get(event.label);
      if (candidate) candidate.progress = loopEnded(candidate.progress, event.outcome, event.timestamp);
    }
  }

  private followCandidate(group: RunningGroup<F>, label: string, sessionId: string, event: RunEvent): void {
    const candidate = group.candidates.get(label) ?? { label, sessionId, progress: LOOP_STARTING };
    group.candidates.set(label, candidate);
    candidate.sessionId = sessionId;
    candidate.progress = advanceLoop(candidate.progress, event);
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
    void showErrorWithLog(
      this.deps,
      end.kind === 'refused' ? `Codeloops could not start the candidates in ${folder.name}: ${end.message}` : runnerCrashedText(end.message),
    );
  }

  dispose(): void {
    this.groupEvents.dispose();
  }
}
