import fs from 'node:fs';
import path from 'node:path';
import type { AgentTurn } from '../agents/agentLimits.js';
import { runAgent, type AgentLaunch, type AgentRunResult } from '../agents/runAgent.js';
import type { PriceTable } from '../budget/prices.js';
import type { Budget, SpendTotals } from '../budget/spendTracker.js';
import { checkDirectory, commandRunRecord, timingOf, type CheckResult, type CheckSpec, type CheckTiming } from '../checks/runCheck.js';
import { DEFAULT_LIMITS, type LimitSettings, type StallSettings, type VerifySettings } from '../config/runSettings.js';
import { askCritic, type CriticVerdict } from '../critic/askCritic.js';
import { CriticEvidenceFold, ranSuccessfully } from '../critic/criticEvidence.js';
import { feedbackText, needsInputDecision, type CriticDecision, type ParsedDecision } from '../critic/criticDecision.js';
import type { AppearedRepository, CriticPromptInput } from '../critic/criticPrompt.js';
import type { Repository } from '../git/repository.js';
import { pointRef, sessionHeadRef, snapshotRef, takeSnapshot, type Snapshot, type SnapshotLabel, type SnapshotResult } from '../git/snapshots.js';
import { removeAllTemporaryIndexes } from '../git/temporaryIndex.js';
import { changedPaths, diffSnapshots, type DiffSummary, type TreeEntryChange } from '../git/treeDiff.js';
import type { AgentEvent } from '../sessionFormat/agentEvents.js';
import { CodeloopsError, isCodeloopsError, type FailureCode, type FailureDetails } from '../sessionFormat/failures.js';
import type { NeedsInput } from '../sessionFormat/needsInput.js';
import type { Finding, ReviewAction, ReviewItems, RunControl } from '../sessionFormat/reviewRecords.js';
import { worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { stampEvent, type IterationPhase, type LoopGuards, type RunEventInput, type RunEventListener, type RunSummary } from '../sessionFormat/runEvents.js';
import type { EvalTag, Outcome, SessionHeader, StopReason } from '../sessionFormat/sessionLines.js';
import type { VerifiedBy } from '../sessionFormat/testResults.js';
import type { RequirementStatus, UnverifiedDone } from '../sessionFormat/verification.js';
import { readLinesBackward } from '../sessions/lineReader.js';
import { appendReviewRecord } from '../sessionWriter/reviewRecorder.js';
import { SessionWriter } from '../sessionWriter/sessionWriter.js';
import { SidecarRecorder } from '../sessionWriter/sidecarRecorder.js';
import { actorQuestion, buildContinuationPrompt, type FeedbackRecord } from './actorPrompt.js';
import { checkGate, isVerified } from './checkGate.js';
import { removeIsolatedWorktreesNow, runCheckInLoopTree, runIsolatedCheck, type IsolationSettings } from './isolatedCheck.js';
import { LoopGuard, type GuardStop } from './loopGuard.js';
import { NestedRepositoryWatch } from './nestedRepositories.js';
import { acquireRepositoryLock, type RepositoryLock } from './repositoryLock.js';
import { addressedClaims, anchorFindings } from './reviewItems.js';
import { itemIds, resolvedAmong, ReviewLedger } from './reviewLedger.js';
import { withReviewLock } from './reviewLock.js';
import { StallDetector, type Stall } from './stallDetector.js';
import { captureUserGitState, revertChangesSince, type UserGitState } from './treeGuard.js';
import { DoneVerification, NO_PROTECTION, type DoneJudgement, type Protection } from './doneVerification.js';
import type { TestBaseline } from './testOracle.js';
import { ConfigFilesWatch } from './configFilesWatch.js';
import { LimitWaits, type WaitingAgent } from './outlastLimits.js';
import { RequirementsChecklist, type CarriedChecklist, type JudgedRequirements } from './requirementsChecklist.js';

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
  /** Where a session's sidecar folder is, given its id. */
  sidecarDirOf: (sessionId: string) => string;
  /** The project's checks, run after the actor and before the critic in every iteration (`when = "done"`: after a DONE). */
  checks: readonly CheckSpec[];
  /** Where isolated checks make their clean worktrees and how they are readied; absent: the default folder, no `[worktree]` copy or setup. */
  isolation?: IsolationSettings;
  budget: Budget;
  stall: StallSettings;
  /** `[limits]`: agents' usage limits and API trouble waited out (`outlastLimits.ts`); absent: the defaults. */
  limits?: LimitSettings;
  /** Prices for the agents that report tokens but no cost. */
  prices: PriceTable;
  /** The user's interrupt. */
  signal: AbortSignal;
  onEvent?: RunEventListener;
  /** Carry on an earlier session instead of starting afresh (`codeloops resume`). */
  continuation?: Continuation;
  /** One of a candidate group (`codeloops run --candidates`): recorded in `session_start`. */
  candidate?: { group: string; label: string };
  /** One run of an eval (`codeloops eval`): recorded in `session_start`. */
  eval?: EvalTag;
  /**
   * Runs once, before the first iteration (a candidate's worktree setup). What it
   * reports is recorded; a `CodeloopsError` it throws ends the session `failed` with its code.
   */
  beforeFirstIteration?: (context: { report: (event: RunEventInput) => void; signal: AbortSignal }) => Promise<void>;
  /**
   * Review before continuing (`review = "pause"`): after each iteration that does not
   * end the loop, the loop waits for the user's word. Absent: it never waits.
   */
  waitForReview?: (iteration: number, signal: AbortSignal) => Promise<ReviewAction>;
  /**
   * When the critic or the actor needs the user (`needs_input`): asks them, and the
   * loop waits as for a review. Their answer goes to the next actor as their words;
   * null: nobody can answer after all (the channel closed). Absent (headless: no
   * terminal, no control channel): the loop ends `failed` with `needs_input`.
   */
  askUser?: (iteration: number, needs: NeedsInput, signal: AbortSignal) => Promise<RunControl | null>;
  /**
   * What the actor may not weaken to pass the gate (`[verify]`): its changes to tests,
   * to what the checks run, to CI and to codeloops.toml are judged after every actor
   * run, and a weakening refuses DONE. Absent: not verified (`--no-verify`).
   */
  verify?: VerifySettings;
  /** The config files the run was set up from: an actor that edits one is told nothing changes for this run. */
  configFiles?: readonly string[];
}

