import { agentKindFromDisplayName, type AgentKind } from '../agents/agentKinds.js';
import { checkResultOf, type CheckResult } from '../checks/runCheck.js';
import type { CriticDecision } from '../critic/criticDecision.js';
import { openRepository, type Repository } from '../git/repository.js';
import { lastTree, readSnapshot, snapshotRef, takeSnapshot, type Snapshot } from '../git/snapshots.js';
import { diffSnapshots } from '../git/treeDiff.js';
import type { FeedbackRecord } from '../loop/actorPrompt.js';
import type { Continuation } from '../loop/loopRequest.js';
import type { CarriedChecklist } from '../loop/requirementsChecklist.js';
import type { TestBaseline } from '../loop/testOracle.js';
import type { PriceTable } from '../budget/prices.js';
import { SpendTracker } from '../budget/spendTracker.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { FileChange, LoopGuards, RunEvent } from '../sessionFormat/runEvents.js';
import type { IterationLine } from '../sessionFormat/sessionLines.js';
import { hasOpenUserFeedback } from '../sessionFormat/reviewRecords.js';
import { readReview } from '../sessions/reviewState.js';
import { readSidecarEvents } from '../sessions/sidecarReader.js';
import type { Session, SessionStore } from '../sessions/sessionStore.js';

/**
 * How `codeloops resume` carries a session on. A session without `session_end`
 * (interrupted hard: kill -9, a crash, the machine off) goes on in the same file;
 * a session that ended (interrupted, failed, out of iterations) goes on in a new
 * session linked by `resumed_from`, so that no line ever follows a `session_end`.
 * Either way the iteration numbers carry on, the actor gets the critic's last
 * feedback, and its own agent session is resumed where its CLI can.
 */

export class ResumeRefusedError extends CodeloopsError {
  override name = 'ResumeRefusedError';
}

export interface ResumePlan {
  session: Session;
  repository: Repository;
  continuation: Continuation;
  /** The agents and models the session ran with, as kinds the runner knows (undefined: unknown name, config decides). */
  recorded: {
    actorAgent?: AgentKind;
    criticAgent?: AgentKind;
    actorModel: string | null;
    criticModel: string | null;
    maxIterations: number | null;
    /** The checks, budget and stall detection of its last run, when its record has them. */
    guards?: LoopGuards;
  };
  /** What differs between the work tree and the tree codeloops last left (empty, or overridden by `force`). */
  treeChanges: FileChange[];
  warnings: string[];
}

export interface ResumeRequest {
  store: SessionStore;
  sidecarDirOf: (sessionId: string) => string;
  sessionId: string;
  /** Resume even though the tree differs from the last snapshot (or cannot be compared). */
  force: boolean;
}

/** Sessions followed back through `resumed_from` at most; a longer chain is a loop in the links. */
const MAX_CHAIN = 1000;

export async function planResume(request: ResumeRequest): Promise<ResumePlan> {
  const session = await request.store.load(request.sessionId);
  const warnings: string[] = [];
  const chain = await loadChain(request.store, session, warnings);
  // A finished session is open again once the user has commented on it or rejected part of it.
  if (session.end?.outcome === 'success' && !hasOpenUserFeedback(await readReview(chain.map((link) => request.sidecarDirOf(link.id))))) {
    throw new ResumeRefusedError(
      'session_finished',
      `Session ${session.id} already finished with success; there is nothing to resume. Comment on it or reject a change to carry it on with that feedback.`,
      { session_id: session.id },
    );
  }
  const iterations = iterationsOf(chain);
  const lastIteration = iterations.at(-1)?.iteration_number ?? 0;

  const repository = await openRepository(session.start.working_dir);
  const events = new Map<string, RunEvent[]>();
  for (const link of chain) events.set(link.id, await readSidecarEvents(request.sidecarDirOf(link.id)));
  // A run stopped before its first snapshot changed nothing: there is nothing to compare.
  const snapshotsTaken = iterations.length > 0 || [...events.values()].some((list) => list.some((event) => event.type === 'snapshot'));
  const treeChanges = snapshotsTaken ? await changesSinceLastTree(repository, chain, request.force, warnings) : [];

  // After a rollback the files are as they were before an iteration: later feedback and
  // the agent's memory of later work would mislead the actor.
  const rolledBackTo = activeRollback(events.get(session.id) ?? []);
  if (rolledBackTo !== undefined) {
    warnings.push(`the session was rolled back to before iteration ${rolledBackTo}: the actor gets the feedback up to then, in a fresh agent session`);
  }
  const failedChecks = failedChecksByIteration(chain.flatMap((link) => events.get(link.id) ?? []));
  const answers = answersByIteration(chain.flatMap((link) => events.get(link.id) ?? []));
  const checklistAfter = checklistsOf(chain.flatMap((link) => events.get(link.id) ?? []));
  const history = iterations
    .filter((line) => rolledBackTo === undefined || line.iteration_number < rolledBackTo)
    .map((line) => ({
      ...feedbackRecord(line, failedChecks.get(line.iteration_number) ?? [], answers.get(line.iteration_number)),
      requirements: checklistAfter(line.iteration_number)?.requirements,
    }));
  const checklist = history.length > 0 ? checklistAfter(history.at(-1)!.iteration) : undefined;
  const baseline = recordedBaseline(chain.flatMap((link) => events.get(link.id) ?? []));
  return {
    session,
    repository,
    continuation: {
      sessionId: session.id,
      appendTo: session.end ? null : session.filePath,
      history,
      lastIteration,
      actorSession: rolledBackTo === undefined ? actorSessionOf(chain, events) : null,
      taskStart: await taskStart(repository, chain),
      spentAt: (prices) => spentBy(chain, events, prices),
      earlierSidecarDirs: chain.map((link) => request.sidecarDirOf(link.id)),
      ...(rolledBackTo !== undefined && { reviewBefore: rolledBackTo }),
      ...(checklist && { checklist }),
      ...(baseline && { baseline }),
    },
    recorded: {
      actorAgent: agentKindFromDisplayName(session.start.actor_agent),
      criticAgent: agentKindFromDisplayName(session.start.critic_agent),
      actorModel: session.start.actor_model,
      criticModel: session.start.critic_model,
      maxIterations: session.start.max_iterations,
      guards: chain
        .flatMap((link) => events.get(link.id) ?? [])
        .flatMap((event) => (event.type === 'run_started' && event.guards ? [event.guards] : []))
        .at(-1),
    },
    treeChanges,
    warnings,
  };
}

