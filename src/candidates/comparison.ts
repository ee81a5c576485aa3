import fs from 'node:fs';
import { openRepository, type Repository } from '../git/repository.js';
import { sessionChangeEnds } from '../git/snapshots.js';
import { diffSnapshots, type DiffSummary } from '../git/treeDiff.js';
import type { CandidateRow, GroupComparison, Judgment } from '../sessionFormat/candidateGroups.js';
import { loopProgressOf, loopProgressText } from '../sessionFormat/loopProgress.js';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import type { Outcome } from '../sessionFormat/sessionLines.js';
import { readSidecarEvents } from '../sessions/sidecarReader.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { groupStatus, type GroupState } from './groupRecord.js';

/**
 * The comparison of a group's candidates: per candidate, the figures a user weighs
 * (outcome, iterations, checks, cost and tokens, duration, files and lines changed,
 * the critic's confidence), read from each session and its record; then the ranking:
 * checks first, then outcome, then the judge.
 */

export interface ComparisonSources {
  store: SessionStore;
  sidecarDirOf: (sessionId: string) => string;
}

/** A candidate's whole change: from the tree its loop started with (after its setup) to the one it left. */
export async function candidateChange(repository: Repository, sessionId: string, maxDiffChars?: number): Promise<DiffSummary | null> {
  const ends = await sessionChangeEnds(repository, sessionId);
  return ends ? diffSnapshots(repository, ends.start.commit, ends.end.commit, maxDiffChars) : null;
}

const OUTCOME_ORDER: Readonly<Record<string, number>> = { success: 0, max_iterations_reached: 1, interrupted: 2, failed: 3 };

/**
 * Best first: more checks passed on the final tree, then a better outcome, then the
 * judge's order, then the order given. A candidate that ran no checks counts below
 * one whose checks ran and failed only when the group has checks at all.
 */
export function rankCandidates(rows: readonly CandidateRow[], judgment: Judgment | null): string[] {
  const judged = judgment?.ranking ?? [];
  const position = (label: string) => (judged.includes(label) ? judged.indexOf(label) : Number.MAX_SAFE_INTEGER);
  return [...rows].sort((a, b) => byChecks(a, b) || byOutcome(a, b) || position(a.label) - position(b.label) || a.index - b.index).map((row) => row.label);
}

const byChecks = (a: CandidateRow, b: CandidateRow) => (b.checks_passed ?? -1) - (a.checks_passed ?? -1);
const byOutcome = (a: CandidateRow, b: CandidateRow) => (OUTCOME_ORDER[a.status] ?? 9) - (OUTCOME_ORDER[b.status] ?? 9);

/**
 * Whether the ranking put first another candidate than the judge did, and what came
 * before the judge's word: the checks, or the outcome. Without it, the judge's
 * reasoning for a candidate that lost would read as the verdict.
 */
export function judgeOverruled(
  rows: readonly CandidateRow[],
  judgment: Judgment | null,
  ranking: readonly string[] | null,
): GroupComparison['judge_overruled'] {
  const judgedFirst = rows.find((row) => row.label === judgment?.ranking[0]);
  const rankedFirst = rows.find((row) => row.label === ranking?.[0]);
  if (!judgedFirst || !rankedFirst || judgedFirst === rankedFirst) return undefined;
  const by = byChecks(rankedFirst, judgedFirst) < 0 ? 'checks' : byOutcome(rankedFirst, judgedFirst) < 0 ? 'outcome' : null;
  return by ? { judged_first: judgedFirst.label, ranked_first: rankedFirst.label, by } : undefined;
}