/** What a resumed run takes over from the session it carries on; see `resume/resumePlan.ts`. */
export interface Continuation {
  /** The session carried on. */
  sessionId: string;
  /** Its file, when it has no `session_end`: the run appends to it. Otherwise a new linked session is started. */
  appendTo: string | null;
  /** The critic's decisions so far, oldest first: the actor is told the latest and the rest in brief. */
  history: FeedbackRecord[];
  /** The last iteration recorded; the run goes on with the next number. */
  lastIteration: number;
  /** The actor's own agent session to resume on the first iteration, where its CLI can. */
  actorSession: { id: string; costAlreadyCounted: number } | null;
  /** The snapshot from before the first iteration of the whole task, for "changed since the start". */
  taskStart: Snapshot | null;
  /**
   * What the sessions carried on used, at the run's prices (a session that ended without
   * its totals, a crash's, is priced from its agents' usage): the budget counts on from
   * there, it does not start again.
   */
  spentAt(prices: PriceTable): SpendTotals & { durationSecs: number };
  /** The sidecar folders of the sessions carried on, oldest first: their open findings and the user's review go on. */
  earlierSidecarDirs: string[];
  /**
   * After a rollback to before this iteration, the critic's review of it and later ones
   * no longer counts: its findings were about files that are gone. Absent: all counts.
   */
  reviewBefore?: number;
  /** The user's answer to the question the last iteration asked (`codeloops resume --answer`). */
  answer?: string;
  /** The task's requirements as last judged: the critic's list, each one's status, go on. */
  checklist?: CarriedChecklist;
  /** The start's tests as the task's first run found them: not run again on the same start tree. */
  baseline?: TestBaseline;
}

/** Consecutive failed agent runs that changed nothing before the loop gives up. */
const FAILURE_LIMIT = 2;

type EndState = {
  status: Outcome;
  summary: string | null;
  confidence: number | null;
  error: string | null;
  errorCode: FailureCode | null;
  /** The failure's facts (`CodeloopsError.details`: a usage limit's `until`); null: none. */
  errorDetails: FailureDetails | null;
  stopReason: StopReason | null;
};

/** The loops this process runs, for an exit that cannot wait (see `endLoopsInThisProcessNow`). */
const loopsInThisProcess = new Set<LoopRun>();

/**
 * Ends every loop of this process at once, synchronously: `session_end` written,
 * lock released, temporary index files removed. For a second Ctrl+C, a closed
 * terminal or an uncaught error, when the normal path cannot be awaited.
 */
export function endLoopsInThisProcessNow(status: Outcome, failure: { error: string; code: FailureCode } | null = null): void {
  for (const loop of [...loopsInThisProcess]) loop.endNow({ ...ended(status), error: failure?.error ?? null, errorCode: failure?.code ?? null });
  removeAllTemporaryIndexes();
  removeIsolatedWorktreesNow();
}

/**
 * Runs the actor–critic loop on one session, from the repository lock to its
 * `session_end` (see `LoopRun`). Errors thrown before the session exists (the
 * repository is busy, the sessions folder cannot be written) reach the caller.
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
      appendReviewRecord(request.sidecarDirOf(continuation.sessionId), { type: 'carried_on', session_id: writer.sessionId });
    } catch {
      // a record, not the loop: the new session is what matters
    }
  }
  const run = new LoopRun(request, writer, lock);
  loopsInThisProcess.add(run);
  try {
    return await run.execute();
  } finally {
    loopsInThisProcess.delete(run);
  }
}

/** What one iteration ended with: its decision, and a stall if it showed one. */
interface IterationEnd {
  decision: CriticDecision;
  stall: Stall | null;
}

/** What the actor is told in one iteration: its prompt and the review items in it. */
interface ActorBrief {
  prompt: string;
  told: ReviewItems;
  toldIds: string[];
}

/** What the actor changed in one iteration, as the critic is shown it. */
interface IterationChange {
  diff: DiffSummary;
  /** Paths changed since the task began. */
  sinceStart: string[];
  /** The same, as git's path changes from the task's first tree. */
  sinceStartChanges: TreeEntryChange[];
  nestedRepositories: AppearedRepository[];
}

/** Everything an iteration produced, from its snapshots to the critic's verdict. */
interface IterationWork {
  pre: SnapshotResult;
  post: SnapshotResult;
  actor: AgentRunResult;
  change: IterationChange;
  checks: CheckResult[];
  protection: Protection;
  /** The start's tests on the iteration's tree, at a DONE the checks let through; null: not run (no DONE, no baseline, not verified). */
  oracle: DoneJudgement | null;
  verdict: CriticVerdict;
  /** Files the critic changed, put back to the actor's version. */
  reverted: string[];
}

/**
 * One run of the actor–critic loop on one session. Each iteration: snapshot, brief
 * the actor, run it, snapshot, diff, run the checks, ask the critic, record, decide.
 * DONE ends with success (when the required checks passed); CONTINUE and ERROR feed
 * back and loop; the iteration limit, a guard (budget, time: `LoopGuard`), a stall,
 * an interrupt or an unrecoverable failure end it too. Whatever happens, the session
 * ends with a `session_end` line, written exactly once (`endNow`).
 */
class LoopRun {
  private readonly sessionId: string;
  private readonly sidecarDir: string;
  private readonly firstIteration: number;
  private sidecar: SidecarRecorder | null = null;
  /** The budget and the clock, and the signal every agent and check of the run listens to. */
  private readonly guard: LoopGuard;
  private readonly ledger: ReviewLedger;
  private readonly stalls: StallDetector;
  /** The critic's decisions so far, oldest first. */
  private readonly history: FeedbackRecord[] = [];
  /** The snapshot from before the task's first iteration: "changed since the start" counts from it. */
  private taskStart: Snapshot | undefined;
  private completedIterations = 0;
  private actorFailures = 0;
  private criticFailures = 0;
  /** Said to the actor next time, after a stall was detected and the loop nudges instead of stopping. */
  private nudge: Stall | null = null;
  private readonly nested: NestedRepositoryWatch;
  /** What a DONE rests on: the actor's weakenings, the start's tests on the final code; null when the run is not verified. */
  private readonly verification: DoneVerification | null;
  private readonly configFiles: ConfigFilesWatch;
  /** The task's requirements, each judged with evidence at every verdict (when the run is verified). */
  private readonly requirements: RequirementsChecklist;
  /** Agents' usage limits and API trouble, waited out within `[limits]`. */
  private readonly limitWaits: LimitWaits;
  /** Whether the last iteration's verdict rested on more than the critic's word (a passing required check, a command the critic ran). */
  private lastVerified = false;
  /** What stood behind the last verdict, for a DONE that stands; null when the run is not verified. */
  private lastVerifiedBy: VerifiedBy | null = null;
  private summary: RunSummary | undefined;

