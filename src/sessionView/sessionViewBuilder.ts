import { addUsage } from '../agents/agentEventHelpers.js';
import type { Usage } from '../sessionFormat/agentEvents.js';
import { describeEvent, oneLine, resumedLine, type DescribedLine } from '../sessionFormat/eventWording.js';
import type { ReviewRecord } from '../sessionFormat/reviewRecords.js';
import type { RunEvent, RunEventOf, RunEventType } from '../sessionFormat/runEvents.js';
import { acceptedChanges, foldReview, isReviewEvent } from '../sessions/reviewState.js';
import { diffIsSinceHead, type IterationLine } from '../sessionFormat/sessionLines.js';
import type { Session } from '../sessions/sessionStore.js';
import { projectName } from '../sessions/sessionSummary.js';
import type { IterationDetail, IterationView, ProtectedStanding, SessionView, TimelineNote } from './sessionView.js';
import { splitUnifiedDiff } from './unifiedDiff.js';

/** Builds the viewer's model of a session from its file and its sidecar record. */

function eventsFor<T extends RunEventType>(events: readonly RunEvent[], type: T, iteration: number): RunEventOf<T>[] {
  return events.filter((event): event is RunEventOf<T> => event.type === type && 'iteration' in event && event.iteration === iteration);
}

/** The last recorded events of a number, for sessions that were resumed and repeat one. */
function lastFor<T extends RunEventType>(events: readonly RunEvent[], type: T, iteration: number): RunEventOf<T> | undefined {
  return eventsFor(events, type, iteration).at(-1);
}

/** What these agent runs used together, or null when none of them said. */
function sumUsage(runs: readonly RunEventOf<'agent_finished'>[]): Usage | null {
  const usages = runs.flatMap((run) => (run.usage ? [run.usage] : []));
  return usages.length === 0 ? null : usages.reduce(addUsage);
}

/** One iteration as the viewer shows it: its line without the outputs and the diff, and what the sidecar adds. */
export function buildIterationView(line: IterationLine, events: readonly RunEvent[]): IterationView {
  const n = line.iteration_number;
  const { type: _type, actor_output, actor_stderr: _stderr, git_diff, ...facts } = line;
  const captured = lastFor(events, 'diff_captured', n);
  const decided = lastFor(events, 'critic_decision', n);
  const judged = lastFor(events, 'requirements', n);
  const runs = eventsFor(events, 'agent_finished', n);
  const actorRuns = runs.filter((run) => run.role === 'actor');
  const criticRuns = runs.filter((run) => run.role === 'critic');
  const criticFinished = eventsFor(events, 'phase', n)
    .filter((event) => event.phase === 'critic' && event.status === 'finished')
    .at(-1);
  const files = captured?.files ?? splitUnifiedDiff(git_diff).map(({ patch: _patch, ...file }) => file);
  const countFrom = (pick: 'insertions' | 'deletions') =>
    files.every((file) => file[pick] === null) && files.length > 0 ? null : files.reduce((sum, file) => sum + (file[pick] ?? 0), 0);
  return {
    ...facts,
    git_insertions: line.git_insertions ?? captured?.insertions ?? countFrom('insertions'),
    git_deletions: line.git_deletions ?? captured?.deletions ?? countFrom('deletions'),
    remaining_issues: line.remaining_issues ?? [],
    critic_reverted_files: line.critic_reverted_files ?? [],
    summary: decided?.summary ?? null,
    confidence: decided?.confidence ?? null,
    critic_duration_secs: criticFinished?.duration_secs ?? null,
    files,
    actor_usage: sumUsage(actorRuns),
    critic_usage: sumUsage(criticRuns),
    tool_calls: actorRuns.length > 0 ? actorRuns.reduce((sum, run) => sum + run.tool_calls, 0) : null,
    diff_since_head: diffIsSinceHead(line),
    actor_output_chars: actor_output.length,
    diff_chars: git_diff.length,
    // The last run of each check for this number (a resumed session can repeat one).
    checks: [...new Map(eventsFor(events, 'check_finished', n).map((check) => [check.name, check])).values()].map((check) => ({
      name: check.name,
      command: check.command,
      required: check.required,
      passed: check.passed,
      exit_code: check.exit_code,
      duration_secs: check.duration_secs,
      timed_out: check.timed_out,
    })),
    protected_standing: protectedStandingOf(line, events),
    done_refused: refusalOf(line, events),
    ...(judged && { requirements: { source: judged.source, requirements: judged.requirements } }),
  };
}

/** The protected changes judged on an iteration's tree (the last judgement of each); without a record, the line's weakenings. */
export function protectedStandingOf(line: Pick<IterationLine, 'iteration_number' | 'protected_changes'>, events: readonly RunEvent[]): ProtectedStanding[] {
  const judged = eventsFor(events, 'protected_change', line.iteration_number);
  if (judged.length === 0) return (line.protected_changes ?? []).map((change) => ({ change, status: 'weakening', reason: null }));
  const keyOf = (event: RunEventOf<'protected_change'>) => `${event.change.file}\0${event.change.kind}`;
  return [...new Map(judged.map((event) => [keyOf(event), { change: event.change, status: event.status, reason: event.reason ?? null }])).values()];
}

