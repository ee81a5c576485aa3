import type { Outcome } from '../sessionFormat/sessionLines.js';
import type { AgentPairStats, SessionFigures, SessionStats, SessionSummary, TaskFigures } from '../sessionFormat/sessionSummaries.js';
import { isRejection } from './sessionFigures.js';
import type { SessionFilter } from './sessionFilter.js';
import { sessionCounts } from './sessionSummary.js';

/**
 * `sessions stats`: the original's figures counted per session, and its agentic
 * metrics and ours counted per task. A task is the sessions linked by `resumed_from`
 * (a `resume` chain, or a tree when one session was resumed twice), with the
 * iterations of all, dated by its first session and ending as its last one did (a
 * "first try" that was really the fourth attempt is not one). Computed from each
 * session's summary and figures (`SessionFigures`), which the index keeps: no session
 * file is read. A rate whose denominator is 0 is null: there is nothing to rate.
 */

/** One session as stats read it: its summary, its figures and when it started (`ListedSession` is one). */
export interface StatsSession {
  readonly id: string;
  readonly startedMs: number;
  readonly summary: SessionSummary;
  readonly figures: SessionFigures;
}

/** Whether a session passes a filter (the listing knows how to search a prompt the index does not keep). */
export type SessionMatcher<S> = (session: S, filter: SessionFilter) => boolean;

const WASTE: readonly Outcome[] = ['failed', 'interrupted', 'max_iterations_reached'];

/** Everything `sessions stats` says of `sessions` (all of the folder's: a task's links may fall outside the filter). */
export function computeStats<S extends StatsSession>(sessions: readonly S[], filter: SessionFilter, matches: SessionMatcher<S>): SessionStats {
  const counted = sessions.filter((session) => matches(session, filter));
  // A task passes the filter by its first session, and by its last one's outcome.
  const byFirst = { ...filter, outcomes: undefined };
  const tasks = tasksOf(sessions).filter(
    (task) => matches(task.first, byFirst) && (!filter.outcomes?.length || (task.outcome !== null && filter.outcomes.includes(task.outcome))),
  );
  const pairs = groupBy(tasks, (task) => JSON.stringify([task.actor, task.critic]));
  const byAgents: AgentPairStats[] = [...pairs.values()]
    .map((pair) => ({ actor_agent: pair[0]!.actor, critic_agent: pair[0]!.critic, ...taskFigures(pair) }))
    .sort((a, b) => b.total_tasks - a.total_tasks || a.actor_agent.localeCompare(b.actor_agent) || a.critic_agent.localeCompare(b.critic_agent));
  return { ...sessionCounts(counted.map((session) => session.summary)), ...taskFigures(tasks), by_agents: byAgents };
}

/** A task's sums over its sessions. */
export interface Task<S extends StatsSession = StatsSession> {
  first: S;
  outcome: Outcome | null;
  verified: boolean;
  /** Its DONE rested on the start's tests passing on the final code. */
  testsVerified: boolean;
  actor: string;
  critic: string;
  /** Its first session's models (null: the agent's default), as it names its agents by its first session. */
  actorModel: string | null;
  criticModel: string | null;
  iterations: number;
  done: number;
  rejections: number;
  criticDone: number;
  doneRefused: number;
  feedbackChars: number;
  improvements: number;
  durationSecs: number;
  costUsd: number | null;
  tokens: number;
}

/** The sessions grouped into tasks: those linked by `resumed_from`, each group in the order they started. */
export function tasksOf<S extends StatsSession>(sessions: readonly S[]): Task<S>[] {
  const byId = new Map(sessions.map((session) => [session.id, session]));
  const root = new Map<string, string>();
  const rootOf = (id: string): string => {
    let at = id;
    for (let up = root.get(at); up !== undefined && up !== at; up = root.get(at)) at = up;
    root.set(id, at);
    return at;
  };
  for (const session of sessions) {
    const from = session.figures.resumed_from;
    // A session carried on from one that is gone starts its task.
    if (from !== null && byId.has(from)) root.set(rootOf(session.id), rootOf(from));
  }
  return [...groupBy(sessions, (session) => rootOf(session.id)).values()].map((group) =>
    taskOf(group.sort((a, b) => a.startedMs - b.startedMs || a.id.localeCompare(b.id))),
  );
}