  constructor(
    private readonly request: LoopRequest,
    private readonly writer: SessionWriter,
    private readonly lock: RepositoryLock,
  ) {
    this.sessionId = writer.sessionId;
    this.sidecarDir = request.sidecarDirOf(this.sessionId);
    const continuation = request.continuation;
    this.firstIteration = (continuation?.lastIteration ?? 0) + 1;
    if (continuation) {
      this.history.push(
        ...continuation.history.map((record, index, all) =>
          index === all.length - 1 && continuation.answer !== undefined ? { ...record, answer: continuation.answer } : record,
        ),
      );
      this.completedIterations = continuation.lastIteration;
      this.taskStart = continuation.taskStart ?? undefined;
    }
    this.guard = new LoopGuard({
      budget: request.budget,
      prices: request.prices,
      earlier: continuation?.spentAt(request.prices),
      interrupt: request.signal,
      report: (event) => this.emit(event),
    });
    this.ledger = new ReviewLedger({ earlier: continuation?.earlierSidecarDirs ?? [], own: this.sidecarDir }, continuation?.reviewBefore);
    this.stalls = new StallDetector(request.stall);
    this.nested = new NestedRepositoryWatch(request.repository, continuation ? this.firstIteration : null);
    this.verification = request.verify ? this.doneVerification(request.verify) : null;
    this.configFiles = new ConfigFilesWatch(request.configFiles ?? []);
    this.requirements = new RequirementsChecklist(request.prompt, continuation?.checklist);
    this.limitWaits = new LimitWaits(request.limits ?? DEFAULT_LIMITS, {
      signal: this.guard.signal,
      // The one place a wait begins or goes on; its event is what the viewers, the status bar and `[notify]`'s `waiting` hear.
      onWaiting: (who, reason, until, tries) =>
        this.emit({ type: 'agent_waiting', iteration: who.iteration, role: who.role, agent: who.agent, reason, until: until.toISOString(), tries }),
      pauseClock: () => this.guard.pauseClock(),
      resumeClock: () => {
        this.guard.resumeClock();
        this.guard.startClock();
      },
    });
    try {
      this.sidecar = SidecarRecorder.open(this.sidecarDir);
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
      ...(request.continuation ? { first_iteration: this.firstIteration } : {}),
      guards: guardsOf(request),
    });
    this.guard.startClock();
    const answered = request.continuation?.answer;
    if (answered !== undefined) this.emit({ type: 'needs_input_answered', iteration: this.firstIteration - 1, answer: answered });
    let end: EndState;
    try {
      await request.beforeFirstIteration?.({ report: (event) => this.emit(event), signal: this.guard.signal });
      end = this.guard.stop ? stoppedBy(this.guard.stop) : await this.iterate();
    } catch (error) {
      // Ctrl+C in a terminal reaches git's processes too: a snapshot can fail a moment
      // before the interrupt itself is seen. Give the signal that moment.
      if (!this.guard.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 250));
      end = this.guard.stop ? stoppedBy(this.guard.stop) : request.signal.aborted ? interrupted() : failed(error);
    } finally {
      this.guard.stopClock();
      // The start tree's worktree goes, whatever happened; its removal never fails the run.
      await this.verification?.dispose().catch((error: unknown) => this.warn(`the start's tests' worktree could not be removed: ${(error as Error).message}`));
    }
    this.endNow(end);
    return this.summary!;
  }

  private async iterate(): Promise<EndState> {
    const { request } = this;
    for (let iteration = this.firstIteration; ; iteration++) {
      if (this.guard.stop) return stoppedBy(this.guard.stop);
      if (request.signal.aborted) return interrupted();
      if (request.maxIterations !== null && iteration > request.maxIterations) return ended('max_iterations_reached');
      const outcome = await this.runIteration(iteration);
      if (this.guard.stop) return stoppedBy(this.guard.stop);
      if (!outcome) return interrupted();
      const { decision, stall } = outcome;
      if (decision.kind === 'DONE') return { ...ended('success'), summary: decision.summary, confidence: decision.confidence };
      if (stall?.action === 'stop') {
        return { ...ended('failed'), error: `The loop went in circles: ${stall.reason}.`, errorCode: 'stalled', stopReason: 'stalled' };
      }
      this.nudge = stall;
      const iterationsLeft = request.maxIterations === null || iteration < request.maxIterations;
      if (decision.kind === 'CONTINUE' && decision.needsInput && iterationsLeft) {
        const reply = request.askUser ? await this.pauseForAnswer(iteration, decision.needsInput, request.askUser) : null;
        if (reply === null) return needsInputEnd(decision.needsInput);
        if (reply.type === 'stop') return interrupted();
        continue;
      }
      if (request.waitForReview && iterationsLeft && (await this.pauseForReview(iteration, request.waitForReview)) === 'stop') return interrupted();
    }
  }

  /**
   * Waits for the user's review (`review = "pause"`): they read the diff, comment,
   * reject hunks, then say to go on or to stop. The lock says the loop is paused, so
   * that the user's own changes to the tree are allowed meanwhile; the time budget
   * does not run while the loop waits.
   */
  private async pauseForReview(iteration: number, wait: NonNullable<LoopRequest['waitForReview']>): Promise<ReviewAction> {
    return this.paused(iteration, undefined, async () => {
      const action = this.guard.signal.aborted ? 'stop' : await wait(iteration, this.guard.signal);
      return { reply: action, action };
    });
  }

  /**
   * Waits for the user's answer as for a review (the editor's notification, the
   * terminal's question): the answer goes to the next actor as their words. Null when
   * nobody can answer after all.
   */
  private async pauseForAnswer(iteration: number, needs: NeedsInput, ask: NonNullable<LoopRequest['askUser']>): Promise<RunControl | null> {
    return this.paused(iteration, needs, async () => {
      const reply: RunControl | null = this.guard.signal.aborted ? { type: 'stop' } : await ask(iteration, needs, this.guard.signal);
      if (reply?.type === 'answer') {
        this.history.at(-1)!.answer = reply.text;
        this.emit({ type: 'needs_input_answered', iteration, answer: reply.text });
      }
      return { reply, action: reply === null || reply.type === 'stop' ? 'stop' : 'continue' };
    });
  }

  /** A pause for the user: the clock stops, the lock lets them change the tree meanwhile, and the events say so. */
  private async paused<T>(iteration: number, needs: NeedsInput | undefined, wait: () => Promise<{ reply: T; action: ReviewAction }>): Promise<T> {
    this.guard.pauseClock();
    this.lock.setPausedForReview(true);
    this.emit({ type: 'review_paused', iteration, ...(needs && { needs_input: needs }) });
    let action: ReviewAction = 'stop';
    try {
      const waited = await wait();
      action = waited.action;
      return waited.reply;
    } finally {
      // A review action under way (a hunk half undone) finishes before the loop touches the tree again.
      await withReviewLock(this.sidecarDir, async () => this.lock.setPausedForReview(false)).catch((error: unknown) => {
        this.lock.setPausedForReview(false);
        this.warn(`going on without waiting for a review action: ${(error as Error).message}`);
      });
      const pausedSecs = this.guard.resumeClock();
      this.emit({ type: 'review_resumed', iteration, action, paused_secs: pausedSecs });
      this.guard.startClock();
    }
  }

  /** One iteration, as the class comment tells it; null when it was stopped before the critic's verdict came in. */
  private async runIteration(iteration: number): Promise<IterationEnd | null> {
    this.emit({ type: 'iteration_started', iteration });
    const pre = await this.snapshot(iteration, 'pre');
    this.taskStart ??= pre;
    // The start's tests run once on the task's first tree, beside the first actor.
    this.verification?.begin(this.taskStart, this.guard.signal);
    const brief = await this.briefActor(iteration);
    const actor = await this.runActor(iteration, brief.prompt);
    // Even a stopped actor may have changed files: keep them restorable.
    const post = await this.snapshot(iteration, 'post');
    if (actor.interrupted || this.guard.signal.aborted) return null;
    if (!actor.started) throw new CodeloopsError('agent_not_started', `The actor ${actor.failureReason ?? 'could not start'}`, { role: 'actor' });
    const change = await this.diff(iteration, pre, post);
    const protection = await this.judgeProtectedChanges(iteration, change, post);
    const openItems = await this.takeClaims(iteration, actor, brief);
    const question = actorQuestion(actor.finalText ?? actor.transcript);
    if (question !== null) return this.actorAsked(iteration, { pre, post, actor, change, protection }, openItems, question);
    const checks = await this.runChecks(iteration, post, 'each');
    if (checks === null) return null;
    const critic = await this.askCritic(iteration, { actor, change, checks, protection, openItems }, post);
    if (critic === null) return null;
    // The slow and the acceptance checks, then the start's tests on this code, judge only a DONE the others let through.
    const letThrough = (results: readonly CheckResult[]) =>
      critic.verdict.decision.kind === 'DONE' && !results.some((check) => check.required && !check.passed);
    const atDone = letThrough(checks) ? await this.runChecks(iteration, post, 'done') : [];
    if (atDone === null) return null;
    const oracle = letThrough(atDone) && letThrough(checks) ? await this.judgeByStartTests(iteration, post) : null;
    if (this.guard.signal.aborted) return null;
    const work: IterationWork = { pre, post, actor, change, checks: [...checks, ...atDone], protection, oracle, ...critic };
    const decision = await this.recordIteration(iteration, work, openItems);
    return this.decide(iteration, work, decision);
  }

  /**
   * The actor asked the user (`<needs_input>`): nothing to judge yet, so neither the
   * checks nor the critic run; the iteration is a CONTINUE that waits for the answer.
   */
  private async actorAsked(
    iteration: number,
    done: Pick<IterationWork, 'pre' | 'post' | 'actor' | 'change' | 'protection'>,
    openItems: ReviewItems,
    question: string,
  ): Promise<IterationEnd> {
    const verdict: CriticVerdict = {
      decision: needsInputDecision({ from: 'actor', question }),
      source: 'actor_asked',
      findings: [],
      resolved: [],
      requirements: [],
      answer: '',
      evidence: new CriticEvidenceFold().result(),
      runs: [],
      interrupted: false,
    };
    const work: IterationWork = { ...done, checks: [], oracle: null, verdict, reverted: [] };
    return this.decide(iteration, work, await this.recordIteration(iteration, work, openItems));
  }

  /** What the actor is told: the task alone, or with the feedback so far, a nudge and the open review items. */
  private async briefActor(iteration: number): Promise<ActorBrief> {
    const { request } = this;
    const told = await this.ledger.pending();
    const toldIds = itemIds(told);
    const prompt =
      this.history.length === 0 && !this.nudge && toldIds.length === 0
        ? request.prompt
        : buildContinuationPrompt(request.prompt, this.history, iteration, this.nudge, told);
    this.nudge = null;
    if (toldIds.length > 0) this.emit({ type: 'review_delivered', iteration, ids: toldIds });
    return { prompt, told, toldIds };
  }

  private async runActor(iteration: number, prompt: string): Promise<AgentRunResult> {
    const { request } = this;
    // A resumed run's first actor picks up its own agent session, context and all.
    const agentSession = iteration === this.firstIteration && request.actor.launch.adapter.canResume ? request.continuation?.actorSession : null;
    let runs = 0;
    const runTurn = async (turn: AgentTurn) => {
      // Each run its own: one run again after a limit is a new one for the budget.
      const run = runs++ === 0 ? `${iteration}/actor` : `${iteration}/actor/${runs}`;
      const actor = await runAgent(
        request.actor.launch,
        { role: 'actor', prompt: turn.prompt, model: request.actor.model, resumeSessionId: turn.resumeSessionId },
        {
          costAlreadyCounted: turn.costAlreadyCounted,
          signal: this.guard.signal,
          onEvent: (event: AgentEvent) => this.onAgentEvent(iteration, 'actor', run, event),
          rawStdoutPath: this.sidecar?.rawStdoutPath(iteration, 'actor'),
          runEnv: this.runEnv(iteration),
          groups: this.lock,
        },
      );
      this.agentFinished(iteration, 'actor', run, actor);
      return actor;
    };
    const first: AgentTurn = { prompt, resumeSessionId: agentSession?.id ?? null, costAlreadyCounted: agentSession?.costAlreadyCounted };
    const work = () => this.limitWaits.outlast(this.waitingAgent(iteration, 'actor'), first, runTurn);
    return this.phase(iteration, 'actor', work, (actor) => actor.durationSecs);
  }

  /** The iteration's diff, what changed since the task began, and the folders that became nested repositories. */
  private diff(iteration: number, pre: SnapshotResult, post: SnapshotResult): Promise<IterationChange> {
    const { repository } = this.request;
    return this.phase(iteration, 'diff', async () => {
      const diff = await diffSnapshots(repository, pre.commit, post.commit);
      const taskStart = this.taskStart ?? pre;
      const changesSinceStart = await changedPaths(repository, taskStart.tree, post.tree);
      this.emit({
        type: 'diff_captured',
        iteration,
        files_changed: diff.filesChanged,
        insertions: diff.insertions,
        deletions: diff.deletions,
        files: diff.files,
        truncated: diff.diffTruncated,
      });
      const nested = await this.nested.sinceStart(iteration, changesSinceStart, { taskStart, pre, post });
      if (nested.appearedNow.length > 0) this.emit({ type: 'nested_repositories_appeared', iteration, repositories: nested.appearedNow });
      return { diff, sinceStart: changesSinceStart.map((change) => change.path), sinceStartChanges: changesSinceStart, nestedRepositories: nested.all };
    });
  }

  /**
   * The actor's changes to what the gate rests on, against the task's first tree: each
   * that stands is reported, and those nobody accepted or allowed refuse DONE. An
   * edited config file changes nothing for this run: the actor is not left to think so.
   */
  private async judgeProtectedChanges(iteration: number, change: IterationChange, post: Snapshot): Promise<Protection> {
    for (const file of this.configFiles.changed()) this.warn(`${file} changed during the run; this run keeps the configuration it started with`);
    if (!this.verification || !this.taskStart) return NO_PROTECTION;
    const on = { startTree: this.taskStart.tree, tree: post.tree, changes: change.sinceStartChanges, nested: change.nestedRepositories };
    return this.verification.protection(iteration, on, this.guard.signal);
  }

  /** The start's tests on the DONE's tree, in the checks' phase. */
  private async judgeByStartTests(iteration: number, post: Snapshot): Promise<DoneJudgement | null> {
    const verification = this.verification;
    if (!verification || !(await verification.oracleJudges(this.guard.signal))) return null;
    return this.phase(iteration, 'checks', () => verification.judgeDone(iteration, post, this.guard.signal));
  }

  private doneVerification(verify: VerifySettings): DoneVerification {
    const { request } = this;
    return new DoneVerification({
      repository: request.repository,
      workingDir: request.workingDir,
      sessionId: this.sessionId,
      checks: request.checks,
      verify,
      isolation: request.isolation ?? defaultIsolation(),
      workingDirPrefix: workingDirPrefixOf(request),
      acceptedChanges: () => this.ledger.acceptedChanges(),
      acceptedTests: () => this.ledger.acceptedTests(),
      recordedBaseline: request.continuation?.baseline,
      emit: (event) => this.emit(event),
      groups: this.lock,
    });
  }

  /** Records the review items the actor says it addressed; what is open for the critic then. */
  private async takeClaims(iteration: number, actor: AgentRunResult, brief: ActorBrief): Promise<ReviewItems> {
    const claimed = addressedClaims(actor.finalText ?? actor.transcript, new Set(brief.toldIds));
    if (claimed.length > 0) this.emit({ type: 'review_claimed', iteration, ids: claimed });
    return this.ledger.openForCritic(brief.told);
  }

  /**
   * The project's checks due now (`timing`), one after the other, on the tree the
   * actor left, or an isolated one in a clean worktree of it. What they change is put
   * back (a check judges the tree, it does not fix it), so their results hold for the
   * tree that ends the iteration. Null when the run was stopped meanwhile.
   */
  private async runChecks(iteration: number, post: Snapshot, timing: CheckTiming): Promise<CheckResult[] | null> {
    const { request } = this;
    const due = request.checks.filter((check) => timingOf(check) === timing);
    if (due.length === 0) return [];
    const { gitBefore, results } = await this.phase(iteration, 'checks', async () => {
      const gitBefore = await captureUserGitState(request.repository);
      const results: CheckResult[] = [];
      for (const check of due) {
        const result = await this.runCheck(iteration, check, post);
        if (result.interrupted) break;
        results.push(result);
        this.emit({
          type: 'check_finished',
          iteration,
          name: result.name,
          required: result.required,
          ...commandRunRecord(result),
          tree: post.tree,
          ...traitsOf(check),
          ...(result.tests ? { tests: result.tests } : {}),
        });
      }
      return { gitBefore, results };
    });
    await this.putBack(iteration, 'checks', post, gitBefore);
    return this.guard.signal.aborted ? null : results;
  }

  private async runCheck(iteration: number, check: CheckSpec, post: Snapshot): Promise<CheckResult> {
    // An acceptance check judges the final code with the start's tests and dependencies, in a clean environment.
    const accepted = check.hidden && this.verification ? await this.verification.runAcceptance(check, post, this.guard.signal) : null;
    return accepted ?? this.runCheckAsConfigured(iteration, check, post);
  }

  private runCheckAsConfigured(iteration: number, check: CheckSpec, post: Snapshot): Promise<CheckResult> {
    const { request } = this;
    const options = { signal: this.guard.signal, groups: this.lock };
    const cwd = checkDirectory(check, { root: request.repository.root, workingDir: request.workingDir });
    if (!check.isolated) return runCheckInLoopTree(check, { root: request.repository.root, isolation: request.isolation }, { ...options, cwd });
    const at = {
      repository: request.repository,
      workingDir: request.workingDir,
      commit: post.commit,
      name: `${this.sessionId}-${iteration}-${request.checks.indexOf(check) + 1}`,
    };
    return runIsolatedCheck(check, at, request.isolation ?? defaultIsolation(), options);
  }

  /**
   * The critic's verdict on the iteration, and the files it changed (put back to the
   * actor's version). Null when it was stopped before its verdict came in: a verdict
   * that came in counts, even if Ctrl+C came right after it.
   */
  private async askCritic(
    iteration: number,
    evidence: Pick<IterationWork, 'actor' | 'change' | 'checks' | 'protection'> & { openItems: ReviewItems },
    post: Snapshot,
  ): Promise<Pick<IterationWork, 'verdict' | 'reverted'> | null> {
    const { request } = this;
    let criticRuns = 0;
    const { gitBefore, verdict } = await this.phase(iteration, 'critic', async () => {
      const gitBefore = await captureUserGitState(request.repository);
      const verdict = await askCritic(request.critic.launch, this.criticPromptInput(iteration, evidence), {
        model: request.critic.model,
        signal: this.guard.signal,
        onEvent: (event) => this.onAgentEvent(iteration, 'critic', `${iteration}/critic/${criticRuns}`, event),
        onRepair: (problem) => {
          this.warn(`iteration ${iteration}: the critic's answer could not be read (${problem}); asking once more`);
          this.emit({ type: 'phase', iteration, phase: 'critic_repair', status: 'started' });
        },
        onRunFinished: (run) => this.agentFinished(iteration, 'critic', `${iteration}/critic/${criticRuns++}`, run),
        rawStdoutPath: (attempt) => this.sidecar?.rawStdoutPath(iteration, 'critic', attempt),
        runEnv: this.runEnv(iteration),
        groups: this.lock,
        outlastLimits: (turn, runTurn) =>
          this.limitWaits.outlast(this.waitingAgent(iteration, 'critic'), turn, runTurn, (failed) =>
            this.agentFinished(iteration, 'critic', `${iteration}/critic/${criticRuns++}`, failed),
          ),
        ...(request.verify && {
          isConcrete: (continued: ParsedDecision) => namesSomethingConcrete(continued, evidence),
          onAskSpecific: () => this.warn(`iteration ${iteration}: the critic asked for more work but named nothing concrete; asking it once to be specific`),
        }),
      });
      return { gitBefore, verdict };
    });
    const reverted = await this.putBack(iteration, 'critic', post, gitBefore);
    return verdict.interrupted ? null : { verdict, reverted };
  }

  private criticPromptInput(
    iteration: number,
    evidence: Pick<IterationWork, 'actor' | 'change' | 'checks' | 'protection'> & { openItems: ReviewItems },
  ): CriticPromptInput {
    const { actor, change, checks, protection, openItems } = evidence;
    return {
      task: this.request.prompt,
      iteration,
      maxIterations: this.request.maxIterations,
      actorTranscript: actor.transcript,
      actorStderr: actor.stderr,
      actorExitCode: actor.exitCode,
      actorFailure: actor.succeeded ? null : actor.failureReason,
      diff: change.diff.diff,
      filesChanged: change.diff.filesChanged,
      insertions: change.diff.insertions,
      deletions: change.diff.deletions,
      changedSinceStart: change.sinceStart,
      nestedRepositories: change.nestedRepositories,
      previousFeedback: this.history.length > 0 ? feedbackText(this.history.at(-1)!.decision) : null,
      checks,
      protectedChanges: protection.standing,
      reviewItems: openItems,
      ...(this.request.verify && { requirements: this.requirements.forCritic() }),
    };
  }

  /**
   * What counts of the verdict, recorded in the session and the events: DONE only with
   * the required checks passing, the findings anchored on the tree the critic saw, the
   * items it resolved among those open. The decision that counts.
   */
  private async recordIteration(iteration: number, work: IterationWork, openItems: ReviewItems): Promise<CriticDecision> {
    const { request } = this;
    const failedTests = work.oracle?.judgement.findings ?? [];
    const verified = isVerified(work.checks, ranSuccessfully(work.verdict.evidence), work.oracle !== null && failedTests.length === 0);
    const requirements = await this.judgeRequirements(iteration, work);
    const gate = checkGate(work.verdict.decision, work.checks, {
      weakened: work.protection.weakened,
      unverified: this.unverifiedDone(work, verified),
      unmetRequirements: requirements?.open,
      failedTests,
    });
    if (gate.refused) {
      this.emit({
        type: 'done_refused',
        iteration,
        failed_checks: gate.failedRequired.map((check) => check.name),
        ...(gate.failedTests.length > 0 && { failed_tests: gate.failedTests.map((finding) => finding.id) }),
        ...(gate.weakened.length > 0 && { protected_changes: gate.weakened }),
        ...(gate.unverified && { unverified: gate.unverified }),
        ...(gate.unmetRequirements.length > 0 && { unmet_requirements: gate.unmetRequirements.map((requirement) => requirement.id) }),
      });
    }
    this.lastVerified = verified;
    const criticCommands = work.verdict.evidence.commands.filter((command) => command.ok === true).length;
    this.lastVerifiedBy = this.verification?.verifiedBy(work.checks, work.oracle, criticCommands) ?? null;
    const workingDirPrefix = workingDirPrefixOf(request);
    const findings = await anchorFindings(request.repository, work.post.commit, iteration, work.verdict.findings, workingDirPrefix);
    // The same start test refusing DONE again is the user's to settle: the task may change what it expects.
    const askUser = gate.refused && gate.failedTests.length > 0 ? work.oracle?.askUser : null;
    const decision: CriticDecision = askUser && gate.decision.kind === 'CONTINUE' ? { ...gate.decision, needsInput: askUser } : gate.decision;
    this.record(iteration, work, decision, {
      findings,
      resolved: resolvedAmong(work.verdict.resolved, openItems),
      unmetRequirements: requirements?.open ?? [],
    });
    this.completedIterations = iteration;
    return decision;
  }

  /**
   * The task's requirements as the critic judged them on this iteration, each one's
   * evidence checked against its checks, the critic's commands and its post snapshot;
   * null when the run is not verified or there is no checklist.
   */
  private async judgeRequirements(iteration: number, work: IterationWork): Promise<JudgedRequirements | null> {
    if (!this.request.verify) return null;
    const judged = await this.requirements.judge(
      work.verdict.requirements,
      { checks: work.checks, commands: work.verdict.evidence.commands },
      { repository: this.request.repository, commit: work.post.commit, workingDirPrefix: workingDirPrefixOf(this.request) },
    );
    if (judged) this.emit({ type: 'requirements', iteration, source: judged.source, requirements: judged.statuses });
    return judged;
  }

  /**
   * Why a DONE would rest on the critic's word alone, when the run is verified: the
   * loop never changed the tree and the critic did not show that no change is needed,
   * or `require_evidence` and nothing verified it.
   */
  private unverifiedDone(work: IterationWork, verified: boolean): UnverifiedDone | null {
    const verify = this.request.verify;
    const decision = work.verdict.decision;
    if (!verify || decision.kind !== 'DONE') return null;
    if (work.change.sinceStart.length === 0 && !(decision.noChangeNeeded && verified)) return 'no_change';
    return verify.requireEvidence && !verified ? 'no_evidence' : null;
  }

  /**
   * Whether the loop goes on: DONE ends it; an actor or a critic failing again and
   * again ends it failed; anything else is fed back to the next actor, and the stall
   * detector says whether the loop is going in circles.
   */
  private decide(iteration: number, work: IterationWork, decision: CriticDecision): IterationEnd {
    const { actor, change, checks, verdict } = work;
    this.actorFailures = !actor.succeeded && change.diff.filesChanged === 0 ? this.actorFailures + 1 : 0;
    this.criticFailures = verdict.source === 'critic_failed' ? this.criticFailures + 1 : 0;
    if (decision.kind === 'DONE') return { decision, stall: null };
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
    const failedChecks = checks.filter((check) => !check.passed);
    this.history.push({ iteration, decision, failedChecks, weakened: work.protection.weakened, requirements: this.requirements.statuses() ?? undefined });
    // A question for the user is not the loop going in circles: it waits for what it lacks.
    if (decision.kind === 'CONTINUE' && decision.needsInput) return { decision, stall: null };
    const stall = this.stalls.observe({
      iteration,
      filesChanged: change.diff.filesChanged,
      preTree: work.pre.tree,
      postTree: work.post.tree,
      // The runner's own words (a DONE refused, a critic that could not answer) are not the critic repeating itself.
      criticFeedback: verdict.source === 'critic_failed' || verdict.source === 'unreadable' ? null : feedbackText(verdict.decision),
      failedChecks: failedChecks.map((check) => ({ name: check.name, output: check.output })),
    });
    if (stall) this.emit({ type: 'stall', iteration, action: stall.action, reason: stall.reason, since_iteration: stall.since });
    return { decision, stall };
  }

  /** One phase of an iteration between its `phase` events; the finished one says how long it took (`durationOf`: the agent's own count). */
  private async phase<T>(iteration: number, phase: IterationPhase, work: () => Promise<T>, durationOf?: (result: T) => number): Promise<T> {
    this.emit({ type: 'phase', iteration, phase, status: 'started' });
    const started = performance.now();
    const result = await work();
    this.emit({ type: 'phase', iteration, phase, status: 'finished', duration_secs: durationOf?.(result) ?? (performance.now() - started) / 1000 });
    return result;
  }

  private waitingAgent(iteration: number, role: 'actor' | 'critic'): WaitingAgent {
    const { adapter } = this.request[role].launch;
    return { iteration, role, agent: adapter.displayName, canResume: adapter.canResume };
  }

  /** What the agents find in their environment: which session and iteration they work in. */
  private runEnv(iteration: number): Record<string, string> {
    return {
      CODELOOPS_SESSION_ID: this.sessionId,
      CODELOOPS_ITERATION: String(iteration),
      ...(this.request.candidate ? { CODELOOPS_CANDIDATE: this.request.candidate.label } : {}),
    };
  }

  private onAgentEvent(iteration: number, role: 'actor' | 'critic', run: string, event: AgentEvent): void {
    this.emit({ type: 'agent_event', iteration, role, event });
    if (event.kind === 'usage') this.guard.usageReported(run, event.total, event.model ?? this.request[role].model);
  }

  private agentFinished(iteration: number, role: 'actor' | 'critic', run: string, result: AgentRunResult): void {
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
    this.guard.runFinished(run, result.usage, result.model ?? this.request[role].model);
  }

  private async snapshot(iteration: number, label: SnapshotLabel, withRef = true): Promise<SnapshotResult> {
    const ref = withRef ? snapshotRef(this.sessionId, iteration, label) : null;
    // The session's head follows the tree the loop leaves: pre and post, not the critic's or the checks' (undone).
    const refs = ref ? [ref, ...(label === 'critic' || label === 'checks' ? [] : [sessionHeadRef(this.sessionId)])] : [];
    const taken = await takeSnapshot(this.request.repository, `codeloops ${this.sessionId} iteration ${iteration} ${label}`, refs);
    for (const folder of this.nested.newlyLeftOut(taken))
      this.warn(`${folder}/ is a git repository with no commit yet: git cannot record it, so snapshots, diffs and reviews leave it out until it has one`);
    if (withRef) this.emit({ type: 'snapshot', iteration, label, commit: taken.commit, ref });
    return taken;
  }

  /**
   * The critic reads and the checks run; neither changes the tree. Anything they
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
    work: IterationWork,
    decision: CriticDecision,
    critique: { findings: Finding[]; resolved: string[]; unmetRequirements: RequirementStatus[] },
  ): void {
    const { actor, verdict, reverted } = work;
    const { diff } = work.change;
    const remainingIssues = decision.kind === 'CONTINUE' ? decision.remainingIssues : [];
    const failedChecks = work.checks.filter((check) => !check.passed).map((check) => check.name);
    const needsInput = decision.kind === 'CONTINUE' ? decision.needsInput : undefined;
    this.emit({
      type: 'critic_decision',
      iteration,
      decision: decision.kind,
      feedback: feedbackText(decision),
      summary: decision.kind === 'DONE' ? decision.summary : null,
      confidence: decision.kind === 'DONE' ? decision.confidence : null,
      remaining_issues: remainingIssues,
      source: verdict.source,
      critic_output: verdict.answer,
      findings: critique.findings,
      resolved: critique.resolved,
      evidence: verdict.evidence,
      ...(needsInput && { needs_input: needsInput }),
    });
    if (needsInput) this.emit({ type: 'needs_input', iteration, ...needsInput });
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
      critic_verdict: decision.kind === verdict.decision.kind ? undefined : verdict.decision.kind,
      protected_changes: work.protection.weakened.length > 0 ? work.protection.weakened : undefined,
      findings: critique.findings.length > 0 ? critique.findings : undefined,
      unmet_requirements: critique.unmetRequirements.length > 0 ? critique.unmetRequirements : undefined,
      needs_input: needsInput,
    });
    this.emit({ type: 'iteration_finished', iteration, decision: decision.kind });
  }

  private warn(message: string): void {
    this.emit({ type: 'warning', message });
  }

  private emit(input: RunEventInput): void {
    const event = stampEvent(input);
    this.ledger.note(event);
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
    this.guard.stopClock();
    const totalDurationSecs = this.guard.runSecs();
    const totals = this.guard.totals();
    this.summary = {
      status: end.status,
      iterations: this.completedIterations,
      summary: end.summary,
      confidence: end.confidence,
      error: end.error,
      error_code: end.errorCode,
      ...(end.errorCode !== null && { error_details: end.errorDetails ?? {} }),
      stop_reason: end.stopReason,
      total_cost_usd: totals.costUsd,
      total_tokens: totals.tokens,
      cost_estimated: totals.costEstimated,
      total_duration_secs: totalDurationSecs,
      session_id: this.sessionId,
      session_file: this.writer.filePath,
      verification: end.status === 'success' ? (this.lastVerified ? 'verified' : 'unverified') : null,
      ...(end.status === 'success' && this.lastVerifiedBy && { verified_by: this.lastVerifiedBy }),
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
        error_details: end.errorDetails ?? undefined,
        stop_reason: end.stopReason ?? undefined,
        total_cost_usd: totals.costUsd ?? undefined,
        total_tokens: totals.tokens,
        cost_estimated: totals.costEstimated || undefined,
        verification: this.summary.verification ?? undefined,
        verified_by: this.summary.verified_by,
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

/**
 * Whether a CONTINUE names what is left (a remaining issue, an unmet requirement, a
 * finding), keeps a review item open (the user's comment or rejection, an earlier
 * finding it did not resolve), or stands on a failing check or a protected change:
 * else the critic is asked to be specific.
 */