/** The session and those it carries on, oldest first. */
async function loadChain(store: SessionStore, session: Session, warnings: string[]): Promise<Session[]> {
  const chain = [session];
  const seen = new Set([session.id]);
  for (let current = session; current.start.resumed_from && chain.length < MAX_CHAIN;) {
    const previous = current.start.resumed_from;
    if (seen.has(previous)) break;
    try {
      current = await store.load(previous);
    } catch (error) {
      warnings.push(`the earlier session ${previous} this one carries on cannot be read (${(error as Error).message}); its feedback is left out`);
      break;
    }
    seen.add(previous);
    chain.unshift(current);
  }
  return chain;
}

/** Every recorded iteration of the chain in order; a number recorded twice keeps the later record. */
function iterationsOf(chain: readonly Session[]): IterationLine[] {
  const byNumber = new Map<number, IterationLine>();
  for (const link of chain) for (const iteration of link.iterations) byNumber.set(iteration.iteration_number, iteration);
  return [...byNumber.values()].sort((a, b) => a.iteration_number - b.iteration_number);
}

function feedbackRecord(line: IterationLine, failedChecks: CheckResult[], answer: string | undefined): FeedbackRecord {
  const feedback = line.feedback ?? '';
  let decision: CriticDecision;
  if (line.critic_decision === 'CONTINUE')
    decision = { kind: 'CONTINUE', feedback, remainingIssues: line.remaining_issues ?? [], ...(line.needs_input && { needsInput: line.needs_input }) };
  else if (line.critic_decision === 'ERROR') decision = { kind: 'ERROR', ...errorFeedbackParts(feedback) };
  else decision = { kind: 'DONE', summary: feedback, confidence: null };
  return { iteration: line.iteration_number, decision, failedChecks, ...(line.needs_input && answer !== undefined && { answer }) };
}

/** The answers the user gave while a loop waited for them, by the iteration that asked (a run that answered and then crashed keeps its answer). */
function answersByIteration(events: readonly RunEvent[]): Map<number, string> {
  return new Map(events.flatMap((event) => (event.type === 'needs_input_answered' ? [[event.iteration, event.answer] as const] : [])));
}

/**
 * The task's checklist as last judged by the end of each iteration, from the sidecar's
 * `requirements` events (an iteration run again after a crash counts its last run):
 * the running loop tells the actor the latest statuses, and a critic's list is given once.
 */
function checklistsOf(events: readonly RunEvent[]): (iteration: number) => CarriedChecklist | undefined {
  const judged = events.filter((event): event is Extract<RunEvent, { type: 'requirements' }> => event.type === 'requirements');
  return (iteration) => {
    const last = judged.findLast((event) => event.iteration <= iteration);
    return last && { source: last.source, requirements: last.requirements };
  };
}

/**
 * `codeloops resume --answer`: the answer to the question the session's last
 * iteration asked, given to the next actor as the user's words. Refused when the
 * session asked nothing: an answer to no question would be read as a new task.
 */
