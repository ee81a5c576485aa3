import fs from 'node:fs';
import type { AgentEvent } from '../agents/agentEvents.js';
import { runAgent, type AgentLaunch, type AgentRunResult } from '../agents/runAgent.js';
import { feedbackText, type CriticDecision } from '../critic/criticDecision.js';
import { reviewIteration, type Review } from '../critic/reviewIteration.js';
import type { Repository } from '../git/repository.js';
import { pointRef, sessionHeadRef, snapshotRef, takeSnapshot, type Snapshot, type SnapshotLabel } from '../git/snapshots.js';
import { removeAllTemporaryIndexes } from '../git/temporaryIndex.js';
import { changedPaths, diffSnapshots, type DiffSummary } from '../git/treeDiff.js';
import type { Outcome } from '../sessionFormat/sessionLines.js';
import { SessionWriter } from '../sessionWriter/sessionWriter.js';
import { readLinesBackward } from '../sessions/lineReader.js';
import { SidecarRecorder } from '../sessionWriter/sidecarRecorder.js';
import { buildContinuationPrompt, type FeedbackRecord } from './actorPrompt.js';
import { captureUserGitState, undoCriticChanges } from './criticGuard.js';
import { acquireRepositoryLock, type RepositoryLock } from './repositoryLock.js';
import type { RunEvent, RunEventInput, RunEventListener, RunSummary } from './runEvents.js';

/** One role's agent, ready to start. */
export interface RoleLaunch {
  launch: AgentLaunch;
  model: string | null;
}

export interface LoopRequest {
  prompt: string;
  /** Absolute; recorded in the session as `working_dir`. */
  workingDir: string;
  repository: Repository;
  actor: RoleLaunch;
  critic: RoleLaunch;
  /** null: no limit. */
  maxIterations: number | null;
  sessionsDirectory: string;
  /** Where this session's sidecar folder goes, given its id. */
  sidecarDirectory: (sessionId: string) => string;
  signal: AbortSignal;
  onEvent?: RunEventListener;
  /** Carry on an earlier session instead of starting afresh (`codeloops resume`). */
  continuation?: Continuation;
}

/** What a resumed run takes over from the session it carries on; see `resume/resumePlan.ts`. */
export interface Continuation {
  /** The session carried on. */
  sessionId: string;
  /** Its file, when it has no `session_end`: the run appends to it. Otherwise a new linked session is started. */
  appendTo: string | null;
  /** The critic's verdicts so far, oldest first: the actor is told the latest and the rest in brief. */
  history: FeedbackRecord[];
  /** The last iteration recorded; the run goes on with the next number. */
  lastIteration: number;
  /** The actor's own agent session to resume on the first iteration, where its CLI can. */
  actorSession: { id: string; costAlreadyCounted: number } | null;
  /** The snapshot from before the first iteration of the whole task, for "changed since the start". */
  taskStart: Snapshot | null;
}

/** Ends the loop with `failed`: something no further iteration can fix. */
export class LoopFailure extends Error {
  override name = 'LoopFailure';
}

/** Consecutive failed agent runs that changed nothing before the loop gives up. */
const STALL_LIMIT = 2;

type EndState = { status: Outcome; summary: string | null; confidence: number | null; error: string | null };

/** Loops running in this process, for an exit that cannot wait (see `endRunningLoopsNow`). */
const runningLoops = new Set<LoopRun>();

/**
 * Ends every loop of this process at once, synchronously: `session_end` written,
 * lock released, temporary index files removed. For a second Ctrl+C, a closed
 * terminal or an uncaught error, when the normal path cannot be awaited.
 */
export function endRunningLoopsNow(status: Outcome, error: string | null = null): void {
  for (const loop of [...runningLoops]) loop.endNow({ status, summary: null, confidence: null, error });
  removeAllTemporaryIndexes();
}