function namesSomethingConcrete(continued: ParsedDecision, evidence: Pick<IterationWork, 'checks' | 'protection'> & { openItems: ReviewItems }): boolean {
  const { findings, comments, rejections } = evidence.openItems;
  const stillOpen = [...findings, ...comments, ...rejections].some((item) => !continued.resolved.includes(item.id));
  return (
    (continued.decision.kind === 'CONTINUE' && continued.decision.remainingIssues.length > 0) ||
    continued.requirements.some((requirement) => requirement.met === false) ||
    continued.findings.length > 0 ||
    stillOpen ||
    evidence.checks.some((check) => !check.passed) ||
    evidence.protection.weakened.length > 0
  );
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
  return { status, summary: null, confidence: null, error: null, errorCode: null, errorDetails: null, stopReason: null };
}

function interrupted(): EndState {
  return ended('interrupted');
}

/** A loop that cannot go on: an expected failure says which; anything else is a git failure or a bug. */
function failed(error: unknown): EndState {
  const code: FailureCode = isCodeloopsError(error) ? error.code : 'internal';
  const details = isCodeloopsError(error) && Object.keys(error.details).length > 0 ? error.details : null;
  return {
    ...ended('failed'),
    error: (error as Error).message,
    errorCode: code,
    errorDetails: details,
    stopReason: code === 'usage_limit' ? 'usage_limit' : null,
  };
}

