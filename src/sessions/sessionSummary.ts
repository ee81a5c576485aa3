import path from 'node:path';
import type { SessionEndLine, SessionStartLine } from '../sessionFormat/sessionLines.js';
import type { SessionStats, SessionSummary } from '../sessionFormat/sessionSummaries.js';

/** The figures of `sessions stats` counted per session, as the original's: all but the task figures. */
export type SessionCounts = Pick<
  SessionStats,
  'total_sessions' | 'success_rate' | 'avg_iterations' | 'avg_duration_secs' | 'sessions_over_time' | 'by_project'
>;
import { previewLine } from '../text/truncate.js';

export const PROMPT_PREVIEW_CHARS = 100;

/** The project a session belongs to: the last component of its working directory. */
export function projectName(workingDir: string): string {
  const trimmed = workingDir.replace(/[\\/]+$/, '');
  return path.basename(trimmed) || trimmed || '(unknown)';
}

export function summarize(id: string, start: SessionStartLine, lastIterationNumber: number | undefined, end: SessionEndLine | undefined): SessionSummary {
  return {
    id,
    timestamp: start.timestamp,
    prompt_preview: previewLine(start.prompt, PROMPT_PREVIEW_CHARS),
    working_dir: start.working_dir,
    project: projectName(start.working_dir),
    outcome: end?.outcome ?? null,
    iterations: end?.iterations ?? lastIterationNumber ?? 0,
    duration_secs: end?.duration_secs ?? null,
    confidence: end?.confidence ?? null,
    actor_agent: start.actor_agent,
    critic_agent: start.critic_agent,
    total_cost_usd: end?.total_cost_usd ?? null,
    verification: end?.outcome === 'success' ? (end.verification ?? null) : null,
  };
}

/**
 * Aggregates as the original defined them: rates over all listed sessions (a
 * running session counts as not successful yet), durations over those that ended.
 */
export function sessionCounts(summaries: readonly SessionSummary[]): SessionCounts {
  const total = summaries.length;
  if (total === 0) {
    return { total_sessions: 0, success_rate: 0, avg_iterations: 0, avg_duration_secs: 0, sessions_over_time: [], by_project: [] };
  }
  const successes = summaries.filter((s) => s.outcome === 'success').length;
  const durations = summaries.flatMap((s) => (s.duration_secs === null ? [] : [s.duration_secs]));
  const perDay = new Map<string, number>();
  const perProject = new Map<string, { total: number; successes: number }>();
  for (const summary of summaries) {
    const day = new Date(summary.timestamp).toISOString().slice(0, 10);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
    const project = perProject.get(summary.project) ?? { total: 0, successes: 0 };
    project.total += 1;
    if (summary.outcome === 'success') project.successes += 1;
    perProject.set(summary.project, project);
  }
  return {
    total_sessions: total,
    success_rate: successes / total,
    avg_iterations: summaries.reduce((sum, s) => sum + s.iterations, 0) / total,
    avg_duration_secs: durations.length === 0 ? 0 : durations.reduce((a, b) => a + b, 0) / durations.length,
    sessions_over_time: [...perDay.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([date, count]) => ({ date, count })),
    by_project: [...perProject.entries()]
      .map(([project, { total: projectTotal, successes: projectSuccesses }]) => ({
        project,
        total: projectTotal,
        success_rate: projectSuccesses / projectTotal,
      }))
      .sort((a, b) => b.total - a.total || a.project.localeCompare(b.project)),
  };
}