/**
 * The actor–critic loop: snapshot, actor, snapshot, diff, critic, record, decide.
 * DONE ends with success; CONTINUE and ERROR feed back and loop; the iteration
 * limit, an interrupt or an unrecoverable failure end it too. Whatever happens, the
 * session ends with a `session_end` line. Errors thrown before the session exists
 * (the repository is busy, the sessions folder cannot be written) reach the caller.
 */
export async function runLoop(request: LoopRequest): Promise<RunSummary> {
  // Locked before the session file exists: a refused run leaves nothing behind.
  const lock = acquireRepositoryLock(request.repository);
  let writer: SessionWriter;
  const continuation = request.continuation;
  try {
    // Checked again under the lock: the loop that wrote it may have ended it since resume looked.
    if (continuation?.appendTo && hasEnded(continuation.appendTo)) {
      throw new LoopFailure(`Session ${continuation.sessionId} ended while resume was starting; run resume again to carry it on in a new session.`);
    }
    writer = continuation?.appendTo
      ? SessionWriter.reopen(continuation.appendTo)
      : SessionWriter.create(
          request.sessionsDirectory,
          {
            prompt: request.prompt,
            workingDir: request.workingDir,
            actorAgent: request.actor.launch.adapter.displayName,
            criticAgent: request.critic.launch.adapter.displayName,
            actorModel: request.actor.model,
            criticModel: request.critic.model,
            maxIterations: request.maxIterations,
            ...(continuation ? { resumedFrom: { sessionId: continuation.sessionId, afterIteration: continuation.lastIteration } } : {}),
          },
          new Date(),
        );
  } catch (error) {
    lock.release();
    throw error;
  }
  const run = new LoopRun(request, writer, lock);
  runningLoops.add(run);
  try {
    return await run.execute();
  } finally {
    runningLoops.delete(run);
  }
}

class LoopRun {
  private readonly sessionId: string;
  private readonly clockStart = performance.now();
  private sidecar: SidecarRecorder | null = null;
  private readonly history: FeedbackRecord[] = [];
  private loopStart: Snapshot | undefined;
  private completedIterations = 0;
  private actorStalls = 0;
  private criticFailures = 0;
  private readonly reportedLeftOut = new Set<string>();
  private summary: RunSummary | undefined;

  constructor(
    private readonly request: LoopRequest,
    private readonly writer: SessionWriter,
    private readonly lock: RepositoryLock,
  ) {
    this.sessionId = writer.sessionId;
    const continuation = request.continuation;
    if (continuation) {
      this.history.push(...continuation.history);
      this.completedIterations = continuation.lastIteration;
      this.loopStart = continuation.taskStart ?? undefined;
    }
    try {
      this.sidecar = SidecarRecorder.open(request.sidecarDirectory(this.sessionId));
    } catch (error) {
      // The session file is what matters; the record is a bonus.
      this.warn(`the sidecar record could not be opened (${(error as Error).message}); going on without it`);
    }
  }