export async function compareGroup(state: GroupState, sources: ComparisonSources): Promise<GroupComparison> {
  const status = groupStatus(state);
  const warnings = [...state.warnings];
  let repository: Repository | null = null;
  try {
    repository = await openRepository(state.started.working_dir);
  } catch (error) {
    warnings.push(`the repository ${state.started.working_dir} cannot be read (${(error as Error).message}): files and lines changed are not shown`);
  }
  const rows: CandidateRow[] = [];
  for (const candidate of state.started.candidates) {
    const finished = state.finished.get(candidate.label);
    const sessionId = state.sessions.get(candidate.label) ?? finished?.session_id ?? null;
    const row: CandidateRow = {
      index: candidate.index,
      label: candidate.label,
      agent: candidate.agent,
      model: candidate.model,
      session_id: sessionId,
      status: finished ? finished.outcome : status === 'running' ? (sessionId ? 'running' : 'pending') : 'crashed',
      progress: null,
      iterations: 0,
      checks_passed: null,
      checks_total: null,
      required_checks_failed: null,
      total_cost_usd: null,
      cost_estimated: false,
      total_tokens: 0,
      duration_secs: null,
      files_changed: null,
      insertions: null,
      deletions: null,
      confidence: null,
      summary: null,
      error: finished?.error ?? null,
      rank: null,
      worktree: !state.removed.has(candidate.label) && fs.existsSync(candidate.worktree) ? candidate.worktree : null,
      applied: state.applied?.label === candidate.label,
    };
    if (sessionId) await fillFromSession(row, sessionId, sources, repository, warnings);
    rows.push(row);
  }
  const ranking = state.end?.ranking.length ? state.end.ranking : null;
  if (ranking) {
    for (const row of rows) row.rank = ranking.indexOf(row.label) + 1 || null;
    rows.sort((a, b) => (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER));
  }
  const best = ranking ? rows[0] : undefined;
  return {
    group_id: state.id,
    prompt: state.started.prompt,
    working_dir: state.started.working_dir,
    started_at: state.started.timestamp,
    status,
    candidates: rows,
    ranking,
    judge: state.judgment,
    judge_overruled: judgeOverruled(rows, state.judgment, ranking),
    winner: best && best.status === 'success' ? best.label : null,
    applied: state.applied ? { label: state.applied.label, session_id: state.applied.session_id } : null,
    critic_agent: state.started.critic_agent,
    critic_model: state.started.critic_model,
    warnings,
  };
}

async function fillFromSession(
  row: CandidateRow,
  sessionId: string,
  sources: ComparisonSources,
  repository: Repository | null,
  warnings: string[],
): Promise<void> {
  const summary = await sources.store.summary(sessionId);
  if (!summary) {
    warnings.push(`the session of candidate ${row.label} (${sessionId}) is gone`);
    return;
  }
  const events = await readSidecarEvents(sources.sidecarDirOf(sessionId));
  if (summary.outcome) row.status = summary.outcome satisfies Outcome;
  row.iterations = summary.iterations;
  row.duration_secs = summary.duration_secs;
  row.confidence = summary.confidence;
  row.total_cost_usd = summary.total_cost_usd;
  const finished = lastOf(events, 'run_finished');
  const spend = lastOf(events, 'spend');
  if (finished) {
    row.total_cost_usd = finished.total_cost_usd;
    row.cost_estimated = finished.cost_estimated;
    row.total_tokens = finished.total_tokens;
    row.summary = finished.summary;
    row.error = finished.error ?? row.error;
  } else if (spend) {
    row.total_cost_usd = spend.total_cost_usd;
    row.cost_estimated = spend.cost_estimated;
    row.total_tokens = spend.total_tokens;
    row.duration_secs ??= row.status === 'running' ? spend.elapsed_secs : null;
  }
  const checks = events.filter((event) => event.type === 'check_finished');
  const lastChecked = Math.max(0, ...checks.map((event) => event.iteration));
  const onLastTree = checks.filter((event) => event.iteration === lastChecked);
  if (onLastTree.length > 0) {
    row.checks_passed = onLastTree.filter((event) => event.passed).length;
    row.checks_total = onLastTree.length;
    row.required_checks_failed = onLastTree.filter((event) => event.required && !event.passed).length;
  }
  if (row.status === 'running') row.progress = loopProgressText(loopProgressOf(events), ', ');
  const setup = lastOf(events, 'worktree_prepared')?.setup;
  if (setup && !setup.passed && !row.error) row.error = `setup \`${setup.command}\` failed`;
  if (repository) {
    try {
      const change = await candidateChange(repository, sessionId, 1);
      if (change) {
        row.files_changed = change.filesChanged;
        row.insertions = change.insertions;
        row.deletions = change.deletions;
      } else if (row.status !== 'running' && row.status !== 'pending') {
        row.files_changed = 0;
        row.insertions = 0;
        row.deletions = 0;
      }
    } catch (error) {
      warnings.push(`the change of candidate ${row.label} cannot be read: ${(error as Error).message}`);
    }
  }
}

function lastOf<T extends RunEvent['type']>(events: readonly RunEvent[], type: T): Extract<RunEvent, { type: T }> | undefined {
  for (let index = events.length - 1; index >= 0; index--) if (events[index]!.type === type) return events[index] as Extract<RunEvent, { type: T }>;
  return undefined;
}