export function answerQuestion(plan: ResumePlan, answer: string): void {
  const last = plan.continuation.history.at(-1);
  const needs = last?.decision.kind === 'CONTINUE' ? last.decision.needsInput : undefined;
  if (!needs || answer.trim() === '') {
    throw new ResumeRefusedError(
      'usage',
      needs
        ? `The answer to "${needs.question}" is empty.`
        : `Session ${plan.session.id} is not waiting for an answer: its last iteration asked the user nothing. Comment on it to say more.`,
      { session_id: plan.session.id },
    );
  }
  plan.continuation.answer = answer.trim();
}

/**
 * The checks that failed on an iteration's tree, from the sidecar's `check_finished`
 * records, so a resumed actor is shown their output as the running loop would have
 * shown it (the recorded feedback names them without it). An iteration run again
 * after a crash counts its last run's checks.
 */
function failedChecksByIteration(events: readonly RunEvent[]): Map<number, CheckResult[]> {
  const failed = new Map<number, CheckResult[]>();
  for (const event of events) {
    if (event.type === 'iteration_started') failed.delete(event.iteration);
    if (event.type !== 'check_finished' || event.passed) continue;
    failed.set(event.iteration, [...(failed.get(event.iteration) ?? []), checkResultOf(event)]);
  }
  return failed;
}

/**
 * An ERROR's feedback split back into what went wrong and how to recover, as this
 * runner writes it (`…\n\nRecovery: …`) and as the original codeloops did
 * (`Error encountered: …\n\nRecovery suggestion: …`).
 */
export function errorFeedbackParts(feedback: string): { description: string; recovery: string } {
  const match = /^(?:Error encountered:\s*)?([\s\S]*?)\n\nRecovery(?: suggestion)?:\s*([\s\S]*)$/.exec(feedback);
  return match ? { description: match[1]!.trim(), recovery: match[2]!.trim() } : { description: feedback.replace(/^Error encountered:\s*/, ''), recovery: '' };
}

/**
 * Compares the work tree with the tree codeloops last left for the newest session of
 * the chain that has snapshots. Nothing is restored: a difference is reported and
 * the user decides (`--force` carries on with the tree as it is).
 */
async function changesSinceLastTree(repository: Repository, chain: readonly Session[], force: boolean, warnings: string[]): Promise<FileChange[]> {
  let last: Snapshot | undefined;
  for (const link of [...chain].reverse()) {
    last = await lastTree(repository, link.id);
    if (last) break;
  }
  if (!last) {
    if (!force) {
      throw new ResumeRefusedError(
        'snapshot_missing',
        `Session ${chain.at(-1)!.id} has no snapshots in ${repository.root} (deleted, another clone, or recorded by another runner), ` +
          `so codeloops cannot check that the files are as the loop left them. Nothing was changed.`,
        { session_id: chain.at(-1)!.id, repository: repository.root },
      );
    }
    warnings.push('no snapshot to compare the files with; carrying on with them as they are');
    return [];
  }
  const current = await takeSnapshot(repository, 'codeloops resume check');
  const { files } = await diffSnapshots(repository, last.commit, current.commit, 0);
  if (files.length > 0 && !force) {
    const listed = files.slice(0, 20).map((file) => `  ${file.status} ${file.oldPath ? `${file.oldPath} → ` : ''}${file.path}`);
    if (files.length > 20) listed.push(`  … and ${files.length - 20} more`);
    throw new ResumeRefusedError(
      'tree_changed',
      `The files differ from how the loop left them (${files.length} changed since its last snapshot):\n${listed.join('\n')}\nNothing was changed.`,
      { changed: files.map((file) => file.path) },
    );
  }
  if (files.length > 0) warnings.push(`carrying on with ${files.length} file${files.length === 1 ? '' : 's'} changed since the loop's last snapshot, as asked`);
  return files;
}

/** The iteration the session's files were last rolled back to before, unless that rollback was undone. */
function activeRollback(events: readonly RunEvent[]): number | undefined {
  const last = events.findLast((event) => event.type === 'rollback' || event.type === 'rollback_undone' || event.type === 'run_started');
  return last?.type === 'rollback' ? last.to_iteration : undefined;
}

/** The actor's last agent session and what it has cost so far, from the sidecar records. */
function actorSessionOf(chain: readonly Session[], events: ReadonlyMap<string, RunEvent[]>): Continuation['actorSession'] {
  const finished = chain
    .flatMap((link) => events.get(link.id) ?? [])
    .filter((event): event is Extract<RunEvent, { type: 'agent_finished' }> => event.type === 'agent_finished' && event.role === 'actor');
  const id = finished.findLast((event) => event.agent_session_id)?.agent_session_id;
  if (!id) return null;
  const costAlreadyCounted = finished.filter((event) => event.agent_session_id === id).reduce((sum, event) => sum + (event.usage?.costUsd ?? 0), 0);
  return { id, costAlreadyCounted };
}