  async execute(): Promise<RunSummary> {
    const { request } = this;
    this.emit({
      type: 'run_started',
      session_id: this.sessionId,
      session_file: this.writer.filePath,
      prompt: request.prompt,
      working_dir: request.workingDir,
      actor_agent: request.actor.launch.adapter.displayName,
      critic_agent: request.critic.launch.adapter.displayName,
      actor_model: request.actor.model,
      critic_model: request.critic.model,
      max_iterations: request.maxIterations,
      ...(request.continuation ? { resumed_from: request.continuation.sessionId, first_iteration: request.continuation.lastIteration + 1 } : {}),
    });
    let end: EndState;
    try {
      end = await this.iterate();
    } catch (error) {
      // Ctrl+C in a terminal reaches git's processes too: a snapshot can fail a moment
      // before the interrupt itself is seen. Give the signal that moment.
      if (!request.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 250));
      end = request.signal.aborted ? interrupted() : { status: 'failed', summary: null, confidence: null, error: (error as Error).message };
    }
    this.endNow(end);
    return this.summary!;
  }

  private async iterate(): Promise<EndState> {
    const { request } = this;
    for (let iteration = (request.continuation?.lastIteration ?? 0) + 1; ; iteration++) {
      if (request.signal.aborted) return interrupted();
      if (request.maxIterations !== null && iteration > request.maxIterations) {
        return { status: 'max_iterations_reached', summary: null, confidence: null, error: null };
      }
      const decision = await this.runIteration(iteration);
      if (!decision) return interrupted();
      if (decision.kind === 'DONE') return { status: 'success', summary: decision.summary, confidence: decision.confidence, error: null };
      this.history.push({ iteration, decision });
    }
  }

  /** One iteration; its decision, or null when it was interrupted before the review finished. */
  private async runIteration(iteration: number): Promise<CriticDecision | null> {
    const { request } = this;
    const runEnv = { CODELOOPS_SESSION_ID: this.sessionId, CODELOOPS_ITERATION: String(iteration) };
    this.emit({ type: 'iteration_started', iteration });
    const pre = await this.snapshot(iteration, 'pre');
    this.loopStart ??= pre;

    const prompt = this.history.length === 0 ? request.prompt : buildContinuationPrompt(request.prompt, this.history, iteration);
    // A resumed run's first actor picks up its own agent session, context and all.
    const agentSession = iteration === (request.continuation?.lastIteration ?? 0) + 1 && request.actor.launch.adapter.canResume ? request.continuation?.actorSession : null;
    this.emit({ type: 'phase', iteration, phase: 'actor', status: 'started' });
    const actor = await runAgent(
      request.actor.launch,
      { role: 'actor', prompt, model: request.actor.model, resumeSessionId: agentSession?.id ?? null },
      {
        costAlreadyCounted: agentSession?.costAlreadyCounted,
        signal: request.signal,
        onEvent: (event: AgentEvent) => this.emit({ type: 'agent_event', iteration, role: 'actor', event }),
        rawStdoutPath: this.sidecar?.rawStdoutPath(iteration, 'actor'),
        runEnv,
      },
    );
    this.agentFinished(iteration, 'actor', actor);
    this.emit({ type: 'phase', iteration, phase: 'actor', status: 'finished', duration_secs: actor.durationSecs });
    // Even an interrupted actor may have changed files: keep them restorable.
    const post = await this.snapshot(iteration, 'post');
    if (actor.interrupted || request.signal.aborted) return null;
    if (actor.exitCode === 127 && actor.failureReason?.startsWith('could not start')) throw new LoopFailure(`The actor ${actor.failureReason}`);

    this.emit({ type: 'phase', iteration, phase: 'diff', status: 'started' });
    const diffStarted = performance.now();
    const diff = await diffSnapshots(request.repository, pre.commit, post.commit);
    const sinceStart = (await changedPaths(request.repository, this.loopStart.tree, post.tree)).map((change) => change.path);
    this.emit({
      type: 'diff_captured',
      iteration,
      files_changed: diff.filesChanged,
      insertions: diff.insertions,
      deletions: diff.deletions,
      files: diff.files,
      truncated: diff.diffTruncated,
    });
    this.emit({ type: 'phase', iteration, phase: 'diff', status: 'finished', duration_secs: (performance.now() - diffStarted) / 1000 });

    this.emit({ type: 'phase', iteration, phase: 'critic', status: 'started' });
    const criticStarted = performance.now();
    const gitBeforeReview = await captureUserGitState(request.repository);
    const review = await reviewIteration(
      request.critic.launch,
      {
        task: request.prompt,
        iteration,
        maxIterations: request.maxIterations,
        actorTranscript: actor.transcript,
        actorStderr: actor.stderr,
        actorExitCode: actor.exitCode,
        actorFailure: actor.succeeded ? null : actor.failureReason,
        diff: diff.diff,
        filesChanged: diff.filesChanged,
        insertions: diff.insertions,
        deletions: diff.deletions,
        changedSinceStart: sinceStart,
        previousFeedback: this.history.length > 0 ? feedbackText(this.history.at(-1)!.decision) : null,
      },
      {
        model: request.critic.model,
        signal: request.signal,
        onEvent: (event) => this.emit({ type: 'agent_event', iteration, role: 'critic', event }),
        onRepair: (problem) => {
          this.warn(`iteration ${iteration}: the critic's answer could not be read (${problem}); asking once more`);
          this.emit({ type: 'phase', iteration, phase: 'critic_repair', status: 'started' });
        },
        rawStdoutPath: (attempt) => this.sidecar?.rawStdoutPath(iteration, 'critic', attempt),
        runEnv,
      },
    );
    for (const run of review.runs) this.agentFinished(iteration, 'critic', run);
    this.emit({ type: 'phase', iteration, phase: 'critic', status: 'finished', duration_secs: (performance.now() - criticStarted) / 1000 });
    const reverted = await this.undoCriticChanges(iteration, post, gitBeforeReview);
    // A review that finished counts, even if Ctrl+C came right after it.
    if (review.interrupted) return null;

    this.record(iteration, actor, diff, review, reverted);
    this.completedIterations = iteration;

    this.actorStalls = !actor.succeeded && diff.filesChanged === 0 ? this.actorStalls + 1 : 0;
    this.criticFailures = review.source === 'critic_failed' ? this.criticFailures + 1 : 0;
    if (review.decision.kind !== 'DONE') {
      if (this.actorStalls >= STALL_LIMIT) {
        throw new LoopFailure(`The actor failed ${STALL_LIMIT} times in a row without changing anything: ${actor.failureReason ?? 'unknown failure'}`);
      }
      if (this.criticFailures >= STALL_LIMIT) {
        throw new LoopFailure(`The critic failed ${STALL_LIMIT} times in a row: ${review.runs.at(-1)?.failureReason ?? 'unknown failure'}`);
      }
    }
    return review.decision;
  }

  private async snapshot(iteration: number, label: SnapshotLabel, withRef = true): Promise<Snapshot> {
    const ref = withRef ? snapshotRef(this.sessionId, iteration, label) : null;
    // The session's head follows the tree the loop leaves: pre and post, not the critic's (undone).
    const refs = ref ? [ref, ...(label === 'critic' ? [] : [sessionHeadRef(this.sessionId)])] : [];
    const taken = await takeSnapshot(this.request.repository, `codeloops ${this.sessionId} iteration ${iteration} ${label}`, refs);
    for (const folder of taken.leftOut) {
      if (this.reportedLeftOut.has(folder)) continue;
      this.reportedLeftOut.add(folder);
      this.warn(`${folder}/ is a git repository with no commit yet: git cannot record it, so snapshots, diffs and reviews leave it out until it has one`);
    }
    if (withRef) this.emit({ type: 'snapshot', iteration, label, commit: taken.commit, ref });
    return taken;
  }

  /** The critic reviews, it does not edit: anything it changed goes back, and the iteration says so. */
  private async undoCriticChanges(iteration: number, post: Snapshot, gitBefore: Awaited<ReturnType<typeof captureUserGitState>>): Promise<string[]> {
    const afterCritic = await this.snapshot(iteration, 'critic', false);
    if (afterCritic.tree !== post.tree) {
      const ref = snapshotRef(this.sessionId, iteration, 'critic');
      await pointRef(this.request.repository, ref, afterCritic.commit, `codeloops ${this.sessionId} iteration ${iteration} critic changes`);
      this.emit({ type: 'snapshot', iteration, label: 'critic', commit: afterCritic.commit, ref });
    }
    const report = await undoCriticChanges(this.request.repository, gitBefore, afterCritic, post);
    if (report.revertedFiles.length > 0) {
      const paths = report.revertedFiles;
      this.emit({ type: 'critic_changes_reverted', iteration, paths });
      this.warn(
        `iteration ${iteration}: the critic changed ${paths.length} file${paths.length === 1 ? '' : 's'} (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}); ` +
          `restored the actor's version. The critic's version (and anything edited by hand during the review) is kept at ${snapshotRef(this.sessionId, iteration, 'critic')}.`,
      );
    }
    if (report.revertedGitState.length > 0) this.warn(`iteration ${iteration}: the critic changed the repository; ${report.revertedGitState.join('; ')}`);
    return report.revertedFiles;
  }

  private record(iteration: number, actor: AgentRunResult, diff: DiffSummary, review: Review, reverted: string[]): void {
    const decision = review.decision;
    this.emit({
      type: 'critic_decision',
      iteration,
      decision: decision.kind,
      feedback: feedbackText(decision),
      summary: decision.kind === 'DONE' ? decision.summary : null,
      confidence: decision.kind === 'DONE' ? decision.confidence : null,
      remaining_issues: decision.kind === 'CONTINUE' ? decision.remainingIssues : [],
      source: review.source,
      critic_output: review.answer,
    });
    this.writer.writeIteration({
      iterationNumber: iteration,
      actorOutput: actor.transcript,
      actorStderr: actor.stderr,
      actorExitCode: actor.exitCode,
      actorDurationSecs: actor.durationSecs,
      gitDiff: diff.diff,
      gitFilesChanged: diff.filesChanged,
      gitInsertions: diff.insertions,
      gitDeletions: diff.deletions,
      criticDecision: decision.kind,
      feedback: feedbackText(decision),
      remainingIssues: decision.kind === 'CONTINUE' ? decision.remainingIssues : [],
      criticRevertedFiles: reverted,
    });
    this.emit({ type: 'iteration_finished', iteration, decision: decision.kind });
  }

  private agentFinished(iteration: number, role: 'actor' | 'critic', result: AgentRunResult): void {
    this.emit({
      type: 'agent_finished',
      iteration,
      role,
      exit_code: result.exitCode,
      duration_secs: result.durationSecs,
      succeeded: result.succeeded,
      failure_reason: result.failureReason,
      timed_out: result.timedOut,
      interrupted: result.interrupted,
      agent_session_id: result.agentSessionId,
      usage: result.usage,
      tool_calls: result.toolCalls,
    });
  }

  private warn(message: string): void {
    this.emit({ type: 'warning', message });
  }

  private emit(input: RunEventInput): void {
    const event = { ...input, timestamp: new Date().toISOString() } as RunEvent;
    if (this.sidecar) {
      try {
        this.sidecar.record(event);
      } catch (error) {
        this.sidecar = null; // say so once and go on: the session file is what matters
        this.warn(`the sidecar record stopped: ${(error as Error).message}`);
      }
    }
    this.request.onEvent?.(event);
  }

  /**
   * Writes `session_end` and lets go of everything, synchronously, exactly once:
   * from the normal path, or from an emergency exit that cannot wait.
   */
  endNow(end: EndState): void {
    if (this.summary) return;
    const totalDurationSecs = Math.round(((performance.now() - this.clockStart) / 1000) * 1000) / 1000;
    this.summary = {
      status: end.status,
      iterations: this.completedIterations,
      summary: end.summary,
      confidence: end.confidence,
      error: end.error,
      total_duration_secs: totalDurationSecs,
      session_id: this.sessionId,
      session_file: this.writer.filePath,
    };
    try {
      this.writer.writeEnd({
        outcome: end.status,
        iterations: this.completedIterations,
        summary: end.summary,
        confidence: end.confidence,
        durationSecs: totalDurationSecs,
        error: end.error,
      });
    } finally {
      this.writer.close();
      this.lock.release();
      this.emit({ type: 'run_finished', ...this.summary });
      this.sidecar?.close();
      this.sidecar = null;
    }
  }
}

/** Whether a session file's last line is a `session_end` (read from the end: its lines may be huge). */
function hasEnded(filePath: string): boolean {
  const fd = fs.openSync(filePath, 'r');
  try {
    const last = readLinesBackward(fd, fs.fstatSync(fd).size, 0).next();
    return !last.done && /^\{\s*"type"\s*:\s*"session_end"/.test(last.value.prefix(200));
  } finally {
    fs.closeSync(fd);
  }
}

function interrupted(): EndState {
  return { status: 'interrupted', summary: null, confidence: null, error: null };
}
