import type { AgentRunResult } from '../agents/runAgent.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { VerifySettings } from '../config/runSettings.js';
import { askCritic, type CriticVerdict } from '../critic/askCritic.js';
import { CriticEvidenceFold, ranSuccessfully } from '../critic/criticEvidence.js';
import { feedbackText, needsInputDecision, type CriticDecision, type ParsedDecision } from '../critic/criticDecision.js';
import type { Snapshot, SnapshotResult } from '../git/snapshots.js';
import { removeAllTemporaryIndexes } from '../git/temporaryIndex.js';
import { changedPaths, diffSnapshots } from '../git/treeDiff.js';
import { CodeloopsError, type FailureCode } from '../sessionFormat/failures.js';
import type { ReviewItems } from '../sessionFormat/reviewRecords.js';
import { stampEvent, type RunEventInput, type RunSummary } from '../sessionFormat/runEvents.js';
import type { Outcome } from '../sessionFormat/sessionLines.js';
import type { VerifiedBy } from '../sessionFormat/testResults.js';
import type { UnverifiedDone } from '../sessionFormat/verification.js';
import { appendReviewRecord } from '../sessionWriter/reviewRecorder.js';
import { SessionWriter } from '../sessionWriter/sessionWriter.js';
import { SidecarRecorder } from '../sessionWriter/sidecarRecorder.js';
import { actorQuestion, buildContinuationPrompt, type FeedbackRecord } from './actorPrompt.js';
import { AgentRuns } from './agentRuns.js';
import { checkGate, isVerified } from './checkGate.js';
import { ChecksPhase } from './checksPhase.js';
import { ConfigFilesWatch } from './configFilesWatch.js';
import { criticPromptInput, namesSomethingConcrete, type CriticEvidence } from './criticBrief.js';
import { DoneVerification, NO_PROTECTION, type DoneJudgement, type Protection } from './doneVerification.js';
import { removeIsolatedWorktreesNow } from './isolatedCheck.js';
import { writeIterationRecord } from './iterationRecord.js';
import { IterationSnapshots } from './iterationSnapshots.js';
import { inPhase, type ActorBrief, type IterationChange, type IterationEnd, type IterationWork } from './iterationWork.js';
import { ended, failed, hasEnded, interrupted, needsInputEnd, runSummaryOf, stoppedBy, writeSessionEnd, type EndState } from './loopEnd.js';
import { LoopGuard } from './loopGuard.js';
import { defaultIsolation, guardsOf, sessionHeader, workingDirPrefixOf, type LoopRequest } from './loopRequest.js';
import { NestedRepositoryWatch } from './nestedRepositories.js';
import { acquireRepositoryLock, type RepositoryLock } from './repositoryLock.js';
import { RequirementsChecklist, type JudgedRequirements } from './requirementsChecklist.js';
import { addressedClaims, anchorFindings } from './reviewItems.js';
import { itemIds, resolvedAmong, ReviewLedger } from './reviewLedger.js';
import { StallDetector, type Stall } from './stallDetector.js';
import { captureUserGitState } from './treeGuard.js';
import { UserPauses } from './userPauses.js';

/** Consecutive failed agent runs that changed nothing before the loop gives up. */
const FAILURE_LIMIT = 2;

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

