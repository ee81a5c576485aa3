import { changeStats } from '../git/branches.js';
import type { Repository } from '../git/repository.js';
import type { TaskResult } from '../sessionFormat/queueRecords.js';
import type { RunEvent, RunSummary } from '../sessionFormat/runEvents.js';
import { readSidecarEvents } from '../sessions/sidecarReader.js';

/**
 * What `queue report` says of a task, read once when its loop ends: the summary's
 * figures, the checks on the last tree that ran them and the findings the critic left
 * open (from the session's sidecar), and the files and lines changed from the task's
 * start to what it left.
 */
export async function taskResultOf(
  summary: RunSummary,
  sidecarDirOf: (sessionId: string) => string,
  change: { repository: Repository; from: string | null; to: string | null },
): Promise<TaskResult> {
  const events = await readSidecarEvents(sidecarDirOf(summary.session_id));
  const stats = change.from && change.to ? await changeStats(change.repository, change.from, change.to).catch(() => null) : null;
  return {
    summary: summary.summary,
    verification: summary.verification,
    iterations: summary.iterations,
    total_cost_usd: summary.total_cost_usd,
    duration_secs: summary.total_duration_secs,
    error: summary.error,
    error_code: summary.error_code,
    files_changed: stats?.files ?? null,
    insertions: stats?.insertions ?? null,
    deletions: stats?.deletions ?? null,
    checks: lastChecks(events),
    open_findings: openFindings(events),
  };
}

function lastChecks(events: readonly RunEvent[]): TaskResult['checks'] {
  const checks = events.filter((event) => event.type === 'check_finished');
  const last = Math.max(0, ...checks.map((event) => event.iteration));
  return checks.filter((event) => event.iteration === last).map((event) => ({ name: event.name, passed: event.passed, required: event.required }));
}

function openFindings(events: readonly RunEvent[]): TaskResult['open_findings'] {
  const open = new Map<string, TaskResult['open_findings'][number]>();
  for (const event of events) {
    if (event.type !== 'critic_decision') continue;
    for (const id of event.resolved ?? []) open.delete(id);
    for (const finding of event.findings ?? []) open.set(finding.id, { id: finding.id, file: finding.file, line: finding.line, message: finding.message });
  }
  return [...open.values()];
}
