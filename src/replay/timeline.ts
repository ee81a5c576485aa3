import type { ReviewRecord } from '../sessionFormat/reviewRecords.js';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { diffIsSinceHead } from '../sessionFormat/sessionLines.js';
import type { TimelineEntry, TimelineKind } from '../sessionFormat/timelineEntries.js';
import type { Session } from '../sessions/sessionStore.js';

/**
 * A session's replay: everything recorded, in order, one entry a step. Built from
 * the session file and, when there is one, its sidecar record; a session from the
 * original codeloops (three line types, no sidecar) gives the coarser timeline its
 * lines allow. The entries' schema is in `sessionFormat/timelineEntries.ts`.
 */

type Entry<K extends TimelineKind> = Omit<Extract<TimelineEntry, { kind: K }>, 'offset_secs'>;
type AnyEntry = { [K in TimelineKind]: Entry<K> }[TimelineKind];

export function buildTimeline(session: Session, events: readonly RunEvent[], review: readonly ReviewRecord[] = []): TimelineEntry[] {
  const { start, end } = session;
  const { type: _type, timestamp, ...header } = start;
  const entries: AnyEntry[] = [
    { ...header, kind: 'session_started', at: timestamp, iteration: null, session_id: session.id, resumed_from: start.resumed_from ?? null },
  ];
  // Iterations the sidecar saw reviewed; the others come from their session lines.
  const reviewed = new Set(events.filter((event) => event.type === 'critic_decision').map((event) => event.iteration));
  let runs = 0;
  for (const event of events) {
    entries.push(...fromEvent(event, runs));
    if (event.type === 'run_started') runs += 1;
  }
  for (const record of review) {
    const entry = fromReviewRecord(record);
    if (entry) entries.push(entry);
  }
  for (const line of session.iterations) {
    if (reviewed.has(line.iteration_number)) continue;
    const iteration = line.iteration_number;
    // The line is written when the iteration ends: the actor ran before, for as long as it says.
    entries.push({ kind: 'phase', at: null, iteration, phase: 'actor', status: 'finished', duration_secs: line.actor_duration_secs });
    entries.push({
      kind: 'diff',
      at: line.timestamp,
      iteration,
      files_changed: line.git_files_changed,
      insertions: line.git_insertions ?? null,
      deletions: line.git_deletions ?? null,
      files: null,
      since_head: diffIsSinceHead(line),
    });
    entries.push({
      kind: 'verdict',
      at: line.timestamp,
      iteration,
      decision: line.critic_decision,
      decision_text: line.critic_decision_text ?? null,
      feedback: line.feedback,
      summary: null,
      confidence: null,
      remaining_issues: line.remaining_issues ?? [],
    });
  }
  if (end) {
    entries.push({
      kind: 'session_ended',
      at: end.timestamp,
      iteration: null,
      outcome: end.outcome,
      iterations: end.iterations,
      summary: end.summary,
      confidence: end.confidence,
      error: end.error ?? null,
      error_code: end.error_code ?? null,
      stop_reason: end.stop_reason ?? null,
      total_cost_usd: end.total_cost_usd ?? null,
      total_tokens: end.total_tokens ?? null,
      duration_secs: end.duration_secs,
      ...(end.verification && { verification: end.verification }),
      ...(end.outcome === 'success' && end.verified_by && { verified_by: end.verified_by }),
    });
  }
  const startedAt = Date.parse(start.timestamp);
  // Stable by time; entries without a time keep their place next to their iteration.
  return orderEntries(entries).map(
    (entry) => ({ ...entry, offset_secs: entry.at === null ? null : Math.round(Date.parse(entry.at) - startedAt) / 1000 }) as TimelineEntry,
  );
}

