import type { RunEvent } from '../loop/runEvents.js';
import type { Session } from '../sessions/sessionStore.js';
import { projectName } from '../sessions/sessionSummary.js';
import type { IterationDetail, IterationView, SessionView, TimelineNote } from './sessionView.js';
import { splitUnifiedDiff } from './unifiedDiff.js';

/** Builds the viewer's model of a session from its file and its sidecar record. */

type EventOf<T extends RunEvent['type']> = Extract<RunEvent, { type: T }>;

function eventsFor<T extends RunEvent['type']>(events: readonly RunEvent[], type: T, iteration: number): EventOf<T>[] {
  return events.filter((event): event is EventOf<T> => event.type === type && 'iteration' in event && event.iteration === iteration);
}

/** The last recorded events of a number, for sessions that were resumed and repeat one. */
function lastFor<T extends RunEvent['type']>(events: readonly RunEvent[], type: T, iteration: number): EventOf<T> | undefined {
  return eventsFor(events, type, iteration).at(-1);
}

function sumUsage(runs: readonly EventOf<'agent_finished'>[]) {
  const withUsage = runs.filter((run) => run.usage);
  if (withUsage.length === 0) return null;
  const sum = (pick: (usage: NonNullable<EventOf<'agent_finished'>['usage']>) => number | undefined) => {
    const values = withUsage.map((run) => pick(run.usage!)).filter((value): value is number => value !== undefined);
    return values.length === 0 ? undefined : values.reduce((a, b) => a + b, 0);
  };
  return {
    inputTokens: sum((usage) => usage.inputTokens),
    outputTokens: sum((usage) => usage.outputTokens),
    cacheReadTokens: sum((usage) => usage.cacheReadTokens),
    cacheWriteTokens: sum((usage) => usage.cacheWriteTokens),
    costUsd: sum((usage) => usage.costUsd),
  };
}

export function buildSessionView(session: Session, events: readonly RunEvent[]): SessionView {
  const iterations = session.iterations.map((line): IterationView => {
    const n = line.iteration_number;
    const captured = lastFor(events, 'diff_captured', n);
    const decided = lastFor(events, 'critic_decision', n);
    const runs = eventsFor(events, 'agent_finished', n);
    const actorRuns = runs.filter((run) => run.role === 'actor');
    const criticRuns = runs.filter((run) => run.role === 'critic');
    const criticFinished = eventsFor(events, 'phase', n).filter((event) => event.phase === 'critic' && event.status === 'finished').at(-1);
    const files = captured?.files ?? splitUnifiedDiff(line.git_diff).map(({ patch: _patch, ...file }) => file);
    const countFrom = (pick: 'insertions' | 'deletions') =>
      files.every((file) => file[pick] === null) && files.length > 0 ? null : files.reduce((sum, file) => sum + (file[pick] ?? 0), 0);
    return {
      number: n,
      decision: line.critic_decision,
      feedback: line.feedback,
      remainingIssues: line.remaining_issues ?? [],
      summary: decided?.summary ?? null,
      confidence: decided?.confidence ?? null,
      finishedAt: line.timestamp,
      actorDurationSecs: line.actor_duration_secs,
      actorExitCode: line.actor_exit_code,
      criticDurationSecs: criticFinished?.duration_secs ?? null,
      filesChanged: line.git_files_changed,
      insertions: line.git_insertions ?? captured?.insertions ?? countFrom('insertions'),
      deletions: line.git_deletions ?? captured?.deletions ?? countFrom('deletions'),
      files,
      actorUsage: sumUsage(actorRuns),
      criticUsage: sumUsage(criticRuns),
      toolCalls: actorRuns.length > 0 ? actorRuns.reduce((sum, run) => sum + run.tool_calls, 0) : null,
      criticRevertedFiles: line.critic_reverted_files ?? [],
      actorOutputChars: line.actor_output.length,
      diffChars: line.git_diff.length,
    };
  });
  const costs = iterations.flatMap((it) => [it.actorUsage?.costUsd, it.criticUsage?.costUsd]).filter((value): value is number => value !== undefined);
  const tokens = iterations
    .flatMap((it) => [it.actorUsage, it.criticUsage])
    .flatMap((usage) => (usage ? [(usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0)] : []));
  const { start, end } = session;
  return {
    id: session.id,
    prompt: start.prompt,
    workingDir: start.working_dir,
    project: projectName(start.working_dir),
    actorAgent: start.actor_agent,
    criticAgent: start.critic_agent,
    actorModel: start.actor_model,
    criticModel: start.critic_model,
    maxIterations: start.max_iterations,
    startedAt: start.timestamp,
    outcome: end?.outcome ?? null,
    summary: end?.summary ?? null,
    confidence: end?.confidence ?? null,
    error: end?.error ?? null,
    durationSecs: end?.duration_secs ?? null,
    iterations,
    totalCostUsd: costs.length > 0 ? costs.reduce((a, b) => a + b, 0) : null,
    totalTokens: tokens.length > 0 ? tokens.reduce((a, b) => a + b, 0) : null,
    warnings: session.warnings,
    resumedFrom: start.resumed_from ?? null,
    notes: buildNotes(session, events),
  };
}

/** Resumes, interruptions and rollbacks from the sidecar record, placed between the iterations. */
function buildNotes(session: Session, events: readonly RunEvent[]): TimelineNote[] {
  const notes: TimelineNote[] = [];
  const lastIteration = session.iterations.at(-1)?.iteration_number ?? 0;
  const listPaths = (paths: readonly string[]) => (paths.length <= 5 ? paths.join(', ') : `${paths.slice(0, 5).join(', ')} and ${paths.length - 5} more`);
  let runs = 0;
  for (const event of events) {
    if (event.type === 'run_started') {
      if (runs > 0 && event.first_iteration) {
        notes.push({ kind: 'resumed', at: event.timestamp, afterIteration: event.first_iteration - 1, text: `Resumed at iteration ${event.first_iteration}.` });
      }
      runs += 1;
    } else if (event.type === 'agent_finished' && event.interrupted) {
      notes.push({ kind: 'interrupted', at: event.timestamp, afterIteration: event.iteration - 1, text: `Interrupted during iteration ${event.iteration} (the ${event.role} was stopped).` });
    } else if (event.type === 'rollback') {
      const parts = [event.restored.length > 0 ? `restored ${listPaths(event.restored)}` : '', event.removed.length > 0 ? `removed ${listPaths(event.removed)}` : '', event.overwritten.length > 0 ? `overwrote your changes to ${listPaths(event.overwritten)}` : ''].filter(Boolean);
      notes.push({ kind: 'rollback', at: event.timestamp, afterIteration: lastIteration, text: `Rolled back to before iteration ${event.to_iteration}: ${parts.join('; ') || 'nothing to write'}.` });
    } else if (event.type === 'rollback_undone') {
      notes.push({ kind: 'rollback_undone', at: event.timestamp, afterIteration: lastIteration, text: `Rollback ${event.rollback} undone: ${event.restored.length + event.removed.length} file(s) put back.` });
    }
  }
  return notes;
}

export function buildIterationDetail(session: Session, events: readonly RunEvent[], number: number): IterationDetail | undefined {
  const line = session.iterations.find((it) => it.iteration_number === number);
  if (!line) return undefined;
  return {
    number,
    actorOutput: line.actor_output,
    actorStderr: line.actor_stderr,
    diff: line.git_diff,
    criticOutput: lastFor(events, 'critic_decision', number)?.critic_output ?? null,
  };
}
