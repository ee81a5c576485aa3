import fs from 'node:fs';
import path from 'node:path';
import { runAgent, type AgentLaunch, type AgentRunResult } from '../agents/runAgent.js';
import type { PriceTable } from '../budget/prices.js';
import { SpendTracker, type Budget, type SpendTotals } from '../budget/spendTracker.js';
import { checkDirectory, commandRunRecord, runCheck, type CheckResult, type CheckSpec } from '../checks/runCheck.js';
import type { StallSettings } from '../config/runSettings.js';
import { feedbackText, type CriticDecision } from '../critic/criticDecision.js';
import { reviewIteration, type Review } from '../critic/reviewIteration.js';
import type { Repository } from '../git/repository.js';
import { pointRef, sessionHeadRef, snapshotRef, takeSnapshot, type Snapshot, type SnapshotLabel, type SnapshotResult } from '../git/snapshots.js';
import { removeAllTemporaryIndexes } from '../git/temporaryIndex.js';
import { appearedRepositories, changedPaths, diffSnapshots, type DiffSummary, type TreeEntryChange } from '../git/treeDiff.js';
import type { AppearedRepository } from '../critic/criticPrompt.js';
import { CodeloopsError, isCodeloopsError, type FailureCode } from '../sessionFormat/failures.js';
import {
  stampEvent,
  type LoopGuards,
  type RunEvent,
  type RunEventInput,
  type RunEventListener,
  type RunSummary,
  type Spend,
} from '../sessionFormat/runEvents.js';
import type { AgentEvent } from '../sessionFormat/agentEvents.js';
import type { Outcome, SessionHeader, StopReason } from '../sessionFormat/sessionLines.js';
import { SessionWriter } from '../sessionWriter/sessionWriter.js';
import { readLinesBackward } from '../sessions/lineReader.js';
import { appendReviewRecord } from '../sessionWriter/reviewRecorder.js';
import { withReviewLock } from './reviewLock.js';
import { SidecarRecorder } from '../sessionWriter/sidecarRecorder.js';
import { foldReview, isReviewEvent, keepForReview, pendingForActor } from '../sessions/reviewState.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';
import type { Finding, ReviewItems, RunControl } from '../sessionFormat/reviewRecords.js';
import { buildContinuationPrompt, type FeedbackRecord } from './actorPrompt.js';
import { addressedClaims, anchorFindings } from './reviewItems.js';
import { checkGate } from './checkGate.js';
import { captureUserGitState, revertChangesSince, type UserGitState } from './treeGuard.js';
import { acquireRepositoryLock, type RepositoryLock } from './repositoryLock.js';
import { StallDetector, type Stall } from './stallDetector.js';

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
  /** The project's checks, run after the actor and before the critic in every iteration. */
  checks: readonly CheckSpec[];
  budget: Budget;
  stall: StallSettings;
  /** Prices for the agents that report tokens but no cost. */
  prices: PriceTable;
  signal: AbortSignal;
  onEvent?: RunEventListener;
  /** Carry on an earlier session instead of starting afresh (`codeloops resume`). */
  continuation?: Continuation;
  /** One of a candidate group (`codeloops run --candidates`): recorded in `session_start`. */
  candidate?: { group: string; label: string };
  /**
   * Runs once, before the first iteration (a candidate's worktree setup). What it
   * reports is recorded; a `CodeloopsError` it throws ends the session `failed` with its code.
   */
  beforeFirstIteration?: (context: { report: (event: RunEventInput) => void; signal: AbortSignal }) => Promise<void>;
  /**
   * Review before continuing (`review = "pause"`): after each iteration that does not
   * end the loop, the loop waits for the user's word. Absent: it never waits.
   */
  waitForReview?: (iteration: number, signal: AbortSignal) => Promise<RunControl['type']>;
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
  /** What the sessions carried on used: the budget counts on from there, it does not start again. */
  spent: SpendTotals & { durationSecs: number };
  /** The sidecar folders of the sessions carried on, oldest first: their open findings and the user's review go on. */
  reviewSidecars: string[];
}

/** Consecutive failed agent runs that changed nothing before the loop gives up. */
const FAILURE_LIMIT = 2;
/** How often, at most, the running totals are reported while an agent works. */
const SPEND_EVENT_INTERVAL_MS = 1_000;