function fromEvent(event: RunEvent, runsBefore: number): AnyEntry[] {
  const at = event.timestamp;
  switch (event.type) {
    case 'critic_decision': {
      const entries: AnyEntry[] = [
        {
          kind: 'verdict',
          at,
          iteration: event.iteration,
          decision: event.decision,
          decision_text: null,
          feedback: event.feedback,
          summary: event.summary,
          confidence: event.confidence,
          remaining_issues: event.remaining_issues,
          ...(event.evidence && { evidence: event.evidence }),
        },
      ];
      if (event.resolved?.length) entries.push({ kind: 'resolved', at, iteration: event.iteration, ids: event.resolved, by: 'critic', reopened: false });
      for (const finding of event.findings ?? []) entries.push({ ...finding, kind: 'finding', at, iteration: event.iteration });
      return entries;
    }
    case 'review_delivered':
    case 'review_claimed':
      return [{ kind: event.type, at, iteration: event.iteration, ids: event.ids }];
    case 'review_paused':
      return [{ kind: 'review_paused', at, iteration: event.iteration, ...(event.needs_input && { needs_input: event.needs_input }) }];
    case 'needs_input':
      return [{ kind: 'needs_input', at, iteration: event.iteration, from: event.from, question: event.question }];
    case 'needs_input_answered':
      return [{ kind: 'needs_input_answered', at, iteration: event.iteration, answer: event.answer }];
    case 'review_resumed':
      return [{ kind: 'review_resumed', at, iteration: event.iteration, action: event.action, paused_secs: event.paused_secs }];
    default: {
      const entry = fromStepEvent(event, runsBefore) ?? fromMoveEvent(event);
      return entry ? [entry] : [];
    }
  }
}

/** What the user did in review, where it goes in the timeline. */
function fromReviewRecord(record: ReviewRecord): AnyEntry | undefined {
  const at = record.timestamp;
  switch (record.type) {
    case 'comment':
      return {
        kind: 'comment',
        at,
        iteration: record.iteration,
        id: record.id,
        file: record.file,
        line: record.line,
        end_line: record.end_line,
        text: record.text,
      };
    case 'resolved':
    case 'reopened':
      return { kind: 'resolved', at, iteration: null, ids: [record.id], by: 'user', reopened: record.type === 'reopened' };
    case 'hunk_rejected':
      return { kind: 'hunk_rejected', at, iteration: record.iteration, id: record.id, hunk: record.hunk, file: record.file, reason: record.reason };
    case 'rejection_undone':
      return { kind: 'rejection_undone', at, iteration: null, id: record.id, restored: record.restored };
    case 'staged':
      return { kind: 'staged', at, iteration: record.iteration, files: record.files };
  }
}

/** What happened within an iteration (and a resume before one). */
function fromStepEvent(event: RunEvent, runsBefore: number): AnyEntry | undefined {
  const at = event.timestamp;
  switch (event.type) {
    case 'run_started':
      return runsBefore > 0 && event.first_iteration ? { kind: 'resumed', at, iteration: null, first_iteration: event.first_iteration } : undefined;
    case 'phase':
      return { kind: 'phase', at, iteration: event.iteration, phase: event.phase, status: event.status, duration_secs: event.duration_secs ?? null };
    case 'agent_event':
      return event.event.kind === 'tool_use'
        ? { kind: 'tool_call', at, iteration: event.iteration, role: event.role, name: event.event.name, input: event.event.summary }
        : undefined;
    case 'agent_finished':
      return {
        kind: 'agent_finished',
        at,
        iteration: event.iteration,
        role: event.role,
        exit_code: event.exit_code,
        duration_secs: event.duration_secs,
        succeeded: event.succeeded,
        failure_reason: event.failure_reason,
        timed_out: event.timed_out,
        interrupted: event.interrupted,
        agent_session_id: event.agent_session_id,
        input_tokens: event.usage?.inputTokens ?? null,
        output_tokens: event.usage?.outputTokens ?? null,
        cost_usd: event.usage?.costUsd ?? null,
        tool_calls: event.tool_calls,
        unknown_events: event.drift?.unknownEvents ?? null,
        unknown_fields: event.drift?.unknownFields ?? null,
      };
    case 'diff_captured':
      return {
        kind: 'diff',
        at,
        iteration: event.iteration,
        files_changed: event.files_changed,
        insertions: event.insertions,
        deletions: event.deletions,
        files: event.files,
        since_head: false,
      };
    case 'critic_changes_reverted':
      return { kind: 'critic_changes_reverted', at, iteration: event.iteration, paths: event.paths };
    case 'nested_repositories_appeared':
      return { kind: 'nested_repositories_appeared', at, iteration: event.iteration, repositories: event.repositories };
    case 'check_finished':
      return fromCheckFinished(event, at);
    case 'test_baseline':
    case 'test_oracle':
      return fromTestEvent(event, at);
    case 'done_refused':
    case 'requirements': {
      // Their fields are the entry's, under the same names.
      const { type, timestamp: _timestamp, ...facts } = event;
      return { kind: type, at, ...facts } as AnyEntry;
    }
    case 'protected_change':
      return { kind: 'protected_change', at, iteration: event.iteration, change: event.change, status: event.status, reason: event.reason };
    case 'stall':
      return { kind: 'stall', at, iteration: event.iteration, action: event.action, reason: event.reason, since_iteration: event.since_iteration };
    case 'agent_waiting':
      return { kind: 'agent_waiting', at, iteration: event.iteration, role: event.role, agent: event.agent, reason: event.reason, until: event.until };
    default:
      return undefined;
  }
}