/** Nobody can answer the question (headless): the loop ends `failed`, the question as its error, to be answered on resume. */
function needsInputEnd(needs: NeedsInput): EndState {
  return { ...ended('failed'), error: needs.question, errorCode: 'needs_input', stopReason: 'needs_input' };
}

/** A guard stopped the loop: it ends `failed`, saying why. */
function stoppedBy(stop: GuardStop): EndState {
  return { ...ended('failed'), error: stop.message, errorCode: 'budget_exceeded', stopReason: stop.reason };
}

/** The guards of a run, as its `run_started` event records them. */
function guardsOf(request: LoopRequest): LoopGuards {
  return {
    checks: request.checks.map((check) => ({
      name: check.name,
      command: check.run,
      required: check.required,
      ...(check.folder !== undefined && { folder: check.folder }),
      timeout_secs: check.timeoutSecs,
      ...(check.runner !== undefined && { runner: check.runner }),
      ...traitsOf(check),
    })),
    max_cost_usd: request.budget.maxCostUsd,
    max_tokens: request.budget.maxTokens,
    max_duration_secs: request.budget.maxDurationSecs,
    stall_after: request.stall.unchangedIterations,
    stall_action: request.stall.action,
    review: request.waitForReview ? 'pause' : 'off',
    ...(request.verify && {
      verify: {
        protected: [...request.verify.protected],
        allow_test_changes: request.verify.allowTestChanges,
        require_evidence: request.verify.requireEvidence,
      },
    }),
  };
}

/** The loop's working directory from the repository's top, '/'-separated ('' at the top). */
/** Where clean worktrees go without `[worktree]`: the default folder, nothing copied, no setup. */
function defaultIsolation(): IsolationSettings {
  return { directory: worktreesDir(), worktree: { copy: [], setup: null, setupTimeoutSecs: 0 } };
}

function workingDirPrefixOf(request: LoopRequest): string {
  return path.relative(request.repository.root, request.workingDir).split(path.sep).join('/');
}

/** How a check is run beyond its command, as `run_started.guards` and `check_finished` record it. */
function traitsOf(check: CheckSpec): { when: CheckTiming; hidden: boolean; isolated: boolean } {
  return { when: timingOf(check), hidden: check.hidden === true, isolated: check.isolated === true };
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
    ...(request.eval ? { eval: request.eval } : {}),
  };
}