type EndState = {
  status: Outcome;
  summary: string | null;
  confidence: number | null;
  error: string | null;
  errorCode: FailureCode | null;
  stopReason: StopReason | null;
};

/** Loops running in this process, for an exit that cannot wait (see `endRunningLoopsNow`). */
const runningLoops = new Set<LoopRun>();

/**
 * Ends every loop of this process at once, synchronously: `session_end` written,
 * lock released, temporary index files removed. For a second Ctrl+C, a closed
 * terminal or an uncaught error, when the normal path cannot be awaited.
 */
export function endRunningLoopsNow(status: Outcome, failure: { error: string; code: FailureCode } | null = null): void {
  for (const loop of [...runningLoops])
    loop.endNow({ status, summary: null, confidence: null, error: failure?.error ?? null, errorCode: failure?.code ?? null, stopReason: null });
  removeAllTemporaryIndexes();
}

/**
 * The actor–critic loop: snapshot, actor, snapshot, diff, checks, critic, record,
 * decide. DONE ends with success (when the required checks passed); CONTINUE and
 * ERROR feed back and loop; the iteration limit, a budget crossed, a stall, an
 * interrupt or an unrecoverable failure end it too. Whatever happens, the
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
      throw new CodeloopsError(
        'session_ended',
        `Session ${continuation.sessionId} ended while resume was starting; resume it again to carry it on in a new session.`,
        { session_id: continuation.sessionId },
      );
    }
    writer = continuation?.appendTo
      ? SessionWriter.reopen(continuation.appendTo)
      : SessionWriter.create(request.sessionsDirectory, sessionHeader(request), new Date());
  } catch (error) {
    lock.release();
    throw error;
  }
  if (continuation && !continuation.appendTo) {
    // The session carried on says where: the feedback given on it went there (a finished session is not "open" for it again).
    try {
      appendReviewRecord(request.sidecarDirectory(continuation.sessionId), { type: 'carried_on', session_id: writer.sessionId });
    } catch {
      // a record, not the loop: the new session is what matters
    }
  }
  const run = new LoopRun(request, writer, lock);
  runningLoops.add(run);
  try {
    return await run.execute();
  } finally {
    runningLoops.delete(run);
  }
}

/** A guard that ended the loop while something ran: why, in words. */
interface GuardStop {
  reason: StopReason;
  message: string;
}