/** What happened to the session's files between its runs (rollbacks, applies, an import, a candidate's worktree), and warnings. */
function fromMoveEvent(event: RunEvent): AnyEntry | undefined {
  const at = event.timestamp;
  switch (event.type) {
    case 'warning':
      return { kind: 'warning', at, iteration: null, message: event.message };
    case 'rollback':
      return {
        kind: 'rollback',
        at,
        iteration: event.to_iteration,
        rollback: event.rollback,
        to_iteration: event.to_iteration,
        restored: event.restored,
        removed: event.removed,
        overwritten: event.overwritten,
      };
    case 'rollback_undone':
      return {
        kind: 'rollback_undone',
        at,
        iteration: null,
        rollback: event.rollback,
        restored: event.restored,
        removed: event.removed,
        overwritten: event.overwritten,
      };
    case 'worktree_prepared':
      return {
        kind: 'worktree_prepared',
        at,
        iteration: null,
        worktree: event.worktree,
        copied: event.copied,
        not_found: event.not_found,
        setup_command: event.setup?.command ?? null,
        setup_passed: event.setup?.passed ?? null,
        setup_exit_code: event.setup?.exit_code ?? null,
        setup_duration_secs: event.setup?.duration_secs ?? null,
      };
    case 'applied':
      return {
        kind: 'applied',
        at,
        iteration: null,
        apply: event.apply,
        target_dir: event.target_dir,
        restored: event.restored,
        removed: event.removed,
        overwritten: event.overwritten,
      };
    case 'apply_undone':
      return {
        kind: 'apply_undone',
        at,
        iteration: null,
        apply: event.apply,
        restored: event.restored,
        removed: event.removed,
        overwritten: event.overwritten,
      };
    case 'imported':
      return { kind: 'imported', at, iteration: null, from_working_dir: event.from_working_dir, bundle: event.bundle };
    default:
      // Snapshots, streamed text, iteration boundaries and the run's end are in other entries.
      return undefined;
  }
}

/** Sorted by time; an entry without one goes right before the next timed entry of its iteration. */
function orderEntries(entries: AnyEntry[]): AnyEntry[] {
  const keyed = entries.map((entry, index) => ({ entry, index, time: entry.at === null ? NaN : Date.parse(entry.at) }));
  for (const item of keyed) {
    if (!Number.isNaN(item.time)) continue;
    const next = keyed.find((other) => other.entry.iteration === item.entry.iteration && !Number.isNaN(other.time) && other.index > item.index);
    item.time = next ? next.time - 0.001 : Number.POSITIVE_INFINITY;
  }
  // The session's end is last whatever the clocks say; rollbacks come after it in time anyway.
  return keyed.sort((a, b) => a.time - b.time || a.index - b.index).map((item) => item.entry);
}

/** The start's tests: the baseline's counts (not its ids), the oracle's verdict. */
function fromTestEvent(event: Extract<RunEvent, { type: 'test_baseline' | 'test_oracle' }>, at: string): AnyEntry {
  if (event.type === 'test_oracle') {
    const { iteration, passed, baseline, findings, accepted, flaky } = event;
    return { kind: 'test_oracle', at, iteration, passed, baseline, findings, accepted, flaky };
  }
  const checks = event.checks.map((check) => ({
    name: check.name,
    runner: check.runner,
    passing: check.passing.length,
    failing: check.failing.length,
    tests: check.tests,
  }));
  return { kind: 'test_baseline', at, iteration: null, checks, unavailable: event.unavailable };
}

function fromCheckFinished(event: Extract<RunEvent, { type: 'check_finished' }>, at: string): AnyEntry {
  return {
    kind: 'check',
    at,
    iteration: event.iteration,
    name: event.name,
    command: event.command,
    required: event.required,
    passed: event.passed,
    exit_code: event.exit_code,
    duration_secs: event.duration_secs,
    timed_out: event.timed_out,
    output: event.output,
    ...(event.when !== undefined && { when: event.when }),
    ...(event.hidden !== undefined && { hidden: event.hidden }),
    ...(event.isolated !== undefined && { isolated: event.isolated }),
    ...(event.tests !== undefined && { tests: event.tests }),
  };
}