/**
 * What the sessions of the chain used, so that a resumed loop's budget counts on
 * instead of starting again. An ended session's cost and tokens hold those of the
 * sessions it carried on, so the last one's stand for them all; a session with none
 * (it crashed, or an older runner wrote it) adds what its record says its agents used,
 * a cost they did not report priced at the resumed run's prices (the user's `[prices]`
 * over the built-in table). Durations are each session's own, and add up.
 */
function spentBy(chain: readonly Session[], events: ReadonlyMap<string, RunEvent[]>, prices: PriceTable): ReturnType<Continuation['spentAt']> {
  const spent = { costUsd: null as number | null, tokens: 0, costEstimated: false, durationSecs: 0 };
  const addCost = (cost: number | null | undefined) => {
    if (cost !== null && cost !== undefined) spent.costUsd = (spent.costUsd ?? 0) + cost;
  };
  for (const link of chain) {
    const record = events.get(link.id) ?? [];
    if (link.end?.total_tokens !== undefined) {
      // A session's end counts what it carried on as well (its run started from what the links before it spent).
      spent.tokens = link.end.total_tokens;
      spent.costUsd = link.end.total_cost_usd ?? null;
      spent.costEstimated = link.end.cost_estimated === true;
    } else {
      const tracker = new SpendTracker(prices);
      for (const event of record) {
        if (event.type !== 'agent_finished' || !event.usage) continue;
        tracker.finish(
          `${event.iteration}/${event.role}/${event.timestamp}`,
          event.usage,
          event.role === 'actor' ? link.start.actor_model : link.start.critic_model,
        );
      }
      const totals = tracker.totals();
      spent.tokens += totals.tokens;
      addCost(totals.costUsd);
      spent.costEstimated ||= totals.costEstimated;
    }
    // The time budget does not count the pauses for review.
    const paused = record.reduce((sum, event) => sum + (event.type === 'review_resumed' ? event.paused_secs : 0), 0);
    spent.durationSecs += Math.max(0, (link.end ? link.end.duration_secs : runTimeOf(record)) - paused);
  }
  return spent;
}

/** How long the runs of a record lasted: each run until it finished, or until its last event (it crashed). */
function runTimeOf(record: readonly RunEvent[]): number {
  let total = 0;
  let runStart: number | null = null;
  let last = 0;
  for (const event of record) {
    const at = Date.parse(event.timestamp);
    if (event.type === 'run_started') {
      if (runStart !== null) total += (last - runStart) / 1000;
      runStart = at;
    }
    if (event.type === 'run_finished') {
      total += event.total_duration_secs;
      runStart = null;
    }
    last = at;
  }
  if (runStart !== null) total += (last - runStart) / 1000;
  return total;
}

/** The snapshot from before the task's first iteration, from the oldest session of the chain. */
async function taskStart(repository: Repository, chain: readonly Session[]): Promise<Snapshot | null> {
  const first = chain[0]!;
  const firstIteration = first.start.resumed_after_iteration === undefined ? 1 : first.start.resumed_after_iteration + 1;
  return (await readSnapshot(repository, snapshotRef(first.id, firstIteration, 'pre'))) ?? null;
}

/**
 * Refuses to go on past the session's iteration limit (`maxIterations`, 0 for none):
 * the next iteration's number would be above it.
 */
export function assertIterationsLeft(plan: ResumePlan, maxIterations: number): void {
  const next = plan.continuation.lastIteration + 1;
  if (maxIterations === 0 || next <= maxIterations) return;
  throw new ResumeRefusedError(
    'iteration_limit',
    `Session ${plan.session.id} has used its ${maxIterations} iteration${maxIterations === 1 ? '' : 's'}; the next would be iteration ${next}.`,
    { max_iterations: maxIterations, next_iteration: next },
  );
}

/**
 * The start's tests as the task's first run found them (its `test_baseline`): the task's
 * start tree has not changed, so its tests are not run again. One that found no baseline
 * is not carried: the resumed run tries again (a command may have been installed since).
 */
function recordedBaseline(events: readonly RunEvent[]): TestBaseline | undefined {
  const recorded = events.find((event): event is Extract<RunEvent, { type: 'test_baseline' }> => event.type === 'test_baseline');
  if (!recorded || recorded.unavailable !== null || recorded.checks.length === 0) return undefined;
  return {
    unavailable: null,
    checks: recorded.checks.map((check) => ({ check: check.name, runner: check.runner, passing: check.passing, failing: check.failing, counts: check.tests })),
  };
}