/**
 * One run of the actor–critic loop on one session. Each iteration: snapshot, brief
 * the actor, run it, snapshot, diff, run the checks, ask the critic, record, decide.
 * DONE ends with success (when the required checks passed); CONTINUE and ERROR feed
 * back and loop; the iteration limit, a guard (budget, time: `LoopGuard`), a stall,
 * an interrupt or an unrecoverable failure end it too. Whatever happens, the session
 * ends with a `session_end` line, written exactly once (`endNow`). The phases are
 * here; their parts are its collaborators: the agents' runs (`AgentRuns`, limits
 * waited out by `LimitWaits`), the snapshots (`IterationSnapshots`), the checks
 * (`ChecksPhase`), what a DONE rests on (`DoneVerification`), the pauses for the
 * user (`UserPauses`), the record (`writeIterationRecord`, `loopEnd.ts`).
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
  private readonly agents: AgentRuns;
  private readonly snapshots: IterationSnapshots;
  private readonly checks: ChecksPhase;
  private readonly pauses: UserPauses;
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
    const emit = (event: RunEventInput) => this.emit(event);
    this.guard = new LoopGuard({
      budget: request.budget,
      prices: request.prices,
      earlier: continuation?.spentAt(request.prices),
      interrupt: request.signal,
      report: emit,
    });
    this.ledger = new ReviewLedger({ earlier: continuation?.earlierSidecarDirs ?? [], own: this.sidecarDir }, continuation?.reviewBefore);
    this.stalls = new StallDetector(request.stall);
    this.nested = new NestedRepositoryWatch(request.repository, continuation ? this.firstIteration : null);
    this.verification = request.verify ? this.doneVerification(request.verify) : null;
    this.configFiles = new ConfigFilesWatch(request.configFiles ?? []);
    this.requirements = new RequirementsChecklist(request.prompt, continuation?.checklist);
    this.agents = new AgentRuns({
      request,
      sessionId: this.sessionId,
      firstIteration: this.firstIteration,
      guard: this.guard,
      groups: this.lock,
      emit,
      rawStdoutPath: (iteration, role, attempt) => this.sidecar?.rawStdoutPath(iteration, role, attempt),
    });
    this.snapshots = new IterationSnapshots(request.repository, this.sessionId, this.nested, emit);
    const signal = this.guard.signal;
    this.checks = new ChecksPhase({
      request,
      sessionId: this.sessionId,
      verification: this.verification,
      snapshots: this.snapshots,
      signal,
      groups: this.lock,
      emit,
    });
    this.pauses = new UserPauses({ guard: this.guard, lock, sidecarDir: this.sidecarDir, emit, onAnswer: (text) => void (this.history.at(-1)!.answer = text) });
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
        const reply = request.askUser ? await this.pauses.forAnswer(iteration, decision.needsInput, request.askUser) : null;
        if (reply === null) return needsInputEnd(decision.needsInput);
        if (reply.type === 'stop') return interrupted();
        continue;
      }
      if (request.waitForReview && iterationsLeft && (await this.pauses.forReview(iteration, request.waitForReview)) === 'stop') return interrupted();
    }
  }

  /** One iteration, as the class comment tells it; null when it was stopped before the critic's verdict came in. */
  private async runIteration(iteration: number): Promise<IterationEnd | null> {
    this.emit({ type: 'iteration_started', iteration });
    const pre = await this.snapshots.take(iteration, 'pre');
    this.taskStart ??= pre;
    // The start's tests run once on the task's first tree, beside the first actor.
    this.verification?.begin(this.taskStart, this.guard.signal);
    const brief = await this.briefActor(iteration);
    const actor = await this.agents.runActor(iteration, brief.prompt);
    // Even a stopped actor may have changed files: keep them restorable.
    const post = await this.snapshots.take(iteration, 'post');
    if (actor.interrupted || this.guard.signal.aborted) return null;
    if (!actor.started) throw new CodeloopsError('agent_not_started', `The actor ${actor.failureReason ?? 'could not start'}`, { role: 'actor' });
    const change = await this.diff(iteration, pre, post);
    const protection = await this.judgeProtectedChanges(iteration, change, post);
    const openItems = await this.takeClaims(iteration, actor, brief);
    const question = actorQuestion(actor.finalText ?? actor.transcript);
    if (question !== null) return this.actorAsked(iteration, { pre, post, actor, change, protection }, openItems, question);
    const checks = await this.checks.run(iteration, post, 'each');
    if (checks === null) return null;
    const critic = await this.askCritic(iteration, { actor, change, checks, protection, openItems }, post);
    if (critic === null) return null;
    // The slow and the acceptance checks, then the start's tests on this code, judge only a DONE the others let through.
    const letThrough = (results: readonly CheckResult[]) =>
      critic.verdict.decision.kind === 'DONE' && !results.some((check) => check.required && !check.passed);
    const atDone = letThrough(checks) ? await this.checks.run(iteration, post, 'done') : [];
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

  /** The iteration's diff, what changed since the task began, and the folders that became nested repositories. */
  private diff(iteration: number, pre: SnapshotResult, post: SnapshotResult): Promise<IterationChange> {
    const { repository } = this.request;
    return inPhase(this.emit, iteration, 'diff', async () => {
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
    return inPhase(this.emit, iteration, 'checks', () => verification.judgeDone(iteration, post, this.guard.signal));
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
   * The critic's verdict on the iteration, and the files it changed (put back to the
   * actor's version). Null when it was stopped before its verdict came in: a verdict
   * that came in counts, even if Ctrl+C came right after it.
   */
  private async askCritic(iteration: number, evidence: CriticEvidence, post: Snapshot): Promise<Pick<IterationWork, 'verdict' | 'reverted'> | null> {
    const { request } = this;
    const { gitBefore, verdict } = await inPhase(this.emit, iteration, 'critic', async () => {
      const gitBefore = await captureUserGitState(request.repository);
      const earlier = { previous: this.history.at(-1), ...(request.verify && { requirements: this.requirements.forCritic() }) };
      const verdict = await askCritic(request.critic.launch, criticPromptInput(request, iteration, evidence, earlier), {
        ...this.agents.criticRuns(iteration),
        onRepair: (problem) => {
          this.warn(`iteration ${iteration}: the critic's answer could not be read (${problem}); asking once more`);
          this.emit({ type: 'phase', iteration, phase: 'critic_repair', status: 'started' });
        },
        ...(request.verify && {
          isConcrete: (continued: ParsedDecision) => namesSomethingConcrete(continued, evidence),
          onAskSpecific: () => this.warn(`iteration ${iteration}: the critic asked for more work but named nothing concrete; asking it once to be specific`),
        }),
      });
      return { gitBefore, verdict };
    });
    const reverted = await this.snapshots.putBack(iteration, 'critic', post, gitBefore);
    return verdict.interrupted ? null : { verdict, reverted };
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
    writeIterationRecord(this.writer, this.emit, iteration, work, decision, {
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
  private warn(message: string): void {
    this.emit({ type: 'warning', message });
  }

  /** Every run event goes through here: the review ledger notes it, the sidecar records it, the listener hears it. */
  private readonly emit = (input: RunEventInput): void => {
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
  };

  /**
   * Writes `session_end` and lets go of everything, synchronously, exactly once:
   * from the normal path, or from an emergency exit that cannot wait.
   */
  endNow(end: EndState): void {
    if (this.summary) return;
    this.guard.stopClock();
    this.summary = runSummaryOf(end, {
      sessionId: this.sessionId,
      sessionFile: this.writer.filePath,
      iterations: this.completedIterations,
      durationSecs: this.guard.runSecs(),
      totals: this.guard.totals(),
      verified: this.lastVerified,
      verifiedBy: this.lastVerifiedBy,
    });
    try {
      writeSessionEnd(this.writer, end, this.summary);
    } finally {
      this.writer.close();
      this.lock.release();
      this.emit({ type: 'run_finished', ...this.summary });
      this.sidecar?.close();
      this.sidecar = null;
    }
  }
}
