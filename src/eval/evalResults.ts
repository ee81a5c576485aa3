import type { EvalConfigResult, EvalResults, EvalRun } from '../sessionFormat/evalRecords.js';
import { runKeyText, type EvalState } from './evalRecord.js';
import { shareOf } from './evalShare.js';
import { newcombeInterval, wilsonInterval } from './evalStatistics.js';

/**
 * An eval's results from its record: every finished run, each config's figures over
 * its runs, and every pair of configs compared on their accepted rates. One value,
 * printed as JSON (`--json`) or rendered (the Markdown summary; an HTML report would
 * render the same value).
 */
export function evalResultsOf(state: EvalState): EvalResults {
  const { started } = state;
  const order = (run: EvalRun) => [
    started.tasks.findIndex((task) => task.name === run.task),
    started.configs.findIndex((config) => config.name === run.config),
    run.repetition,
  ];
  const runs = [...state.finished.values()]
    .map((line): EvalRun => ({
      task: line.task,
      config: line.config,
      repetition: line.repetition,
      session_id: line.session_id,
      outcome: line.outcome,
      acceptance_passed: line.acceptance_passed,
      iterations: line.iterations,
      cost_usd: line.cost_usd,
      duration_secs: line.duration_secs,
      verified_by: line.verified_by ?? null,
    }))
    .sort((a, b) => compareTuples(order(a), order(b)));
  const configs = started.configs.map((config) =>
    configResult(
      config.name,
      runs.filter((run) => run.config === config.name),
    ),
  );
  const pairs: EvalResults['pairs'] = [];
  for (let i = 0; i < configs.length; i++) {
    for (let j = i + 1; j < configs.length; j++) {
      const [a, b] = [configs[i]!, configs[j]!];
      const accepted = (name: string) => runs.filter((run) => run.config === name && run.outcome === 'accepted').length;
      pairs.push({
        a: a.name,
        b: b.name,
        accepted_rate_difference: a.accepted_rate === null || b.accepted_rate === null ? null : a.accepted_rate - b.accepted_rate,
        interval: newcombeInterval(accepted(a.name), a.runs, accepted(b.name), b.runs),
      });
    }
  }
  const missing = shareOf(started)
    .filter((key) => !state.finished.has(runKeyText(key)))
    .map(({ task, config, repetition }) => ({ task, config, repetition }));
  return { eval_id: state.id, suite: started.suite, configs, pairs, runs, shard: started.shard ?? null, complete: missing.length === 0, missing_runs: missing };
}

function configResult(name: string, runs: readonly EvalRun[]): EvalConfigResult {
  const count = (outcome: EvalRun['outcome']) => runs.filter((run) => run.outcome === outcome).length;
  const accepted = count('accepted');
  const succeeded = accepted + count('false_done');
  const costs = runs.flatMap((run) => (run.cost_usd === null ? [] : [run.cost_usd]));
  const totalCost = costs.length > 0 ? sum(costs) : null;
  return {
    name,
    runs: runs.length,
    success_rate: share(succeeded, runs.length),
    accepted_rate: share(accepted, runs.length),
    accepted_rate_interval: wilsonInterval(accepted, runs.length),
    // Of the loops that said DONE, how many were wrong; of those that did not, how many were wrong to go on.
    false_done_rate: share(count('false_done'), succeeded),
    false_continue_rate: share(count('false_continue'), runs.length - succeeded),
    mean_iterations: mean(runs.map((run) => run.iterations)),
    total_cost_usd: totalCost,
    cost_per_accepted_task_usd: totalCost === null || accepted === 0 ? null : totalCost / accepted,
    mean_duration_secs: mean(runs.map((run) => run.duration_secs)),
  };
}

function share(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : sum(values) / values.length;
}

function compareTuples(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}