/** Why the gate refused the critic's DONE: the record's `done_refused`, else what the line says (its failed checks may include advisory ones). */
export function refusalOf(
  line: Pick<IterationLine, 'iteration_number' | 'critic_verdict' | 'critic_decision' | 'failed_checks' | 'protected_changes' | 'unmet_requirements'>,
  events: readonly RunEvent[],
): IterationView['done_refused'] {
  if (line.critic_verdict !== 'DONE' || line.critic_decision === 'DONE') return null;
  const refused = lastFor(events, 'done_refused', line.iteration_number);
  if (refused)
    return {
      failed_checks: refused.failed_checks,
      ...(refused.failed_tests && { failed_tests: refused.failed_tests }),
      protected_changes: refused.protected_changes ?? [],
      ...(refused.unverified && { unverified: refused.unverified }),
      ...(refused.unmet_requirements && { unmet_requirements: refused.unmet_requirements }),
    };
  const unmet = line.unmet_requirements?.map((requirement) => requirement.id);
  return { failed_checks: line.failed_checks ?? [], protected_changes: line.protected_changes ?? [], ...(unmet?.length && { unmet_requirements: unmet }) };
}

/**
 * Where the changes judged on the iterations stand now: the user may have accepted a
 * weakening since (or taken an acceptance back), and the next judgement follows that.
 * Only files this session's review record speaks of change: an acceptance made on a
 * session it carries on stays as judged.
 */
export function standingNowOf(review: readonly ReviewRecord[]): (standing: ProtectedStanding) => ProtectedStanding {
  const spokenOf = new Set(review.flatMap((record) => (record.type === 'change_accepted' || record.type === 'acceptance_undone' ? [record.file] : [])));
  const accepted = acceptedChanges(review);
  return (standing) => {
    if (standing.status === 'allowed' || !spokenOf.has(standing.change.file)) return standing;
    const acceptance = accepted.get(standing.change.file);
    return acceptance?.kinds.includes(standing.change.kind)
      ? { ...standing, status: 'accepted', reason: acceptance.reason }
      : { ...standing, status: 'weakening', reason: null };
  };
}

/** The session's view from its start and end, its iterations' views and its sidecar record. */
export function assembleSessionView(
  session: Pick<Session, 'id' | 'start' | 'end' | 'warnings'>,
  iterations: IterationView[],
  events: readonly RunEvent[],
  review: readonly ReviewRecord[] = [],
): SessionView {
  const usages = iterations.flatMap((it) => [it.actor_usage, it.critic_usage]).filter((usage): usage is Usage => usage !== null);
  const costs = usages.flatMap((usage) => (usage.costUsd === undefined ? [] : [usage.costUsd]));
  const tokens = usages.map((usage) => (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0));
  const standingNow = standingNowOf(review);
  return {
    id: session.id,
    project: projectName(session.start.working_dir),
    start: session.start,
    end: session.end,
    iterations: iterations.map((iteration) => ({ ...iteration, protected_standing: iteration.protected_standing.map(standingNow) })),
    total_cost_usd: costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null,
    total_tokens: tokens.length > 0 ? tokens.reduce((a, b) => a + b, 0) : null,
    warnings: session.warnings,
    notes: buildNotes(iterations.at(-1)?.iteration_number ?? 0, events),
    guards: events.flatMap((event) => (event.type === 'run_started' && event.guards ? [event.guards] : [])).at(-1) ?? null,
    review: foldReview(events.filter(isReviewEvent), review),
  };
}

/** Resumes, interruptions, rollbacks, applies and the like from the sidecar record, placed between the iterations. */
function buildNotes(lastIteration: number, events: readonly RunEvent[]): TimelineNote[] {
  const notes: TimelineNote[] = [];
  let runs = 0;
  for (const event of events) {
    const note = noteOf(event, { runsBefore: runs, lastIteration });
    if (note) notes.push(note);
    if (event.type === 'run_started') runs += 1;
  }
  return notes;
}

/** An event the viewer shows between the iterations, in the words of the live log (`eventWording.ts`); undefined for the others. */
function noteOf(event: RunEvent, where: { runsBefore: number; lastIteration: number }): TimelineNote | undefined {
  const note = (kind: TimelineNote['kind'], afterIteration: number, lines: DescribedLine[]): TimelineNote => ({
    kind,
    at: event.timestamp,
    after_iteration: afterIteration,
    text: oneLine(lines),
  });
  const words = (): DescribedLine[] => describeEvent(event, { showAgentText: false });
  switch (event.type) {
    case 'run_started':
      return where.runsBefore > 0 && event.first_iteration ? note('resumed', event.first_iteration - 1, [resumedLine(event.first_iteration)]) : undefined;
    case 'agent_finished':
      return event.interrupted ? note('interrupted', event.iteration - 1, words()) : undefined;
    case 'stall':
      return note('stall', event.iteration, words());
    case 'agent_waiting':
      // Before the iteration whose agent waits: it has not ended yet.
      return note('agent_waiting', event.iteration - 1, words());
    case 'needs_input_answered':
      return note('needs_input_answered', event.iteration, words());
    case 'worktree_prepared':
      return note('worktree_prepared', 0, words());
    case 'rollback':
    case 'rollback_undone':
    case 'applied':
    case 'apply_undone':
    case 'imported':
      return note(event.type, where.lastIteration, words());
    default:
      return undefined;
  }
}

/** One iteration's outputs and diff, with the critic's whole answer from the sidecar record. */
export function iterationDetailOf(line: IterationLine, events: readonly RunEvent[]): IterationDetail {
  const number = line.iteration_number;
  return {
    number,
    actor_output: line.actor_output,
    actor_stderr: line.actor_stderr,
    diff: line.git_diff,
    critic_output: lastFor(events, 'critic_decision', number)?.critic_output ?? null,
  };
}