function taskOf<S extends StatsSession>(chain: readonly S[]): Task<S> {
  const first = chain[0]!;
  const last = chain.at(-1)!.summary;
  const task: Task<S> = {
    first,
    outcome: last.outcome,
    verified: last.outcome === 'success' && last.verification === 'verified',
    testsVerified: last.outcome === 'success' && chain.at(-1)!.figures.start_tests_passed !== null,
    actor: first.summary.actor_agent,
    critic: first.summary.critic_agent,
    actorModel: first.figures.actor_model,
    criticModel: first.figures.critic_model,
    ...{ iterations: 0, done: 0, rejections: 0, criticDone: 0, doneRefused: 0, feedbackChars: 0, improvements: 0, durationSecs: 0 },
    costUsd: null,
    tokens: 0,
  };
  let before: SessionFigures['last_decision'] = null;
  for (const { summary, figures } of chain) {
    task.iterations += figures.done + figures.continued + figures.errors;
    task.done += figures.done;
    task.rejections += figures.continued + figures.errors;
    task.criticDone += figures.critic_done;
    task.doneRefused += figures.done_refused;
    task.feedbackChars += figures.feedback_chars;
    // A rejection that ended one session and an approval that began the one carrying it on.
    task.improvements += figures.improvements + (isRejection(before) && figures.first_decision === 'DONE' ? 1 : 0);
    before = figures.last_decision ?? before;
    task.durationSecs += summary.duration_secs ?? 0;
    // A resumed session records the totals of the sessions it carries on with its own: the task's are the largest recorded.
    if (summary.total_cost_usd !== null) task.costUsd = Math.max(task.costUsd ?? 0, summary.total_cost_usd);
    task.tokens = Math.max(task.tokens, figures.total_tokens ?? 0);
  }
  return task;
}

function taskFigures(tasks: readonly Task[]): TaskFigures {
  const successes = tasks.filter((task) => task.outcome === 'success');
  const sum = (of: readonly Task[], field: (task: Task) => number) => of.reduce((total, task) => total + field(task), 0);
  const iterations = sum(tasks, (task) => task.iterations);
  const rejections = sum(tasks, (task) => task.rejections);
  const costs = tasks.flatMap((task) => (task.costUsd === null ? [] : [task.costUsd]));
  const totalCost = costs.length === 0 ? null : costs.reduce((a, b) => a + b, 0);
  return {
    total_tasks: tasks.length,
    task_success_rate: rate(successes.length, tasks.length),
    first_try_success_rate: rate(successes.filter((task) => task.iterations === 1).length, successes.length),
    avg_iterations_to_success: rate(
      sum(successes, (task) => task.iterations),
      successes.length,
    ),
    avg_cycle_time_secs: rate(
      sum(successes, (task) => task.durationSecs),
      successes.length,
    ),
    waste_rate: rate(tasks.filter((task) => task.outcome !== null && WASTE.includes(task.outcome)).length, tasks.length),
    total_iterations: iterations,
    critic_approval_rate: rate(
      sum(tasks, (task) => task.done),
      iterations,
    ),
    avg_feedback_length: rate(
      sum(tasks, (task) => task.feedbackChars),
      rejections,
    ),
    improvement_rate: rate(
      sum(tasks, (task) => task.improvements),
      rejections,
    ),
    verified_success_rate: rate(successes.filter((task) => task.verified).length, successes.length),
    tests_verified_success_rate: rate(successes.filter((task) => task.testsVerified).length, successes.length),
    done_refused_rate: rate(
      sum(tasks, (task) => task.doneRefused),
      sum(tasks, (task) => task.criticDone),
    ),
    total_cost_usd: totalCost,
    cost_per_success_usd: totalCost === null ? null : rate(totalCost, successes.length),
    total_tokens: sum(tasks, (task) => task.tokens),
  };
}

function groupBy<T>(items: readonly T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

/** A share or a mean; null when there is nothing to divide by. */
function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}
