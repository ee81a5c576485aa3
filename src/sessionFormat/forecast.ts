import { formatDuration } from '../text/humanize.js';
import * as z from './zod.js';

/**
 * A forecast of a run before it starts (`codeloops forecast --json`, the `--dry-run`
 * plan, the editor's Run Prompt box and status bar): the median and 90th percentile
 * of iterations, cost and duration of past finished tasks with the same actor and
 * critic (agents and models). `basis` is how many tasks it rests on; `scope` where
 * they come from: this project, all projects (the project had too few), or `none`
 * (fewer than `FORECAST_MIN_TASKS` anywhere: every percentile null, nothing guessed).
 * Its words are here, once, for every surface.
 */

/** Fewer comparable tasks than this and the forecast says so instead of guessing. */
export const FORECAST_MIN_TASKS = 5;

export const FORECAST_SCOPES = ['project', 'all', 'none'] as const;
export type ForecastScope = (typeof FORECAST_SCOPES)[number];

const percentiles = z.strictObject({ p50: z.nullable(z.number()), p90: z.nullable(z.number()) });
export type Percentiles = z.infer<typeof percentiles>;

export const forecastSchema = z.strictObject({
  basis: z.int().check(z.nonnegative()),
  scope: z.enum(FORECAST_SCOPES),
  iterations: percentiles,
  cost_usd: percentiles,
  duration_secs: percentiles,
});
export type Forecast = z.infer<typeof forecastSchema>;

/**
 * The budget to suggest when none is set: the p90 cost rounded up to two significant
 * digits ($0.372 → $0.38, $3.72 → $3.80, $37.2 → $38), so that nine runs in ten of
 * the past stayed under it; null when the forecast has no p90 cost.
 */
export function suggestedMaxCostUsd(forecast: Forecast): number | null {
  const p90 = forecast.cost_usd.p90;
  if (p90 === null || p90 <= 0) return null;
  const step = 10 ** (Math.floor(Math.log10(p90)) - 1);
  // The small tolerance keeps a p90 already on a step (2.1) from being rounded up past it by float error.
  return Number((Math.ceil(p90 / step - 1e-9) * step).toPrecision(2));
}

/** Where the forecast's tasks come from, in words: `7 past tasks of this project`. */
export function forecastBasisText(forecast: Forecast): string {
  const tasks = `${forecast.basis} past task${forecast.basis === 1 ? '' : 's'}`;
  if (forecast.scope === 'project') return `${tasks} of this project`;
  if (forecast.scope === 'all') return `${tasks} of all projects (this one has fewer than ${FORECAST_MIN_TASKS})`;
  return `${tasks} with these agents and models`;
}

const money = (usd: number) => `$${usd.toFixed(2)}`;

/** The three measures as `median …, p90 …` rows, each `unknown` where no task recorded it (a cost). */
export function forecastRows(forecast: Forecast): [label: string, value: string][] {
  const row = (of: Percentiles, format: (value: number) => string): string =>
    of.p50 === null || of.p90 === null ? 'unknown' : `median ${format(of.p50)}, p90 ${format(of.p90)}`;
  return [
    ['iterations', row(forecast.iterations, String)],
    ['cost', row(forecast.cost_usd, money)],
    ['duration', row(forecast.duration_secs, formatDuration)],
  ];
}

/** The forecast in one line, for a prompt line or a plan's row; with fewer than five tasks, that it cannot say. */
export function forecastLine(forecast: Forecast): string {
  if (forecast.scope === 'none') {
    return `No forecast: ${forecastBasisText(forecast)}, at least ${FORECAST_MIN_TASKS} needed.`;
  }
  return `From ${forecastBasisText(forecast)}: ${forecastRows(forecast)
    .map(([label, value]) => `${label} ${value}`)
    .join('; ')}.`;
}

/** The budget to suggest, in words (`max_cost_usd = 2.5 (the p90 cost, rounded up)`), when none is set and the forecast has a p90 cost. */
export function budgetSuggestion(forecast: Forecast, maxCostUsd: number | null): string | undefined {
  const suggested = maxCostUsd === null ? suggestedMaxCostUsd(forecast) : null;
  return suggested === null ? undefined : `max_cost_usd = ${suggested} (the p90 cost, rounded up)`;
}