class LoopRun {
  private readonly sessionId: string;
  private readonly clockStart = performance.now();
  private sidecar: SidecarRecorder | null = null;
  private readonly history: FeedbackRecord[] = [];
  private loopStart: Snapshot | undefined;
  private completedIterations = 0;
  private actorFailures = 0;
  private criticFailures = 0;
  private readonly reportedLeftOut = new Set<string>();
  /** Nested repositories without a commit that this run's first snapshot left out: the user's, there before it. */
  private leftOutAtStart: readonly string[] | undefined;
  /** Folders that became nested repositories since the loop began, by path: the iteration each appeared in (null: before this run). */
  private readonly appeared = new Map<string, number | null>();
  private summary: RunSummary | undefined;
  /** Aborted by the user's interrupt and by a guard: every agent and check of the run listens to it. */
  private readonly stopper = new AbortController();
  /** Set when a guard (budget, time) stopped what was running. */
  private guardStop: GuardStop | null = null;
  private readonly spend: SpendTracker;
  private readonly earlierDurationSecs: number;
  private lastSpendEvent = 0;
  private durationTimer: NodeJS.Timeout | undefined;
  private readonly stalls: StallDetector;
  /** Said to the actor next time, after a stall was detected and the loop nudges instead of stopping. */
  private nudge: Stall | null = null;
  /** This run's events that say something about the review (findings, resolutions, what the actor was told and claims). */
  private readonly reviewEvents: RunEvent[] = [];
  /** The same from the sessions it carries on, read once. */
  private earlierReviewEvents: RunEvent[] | undefined;
  /** Time spent waiting for the user's review: it does not count against the time budget. */
  private pausedMs = 0;

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
    this.spend = new SpendTracker(request.prices, continuation?.spent);
    this.earlierDurationSecs = continuation?.spent.durationSecs ?? 0;
    this.stalls = new StallDetector(request.stall);
    if (request.signal.aborted) this.stopper.abort();
    else request.signal.addEventListener('abort', () => this.stopper.abort(), { once: true });
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
      ...sessionHeader(request),
      type: 'run_started',
      session_id: this.sessionId,
      session_file: this.writer.filePath,
      ...(request.continuation ? { first_iteration: request.continuation.lastIteration + 1 } : {}),
      guards: guardsOf(request),
    });
    this.watchTheClock();
    let end: EndState;
    try {
      await request.beforeFirstIteration?.({ report: (event) => this.emit(event), signal: this.stopper.signal });
      end = this.guardStop ? this.stoppedByGuard() : await this.iterate();
    } catch (error) {
      // Ctrl+C in a terminal reaches git's processes too: a snapshot can fail a moment
      // before the interrupt itself is seen. Give the signal that moment.
      if (!this.stopper.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 250));
      end = this.guardStop ? this.stoppedByGuard() : request.signal.aborted ? interrupted() : failed(error);
    } finally {
      clearTimeout(this.durationTimer);
    }
    this.endNow(end);
    return this.summary!;
  }

  private async iterate(): Promise<EndState> {
    const { request } = this;
    for (let iteration = (request.continuation?.lastIteration ?? 0) + 1; ; iteration++) {
      if (this.guardStop) return this.stoppedByGuard();
      if (request.signal.aborted) return interrupted();
      if (request.maxIterations !== null && iteration > request.maxIterations) return ended('max_iterations_reached');
      const outcome = await this.runIteration(iteration);
      if (this.guardStop) return this.stoppedByGuard();
      if (!outcome) return interrupted();
      const { decision, stall } = outcome;
      if (decision.kind === 'DONE') return { ...ended('success'), summary: decision.summary, confidence: decision.confidence };
      if (stall?.action === 'stop') {
        return { ...ended('failed'), error: `The loop went in circles: ${stall.reason}.`, errorCode: 'stalled', stopReason: 'stalled' };
      }
      this.nudge = stall;
      const iterationsLeft = request.maxIterations === null || iteration < request.maxIterations;
      if (request.waitForReview && iterationsLeft && (await this.pauseForReview(iteration, request.waitForReview)) === 'stop') return interrupted();
    }
  }

  /**
   * Waits for the user's review (`review = "pause"`): they read the diff, comment,
   * reject hunks, then say to go on or to stop. The lock says the loop is paused, so
   * that the user's own changes to the tree are allowed meanwhile; the time budget
   * does not run while the loop waits.
   */
  private async pauseForReview(iteration: number, wait: NonNullable<LoopRequest['waitForReview']>): Promise<RunControl['type']> {
    clearTimeout(this.durationTimer);
    this.lock.setPausedForReview(true);
    this.emit({ type: 'review_paused', iteration });
    const started = performance.now();
    let action: RunControl['type'] = 'stop';
    try {
      action = this.stopper.signal.aborted ? 'stop' : await wait(iteration, this.stopper.signal);
    } finally {
      // A review action under way (a hunk half undone) finishes before the loop touches the tree again.
      await withReviewLock(this.request.sidecarDirectory(this.sessionId), async () => this.lock.setPausedForReview(false)).catch((error: unknown) => {
        this.lock.setPausedForReview(false);
        this.warn(`going on without waiting for a review action: ${(error as Error).message}`);
      });
      const pausedMs = performance.now() - started;
      this.pausedMs += pausedMs;
      this.emit({ type: 'review_resumed', iteration, action, paused_secs: pausedMs / 1000 });
      this.watchTheClock();
    }
    return action;
  }

  /** One iteration; its decision (and a stall, if it showed one), or null when it was stopped before the review finished. */
  private async runIteration(iteration: number): Promise<{ decision: CriticDecision; stall: Stall | null } | null> {
    const { request } = this;
    const runEnv = {
      CODELOOPS_SESSION_ID: this.sessionId,
      CODELOOPS_ITERATION: String(iteration),
      ...(request.candidate ? { CODELOOPS_CANDIDATE: request.candidate.label } : {}),
    };
    this.emit({ type: 'iteration_started', iteration });
    const pre = await this.snapshot(iteration, 'pre');
    this.loopStart ??= pre;
    this.leftOutAtStart ??= pre.leftOut;

    const review = pendingForActor(await this.reviewState());
    const told = [...review.comments.map((item) => item.id), ...review.rejections.map((item) => item.id), ...review.findings.map((item) => item.id)];
    const prompt =
      this.history.length === 0 && !this.nudge && told.length === 0
        ? request.prompt
        : buildContinuationPrompt(request.prompt, this.history, iteration, this.nudge, review);
    this.nudge = null;
    if (told.length > 0) this.emit({ type: 'review_delivered', iteration, ids: told });
    // A resumed run's first actor picks up its own agent session, context and all.
    const agentSession =
      iteration === (request.continuation?.lastIteration ?? 0) + 1 && request.actor.launch.adapter.canResume ? request.continuation?.actorSession : null;
    this.emit({ type: 'phase', iteration, phase: 'actor', status: 'started' });
    const actorRun = `${iteration}/actor`;
    const actor = await runAgent(
      request.actor.launch,
      { role: 'actor', prompt, model: request.actor.model, resumeSessionId: agentSession?.id ?? null },
      {
        costAlreadyCounted: agentSession?.costAlreadyCounted,
        signal: this.stopper.signal,
        onEvent: (event: AgentEvent) => this.onAgentEvent(iteration, 'actor', actorRun, event),
        rawStdoutPath: this.sidecar?.rawStdoutPath(iteration, 'actor'),
        runEnv,
        groups: this.lock,
      },
    );
    this.agentFinished(iteration, 'actor', actorRun, actor);
    this.emit({ type: 'phase', iteration, phase: 'actor', status: 'finished', duration_secs: actor.durationSecs });
    // Even a stopped actor may have changed files: keep them restorable.
    const post = await this.snapshot(iteration, 'post');
    if (actor.interrupted || this.stopper.signal.aborted) return null;
    if (!actor.started) throw new CodeloopsError('agent_not_started', `The actor ${actor.failureReason ?? 'could not start'}`, { role: 'actor' });

    this.emit({ type: 'phase', iteration, phase: 'diff', status: 'started' });
    const diffStarted = performance.now();
    const diff = await diffSnapshots(request.repository, pre.commit, post.commit);
    const changesSinceStart = await changedPaths(request.repository, this.loopStart.tree, post.tree);
    const sinceStart = changesSinceStart.map((change) => change.path);
    this.emit({
      type: 'diff_captured',
      iteration,
      files_changed: diff.filesChanged,
      insertions: diff.insertions,
      deletions: diff.deletions,
      files: diff.files,
      truncated: diff.diffTruncated,
    });
    const nestedRepositories = await this.nestedRepositoriesSinceStart(iteration, changesSinceStart, pre, post);
    this.emit({ type: 'phase', iteration, phase: 'diff', status: 'finished', duration_secs: (performance.now() - diffStarted) / 1000 });

    const claimed = addressedClaims(actor.finalText ?? actor.transcript, new Set(told));
    if (claimed.length > 0) this.emit({ type: 'review_claimed', iteration, ids: claimed });
    const rejectionsTold = new Set(review.rejections.map((item) => item.id));
    const openReview = pendingForActor(await this.reviewState());

    const checks = await this.runChecks(iteration, post);
    if (checks === null) return null;

    this.emit({ type: 'phase', iteration, phase: 'critic', status: 'started' });
    const criticStarted = performance.now();
    const gitBeforeReview = await captureUserGitState(request.repository);
    let criticRuns = 0;
    const verdict = await reviewIteration(
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
        nestedRepositories,
        previousFeedback: this.history.length > 0 ? feedbackText(this.history.at(-1)!.decision) : null,
        checks,
        review: { ...openReview, rejections: review.rejections.filter((item) => rejectionsTold.has(item.id)) },
      },
      {
        model: request.critic.model,
        signal: this.stopper.signal,
        onEvent: (event) => this.onAgentEvent(iteration, 'critic', `${iteration}/critic/${criticRuns}`, event),
        onRepair: (problem) => {
          this.warn(`iteration ${iteration}: the critic's answer could not be read (${problem}); asking once more`);
          this.emit({ type: 'phase', iteration, phase: 'critic_repair', status: 'started' });
        },
        onRunFinished: (run) => this.agentFinished(iteration, 'critic', `${iteration}/critic/${criticRuns++}`, run),
        rawStdoutPath: (attempt) => this.sidecar?.rawStdoutPath(iteration, 'critic', attempt),
        runEnv,
        groups: this.lock,
      },
    );
    this.emit({ type: 'phase', iteration, phase: 'critic', status: 'finished', duration_secs: (performance.now() - criticStarted) / 1000 });
    const reverted = await this.putBack(iteration, 'critic', post, gitBeforeReview);
    // A review that finished counts, even if Ctrl+C came right after it.
    if (verdict.interrupted) return null;

    const gate = checkGate(verdict.decision, checks);
    if (gate.refused) this.emit({ type: 'done_refused', iteration, failed_checks: gate.failedRequired.map((check) => check.name) });
    const findings = await anchorFindings(
      request.repository,
      post.commit,
      iteration,
      verdict.findings,
      path.relative(request.repository.root, request.workingDir).split(path.sep).join('/'),
    );
    const openIds = new Set([...openReview.findings.map((item) => item.id), ...openReview.comments.map((item) => item.id)]);
    const resolved = verdict.resolved.filter((id) => openIds.has(id));
    this.record(iteration, actor, diff, verdict, gate.decision, checks, reverted, { findings, resolved });
    this.completedIterations = iteration;

    this.actorFailures = !actor.succeeded && diff.filesChanged === 0 ? this.actorFailures + 1 : 0;
    this.criticFailures = verdict.source === 'critic_failed' ? this.criticFailures + 1 : 0;
    if (gate.decision.kind === 'DONE') return { decision: gate.decision, stall: null };
    if (this.actorFailures >= FAILURE_LIMIT) {
      throw new CodeloopsError(
        'actor_failed',
        `The actor failed ${FAILURE_LIMIT} times in a row without changing anything: ${actor.failureReason ?? 'unknown failure'}`,
      );
    }
    if (this.criticFailures >= FAILURE_LIMIT) {
      throw new CodeloopsError(
        'critic_failed',
        `The critic failed ${FAILURE_LIMIT} times in a row: ${verdict.runs.at(-1)?.failureReason ?? 'unknown failure'}`,
      );
    }
    this.history.push({ iteration, decision: gate.decision, failedChecks: checks.filter((check) => !check.passed) });
    const stall = this.stalls.observe({
      iteration,
      filesChanged: diff.filesChanged,
      preTree: pre.tree,
      postTree: post.tree,
      // The runner's own words (a DONE refused, a critic that could not answer) are not the critic repeating itself.
      criticFeedback: verdict.source === 'critic_failed' || verdict.source === 'unreadable' ? null : feedbackText(verdict.decision),
      failedChecks: checks.filter((check) => !check.passed).map((check) => ({ name: check.name, output: check.output })),
    });
    if (stall) this.emit({ type: 'stall', iteration, action: stall.action, reason: stall.reason, since_iteration: stall.since });
    return { decision: gate.decision, stall };
  }

  /**
   * The project's checks, one after the other, on the tree the actor left. What they
   * change is put back (a check judges the tree, it does not fix it), so their results
   * hold for the tree that ends the iteration. Null when the run was stopped meanwhile.
   */
  private async runChecks(iteration: number, post: Snapshot): Promise<CheckResult[] | null> {
    const { request } = this;
    if (request.checks.length === 0) return [];
    this.emit({ type: 'phase', iteration, phase: 'checks', status: 'started' });
    const started = performance.now();
    const gitBefore = await captureUserGitState(request.repository);
    const results: CheckResult[] = [];
    for (const check of request.checks) {
      const cwd = checkDirectory(check, { root: request.repository.root, workingDir: request.workingDir });
      const result = await runCheck(check, { cwd, signal: this.stopper.signal, groups: this.lock });
      if (result.interrupted) break;
      results.push(result);
      this.emit({
        type: 'check_finished',
        iteration,
        name: result.name,
        required: result.required,
        ...commandRunRecord(result),
        tree: post.tree,
      });
    }
    this.emit({ type: 'phase', iteration, phase: 'checks', status: 'finished', duration_secs: (performance.now() - started) / 1000 });
    await this.putBack(iteration, 'checks', post, gitBefore);
    return this.stopper.signal.aborted ? null : results;
  }

  private onAgentEvent(iteration: number, role: 'actor' | 'critic', run: string, event: AgentEvent): void {
    this.emit({ type: 'agent_event', iteration, role, event });
    if (event.kind !== 'usage') return;
    this.spend.update(run, event.total, event.model ?? this.request[role].model);
    this.reportSpend(false);
    const crossed = this.spend.crossed(this.request.budget);
    if (crossed) this.stopFor(crossed, this.budgetMessage(crossed));
  }

  private agentFinished(iteration: number, role: 'actor' | 'critic', run: string, result: AgentRunResult): void {
    this.spend.finish(run, result.usage, result.model ?? this.request[role].model);
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
      drift: result.drift,
    });
    this.reportSpend(true);
    const crossed = this.spend.crossed(this.request.budget);
    if (crossed) this.stopFor(crossed, this.budgetMessage(crossed));
  }

  /** Ends the loop at the time cap, whatever is running then. */
  private watchTheClock(): void {
    const { maxDurationSecs } = this.request.budget;
    if (maxDurationSecs === null) return;
    const leftMs = (maxDurationSecs - this.activeSecs()) * 1000;
    const stop = () =>
      this.stopFor(
        'duration',
        `The loop ran for its whole time budget of ${formatSeconds(maxDurationSecs)}${this.earlierDurationSecs > 0 ? ' (counting the sessions it carries on)' : ''}.`,
      );
    if (leftMs <= 0) stop();
    else this.durationTimer = setTimeout(stop, leftMs);
  }

  /** A guard's stop: whatever runs is stopped as on an interrupt (its whole process group), and the loop ends `failed`. */
  private stopFor(reason: StopReason, message: string): void {
    if (this.guardStop) return;
    this.guardStop = { reason, message };
    this.warn(message);
    this.stopper.abort();
  }

  private stoppedByGuard(): EndState {
    const stop = this.guardStop!;
    return { ...ended('failed'), error: stop.message, errorCode: 'budget_exceeded', stopReason: stop.reason };
  }

  private budgetMessage(crossed: 'budget_cost' | 'budget_tokens'): string {
    const totals = this.spend.totals();
    const { budget } = this.request;
    if (crossed === 'budget_tokens')
      return `The agents used ${totals.tokens.toLocaleString('en-US')} tokens, over the budget of ${budget.maxTokens!.toLocaleString('en-US')}.`;
    const unpriced = this.spend.unpricedModels().map((model) => (model ? `"${model}"` : 'a model the agent did not name'));
    return (
      `The agents' cost reached $${(totals.costUsd ?? 0).toFixed(2)}${totals.costEstimated ? ' (partly estimated)' : ''}, over the budget of $${budget.maxCostUsd!.toFixed(2)}.` +
      (unpriced.length > 0
        ? ` The price table has no price for ${unpriced.join(', ')}: until its agent says what they cost, its tokens count at the table's highest price (a [prices."<model>"] entry in the config counts them at theirs).`
        : '')
    );
  }

  private currentSpend(): Spend {
    const totals = this.spend.totals();
    return {
      total_cost_usd: totals.costUsd,
      total_tokens: totals.tokens,
      cost_estimated: totals.costEstimated,
      elapsed_secs: this.activeSecs(),
    };
  }

  /** The time the budget counts: this run's and the carried-on sessions', without the pauses for review. */
  private activeSecs(): number {
    return this.earlierDurationSecs + (performance.now() - this.clockStart - this.pausedMs) / 1000;
  }

  /** The running totals, as they change: at most about once a second while an agent streams, and after each run. */
  private reportSpend(always: boolean): void {
    const now = performance.now();
    if (!always && now - this.lastSpendEvent < SPEND_EVENT_INTERVAL_MS) return;
    this.lastSpendEvent = now;
    this.emit({ type: 'spend', ...this.currentSpend() });
  }

  /**
   * Folders that became nested repositories (a `.git` folder or file) since the loop began:
   * git records them as a commit, so no diff shows what was written in them. Each is
   * reported once, when it appears; the critic is told of all of them every time.
   */
  private async nestedRepositoriesSinceStart(
    iteration: number,
    changesSinceStart: readonly TreeEntryChange[],
    pre: Snapshot,
    post: SnapshotResult,
  ): Promise<AppearedRepository[]> {
    const nested = appearedRepositories(changesSinceStart, { before: this.leftOutAtStart ?? [], after: post.leftOut });
    const fresh = nested.filter((repository) => !this.appeared.has(repository.path));
    // A resumed run finds those of the sessions it carries on there before its first iteration.
    const continuation = this.request.continuation;
    const earlier =
      continuation && iteration === continuation.lastIteration + 1 && fresh.length > 0 && this.loopStart
        ? appearedRepositories(await changedPaths(this.request.repository, this.loopStart.tree, pre.tree), { before: [], after: [] }).map(
            (repository) => repository.path,
          )
        : [];
    for (const repository of fresh) this.appeared.set(repository.path, earlier.includes(repository.path) ? null : iteration);
    const news = fresh.filter((repository) => this.appeared.get(repository.path) === iteration);
    if (news.length > 0) this.emit({ type: 'nested_repositories_appeared', iteration, repositories: news });
    return nested.map((repository) => ({ ...repository, iteration: this.appeared.get(repository.path) ?? null }));
  }

  private async snapshot(iteration: number, label: SnapshotLabel, withRef = true): Promise<SnapshotResult> {
    const ref = withRef ? snapshotRef(this.sessionId, iteration, label) : null;
    // The session's head follows the tree the loop leaves: pre and post, not the critic's or the checks' (undone).
    const refs = ref ? [ref, ...(label === 'critic' || label === 'checks' ? [] : [sessionHeadRef(this.sessionId)])] : [];
    const taken = await takeSnapshot(this.request.repository, `codeloops ${this.sessionId} iteration ${iteration} ${label}`, refs);
    for (const folder of taken.leftOut) {
      if (this.reportedLeftOut.has(folder)) continue;
      this.reportedLeftOut.add(folder);
      this.warn(`${folder}/ is a git repository with no commit yet: git cannot record it, so snapshots, diffs and reviews leave it out until it has one`);
    }
    if (withRef) this.emit({ type: 'snapshot', iteration, label, commit: taken.commit, ref });
    return taken;
  }

  /**
   * The critic reviews and the checks judge; neither changes the tree. Anything they
   * changed goes back to the actor's version (theirs is kept under a ref), and the
   * iteration says so.
   */
  private async putBack(iteration: number, who: 'critic' | 'checks', post: Snapshot, gitBefore: UserGitState): Promise<string[]> {
    const after = await this.snapshot(iteration, who, false);
    if (after.tree !== post.tree) {
      const ref = snapshotRef(this.sessionId, iteration, who);
      await pointRef(this.request.repository, ref, after.commit, `codeloops ${this.sessionId} iteration ${iteration} ${who} changes`);
      this.emit({ type: 'snapshot', iteration, label: who, commit: after.commit, ref });
    }
    const whom = who === 'critic' ? 'the critic' : 'the checks';
    const report = await revertChangesSince(this.request.repository, gitBefore, after, post, whom);
    if (report.revertedFiles.length > 0) {
      const paths = report.revertedFiles;
      if (who === 'critic') this.emit({ type: 'critic_changes_reverted', iteration, paths });
      this.warn(
        `iteration ${iteration}: ${whom} changed ${paths.length} file${paths.length === 1 ? '' : 's'} (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}); ` +
          `restored the actor's version. Their version is kept at ${snapshotRef(this.sessionId, iteration, who)}.`,
      );
    }
    if (report.revertedGitState.length > 0) this.warn(`iteration ${iteration}: ${whom} changed the repository; ${report.revertedGitState.join('; ')}`);
    return report.revertedFiles;
  }

  private record(
    iteration: number,
    actor: AgentRunResult,
    diff: DiffSummary,
    review: Review,
    decision: CriticDecision,
    checks: readonly CheckResult[],
    reverted: string[],
    critique: { findings: Finding[]; resolved: string[] },
  ): void {
    const remainingIssues = decision.kind === 'CONTINUE' ? decision.remainingIssues : [];
    const failedChecks = checks.filter((check) => !check.passed).map((check) => check.name);
    this.emit({
      type: 'critic_decision',
      iteration,
      decision: decision.kind,
      feedback: feedbackText(decision),
      summary: decision.kind === 'DONE' ? decision.summary : null,
      confidence: decision.kind === 'DONE' ? decision.confidence : null,
      remaining_issues: remainingIssues,
      source: review.source,
      critic_output: review.answer,
      findings: critique.findings,
      resolved: critique.resolved,
    });
    this.writer.writeIteration({
      iteration_number: iteration,
      actor_output: actor.transcript,
      actor_stderr: actor.stderr,
      actor_exit_code: actor.exitCode,
      actor_duration_secs: actor.durationSecs,
      git_diff: diff.diff,
      git_files_changed: diff.filesChanged,
      critic_decision: decision.kind,
      feedback: feedbackText(decision),
      git_insertions: diff.insertions,
      git_deletions: diff.deletions,
      // Extra fields that say nothing are left out, as other writers leave them out.
      remaining_issues: remainingIssues.length > 0 ? remainingIssues : undefined,
      critic_reverted_files: reverted.length > 0 ? reverted : undefined,
      failed_checks: failedChecks.length > 0 ? failedChecks : undefined,
      critic_verdict: decision.kind === review.decision.kind ? undefined : review.decision.kind,
      findings: critique.findings.length > 0 ? critique.findings : undefined,
    });
    this.emit({ type: 'iteration_finished', iteration, decision: decision.kind });
  }

  /**
   * Where the review stands now: this run's findings and what its actors were told,
   * with the sessions it carries on, and the user's comments and rejections, read
   * again each time (the user adds them from another process while the loop runs).
   */
  private async reviewState(): Promise<ReviewItems> {
    const earlier = this.request.continuation?.reviewSidecars ?? [];
    this.earlierReviewEvents ??= (await Promise.all(earlier.map((directory) => readSidecarEvents(directory, undefined, keepForReview)))).flat();
    const directories = new Set([...earlier, this.request.sidecarDirectory(this.sessionId)]);
    const records = (await Promise.all([...directories].map((directory) => readReviewRecords(directory)))).flat();
    return foldReview([...this.earlierReviewEvents, ...this.reviewEvents], records);
  }

  private warn(message: string): void {
    this.emit({ type: 'warning', message });
  }

  private emit(input: RunEventInput): void {
    const event = stampEvent(input);
    if (isReviewEvent(event)) this.reviewEvents.push(event);
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
    clearTimeout(this.durationTimer);
    const totalDurationSecs = Math.round(((performance.now() - this.clockStart) / 1000) * 1000) / 1000;
    const totals = this.spend.totals();
    this.summary = {
      status: end.status,
      iterations: this.completedIterations,
      summary: end.summary,
      confidence: end.confidence,
      error: end.error,
      error_code: end.errorCode,
      stop_reason: end.stopReason,
      total_cost_usd: totals.costUsd,
      total_tokens: totals.tokens,
      cost_estimated: totals.costEstimated,
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
        duration_secs: totalDurationSecs,
        error: end.error ?? undefined,
        error_code: end.errorCode ?? undefined,
        stop_reason: end.stopReason ?? undefined,
        total_cost_usd: totals.costUsd ?? undefined,
        total_tokens: totals.tokens,
        cost_estimated: totals.costEstimated || undefined,
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

function ended(status: Outcome): EndState {
  return { status, summary: null, confidence: null, error: null, errorCode: null, stopReason: null };
}

function interrupted(): EndState {
  return ended('interrupted');
}

/** A loop that cannot go on: an expected failure says which; anything else is a git failure or a bug. */
function failed(error: unknown): EndState {
  const code: FailureCode = isCodeloopsError(error) ? error.code : 'internal';
  return { ...ended('failed'), error: (error as Error).message, errorCode: code };
}

/** The guards of a run, as its `run_started` event records them. */
function guardsOf(request: LoopRequest): LoopGuards {
  return {
    checks: request.checks.map((check) => ({
      name: check.name,
      command: check.run,
      required: check.required,
      ...(check.folder !== undefined && { folder: check.folder }),
    })),
    max_cost_usd: request.budget.maxCostUsd,
    max_tokens: request.budget.maxTokens,
    max_duration_secs: request.budget.maxDurationSecs,
    stall_after: request.stall.unchangedIterations,
    stall_action: request.stall.action,
    review: request.waitForReview ? 'pause' : 'off',
  };
}

function formatSeconds(seconds: number): string {
  return seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

/** The session's header, as its `session_start` line and its `run_started` event carry it. */
function sessionHeader(request: LoopRequest): SessionHeader {
  const continuation = request.continuation;
  return {
    prompt: request.prompt,
    working_dir: request.workingDir,
    actor_agent: request.actor.launch.adapter.displayName,
    critic_agent: request.critic.launch.adapter.displayName,
    actor_model: request.actor.model,
    critic_model: request.critic.model,
    max_iterations: request.maxIterations,
    ...(continuation ? { resumed_from: continuation.sessionId, resumed_after_iteration: continuation.lastIteration } : {}),
    ...(request.candidate ? { candidate_group: request.candidate.group, candidate: request.candidate.label } : {}),
  };
}
