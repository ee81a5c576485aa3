import type { Forecast } from '../../src/sessionFormat/forecast.js';
import { endLine, iterationLine, startLine, writeSession } from './sessionFixtures.js';

/**
 * A sessions folder with known forecasts. Pair A is Claude Code (or `names.agent`) as
 * actor and critic, models unset (the agents' defaults); the project shop may have
 * another name (`names.shop`: a repository's folder). Every figure below is worked out by hand.
 *
 *   project  task  sessions     pair            iterations  cost     duration  outcome
 *   shop     P1    1            A               1           $0.40    60 s      success
 *   shop     P2    1            A               3           $1.20    200 s     failed (counts: a failed run cost too)
 *   shop     P3    2 (resumed)  A               2+2 = 4     $1.10    100+80 s  interrupted, then success ($1.10 the chain's total)
 *   shop     P4    1            A               2           $0.70    120 s     success
 *   shop     P5    1            A               5           $2.43    400 s     max_iterations_reached
 *   shop     P6    1            A               2           none     90 s      success (its agent reported no cost)
 *   shop     —     1            A               1           —        —         still running: not finished, not counted
 *   shop     —     1            A, critic opus  1           $9.00    50 s      another model: not comparable
 *   shop     —     1            A, actor sonnet 1           $7.00    40 s      another model: not comparable
 *   shop     X1…3  3            Codex + Claude  1 each      $0.10    10 s      success: three tasks, too few anywhere
 *   garden   G1    1            A               1           $0.30    30 s      success
 *   garden   G2    1            A               6           $3.00    600 s     failed
 */
export function writeForecastSessions(dir: string, names: { shop?: string; agent?: string } = {}): void {
  let day = 0;
  const agent = names.agent ?? 'Claude Code';
  const start = (prompt: string, project: string, extra: Record<string, unknown> = {}) =>
    startLine({
      prompt,
      working_dir: `/w/${project === 'shop' ? (names.shop ?? 'shop') : project}`,
      timestamp: `2025-04-${String(++day).padStart(2, '0')}T10:00:00Z`,
      ...{ actor_agent: agent, critic_agent: agent },
      ...extra,
    });
  const iterations = (count: number, from = 1) =>
    Array.from({ length: count }, (_, index) => iterationLine(from + index, { critic_decision: index === count - 1 ? 'DONE' : 'CONTINUE' }));
  const task = (prompt: string, project: string, count: number, end: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    writeSession(dir, [start(prompt, project, extra), ...iterations(count), endLine({ iterations: count, ...end })]);

  task('P1', 'shop', 1, { duration_secs: 60, total_cost_usd: 0.4 });
  task('P2', 'shop', 3, { outcome: 'failed', summary: null, duration_secs: 200, total_cost_usd: 1.2 });
  const first = task('P3', 'shop', 2, { outcome: 'interrupted', summary: null, duration_secs: 100, total_cost_usd: 0.5 });
  writeSession(dir, [
    start('P3', 'shop', { resumed_from: first, resumed_after_iteration: 2 }),
    ...iterations(2, 3),
    endLine({ iterations: 4, duration_secs: 80, total_cost_usd: 1.1 }),
  ]);
  task('P4', 'shop', 2, { duration_secs: 120, total_cost_usd: 0.7 });
  task('P5', 'shop', 5, { outcome: 'max_iterations_reached', summary: null, duration_secs: 400, total_cost_usd: 2.43 });
  task('P6', 'shop', 2, { duration_secs: 90 });
  writeSession(dir, [start('Still running', 'shop'), iterationLine(1)]);
  task('Opus critic', 'shop', 1, { duration_secs: 50, total_cost_usd: 9 }, { critic_model: 'opus' });
  task('Sonnet actor', 'shop', 1, { duration_secs: 40, total_cost_usd: 7 }, { actor_model: 'sonnet' });
  for (const name of ['X1', 'X2', 'X3']) task(name, 'shop', 1, { duration_secs: 10, total_cost_usd: 0.1 }, { actor_agent: 'Codex' });
  task('G1', 'garden', 1, { duration_secs: 30, total_cost_usd: 0.3 });
  task('G2', 'garden', 6, { outcome: 'failed', summary: null, duration_secs: 600, total_cost_usd: 3 });
}

/** Pair A, as a run with the default settings records it. */
export const PAIR_A = { actor_agent: 'Claude Code', critic_agent: 'Claude Code', actor_model: null, critic_model: null };

/** A forecast with percentiles: each measure's [p50, p90]. */
function known(basis: number, scope: 'project' | 'all', iterations: number[], cost: number[], duration: number[]): Forecast {
  const of = ([p50, p90]: number[]) => ({ p50: p50!, p90: p90! });
  return { basis, scope, iterations: of(iterations), cost_usd: of(cost), duration_secs: of(duration) };
}

/**
 * In shop, P1…P6 (nearest rank: the value at ⌈p × n / 100⌉ of the sorted values).
 * Iterations 1 2 2 3 4 5: p50 rank 3 → 2, p90 rank 6 → 5. Costs of the five that
 * recorded one, 0.40 0.70 1.10 1.20 2.43: p50 rank 3 → 1.10, p90 rank 5 → 2.43.
 * Durations 60 90 120 180 200 400: p50 rank 3 → 120, p90 rank 6 → 400.
 */
export const SHOP_FORECAST = known(6, 'project', [2, 5], [1.1, 2.43], [120, 400]);

/**
 * In garden, which has two: all projects' eight. Iterations 1 1 2 2 3 4 5 6: p50 rank
 * 4 → 2, p90 rank 8 → 6. Costs 0.30 0.40 0.70 1.10 1.20 2.43 3.00: p50 rank 4 → 1.10,
 * p90 rank 7 → 3.00. Durations 30 60 90 120 180 200 400 600: p50 rank 4 → 120, p90 rank 8 → 600.
 */
export const GARDEN_FORECAST = known(8, 'all', [2, 6], [1.1, 3], [120, 600]);

const UNKNOWN = { p50: null, p90: null };

/** Codex as actor: three tasks anywhere, fewer than five. */
export const CODEX_FORECAST: Forecast = { basis: 3, scope: 'none', iterations: UNKNOWN, cost_usd: UNKNOWN, duration_secs: UNKNOWN };
