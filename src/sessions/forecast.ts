import { FORECAST_MIN_TASKS, type Forecast, type Percentiles } from '../sessionFormat/forecast.js';
import { tasksOf, type StatsSession, type Task } from './taskStats.js';

/**
 * The forecast of a run (`Forecast`), from the same tasks `sessions stats` counts
 * (`tasksOf`: resume chains are one task, their iterations, duration and cost summed
 * as stats sum them), read from the summary index like stats: no session file is
 * read again.
 *
 * Comparable tasks are those whose first session had the same actor and critic, both
 * agent and model. The model counts: one agent's models differ in price by five to
 * twenty times and in how many rounds they need, so a forecast that mixed a run with
 * `critic_model = "opus"` and one with the default would say little of either. A
 * model left unset (null: the agent CLI's default) is compared as such.
 *
 * Every finished task counts, whatever its outcome: a failed, interrupted or stopped
 * task cost what it cost, and a forecast of what a run will cost that left those out
 * would promise less than runs take. A task still running (no outcome yet) does not.
 */

/** The actor and critic as a run records them: agents by their display names, models as resolved (null: the agent's default). */
export interface ForecastPair {
  actor_agent: string;
  critic_agent: string;
  actor_model: string | null;
  critic_model: string | null;
}

/** The forecast for a run with `pair` in `project` (its folder's name, as stats name projects), from `sessions` (all of the folder's). */
export function computeForecast(sessions: readonly StatsSession[], pair: ForecastPair, project: string): Forecast {
  const comparable = tasksOf(sessions).filter((task) => task.outcome !== null && isPair(task, pair));
  const ofProject = comparable.filter((task) => task.first.summary.project === project);
  if (ofProject.length >= FORECAST_MIN_TASKS) return forecastOf(ofProject, 'project');
  if (comparable.length >= FORECAST_MIN_TASKS) return forecastOf(comparable, 'all');
  const unknown = { p50: null, p90: null };
  return { basis: comparable.length, scope: 'none', iterations: unknown, cost_usd: unknown, duration_secs: unknown };
}

function isPair(task: Task, pair: ForecastPair): boolean {
  return task.actor === pair.actor_agent && task.critic === pair.critic_agent && task.actorModel === pair.actor_model && task.criticModel === pair.critic_model;
}

function forecastOf(tasks: readonly Task[], scope: 'project' | 'all'): Forecast {
  return {
    basis: tasks.length,
    scope,
    iterations: medianAndP90(tasks.map((task) => task.iterations)),
    // Over the tasks that recorded a cost (an agent that reports none records none); too few of them and it is unknown.
    cost_usd: medianAndP90(tasks.flatMap((task) => (task.costUsd === null ? [] : [task.costUsd]))),
    duration_secs: medianAndP90(tasks.map((task) => task.durationSecs)),
  };
}

function medianAndP90(values: readonly number[]): Percentiles {
  if (values.length < FORECAST_MIN_TASKS) return { p50: null, p90: null };
  return { p50: percentile(values, 50), p90: percentile(values, 90) };
}

/**
 * The `p`th percentile by the nearest-rank method: the values sorted ascending, the
 * one at rank ⌈p/100 × n⌉ (from 1). Always a value that happened (whole iterations,
 * a cost some task really cost), never one interpolated between two; null for none.
 */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  // p × n first: a whole number for a whole p, so that a rank that is exact is not nudged up by a fraction's rounding.
  const rank = Math.max(1, Math.ceil((p * sorted.length) / 100));
  return sorted[rank - 1]!;
}
