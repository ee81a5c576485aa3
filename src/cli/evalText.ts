import type { EvalResults } from '../sessionFormat/evalRecords.js';
import { formatDuration } from '../text/humanize.js';
import { verifiedByText } from '../sessionFormat/testResults.js';

/** A table of an eval's results as plain text cells, for each rendering to escape its own way. */
export interface EvalTable {
  headers: readonly string[];
  rows: string[][];
}

/** The words under the configs' table, and under the pairs'. */
export const OUTCOMES_NOTE =
  'accepted: the loop ended success and the acceptance passed. false DONE: of the runs that ended success, acceptance failed. false CONTINUE: of the others, acceptance passed.';
export const PAIRS_NOTE = 'An interval that contains 0 does not tell the two apart: more repetitions narrow it.';

/** The three tables every rendering shows: the configs side by side, each pair compared, every run. */
export function evalTables(results: EvalResults): { configs: EvalTable; pairs: EvalTable; runs: EvalTable } {
  return {
    configs: {
      headers: [
        'config',
        'runs',
        'accepted',
        '95 % interval',
        'success',
        'false DONE',
        'false CONTINUE',
        'mean iterations',
        'cost',
        'per accepted task',
        'mean duration',
      ],
      rows: results.configs.map((config) => [
        config.name,
        String(config.runs),
        percent(config.accepted_rate),
        interval(config.accepted_rate_interval),
        percent(config.success_rate),
        percent(config.false_done_rate),
        percent(config.false_continue_rate),
        config.mean_iterations === null ? '—' : config.mean_iterations.toFixed(1),
        dollars(config.total_cost_usd),
        dollars(config.cost_per_accepted_task_usd),
        config.mean_duration_secs === null ? '—' : formatDuration(config.mean_duration_secs),
      ]),
    },
    pairs: {
      headers: ['a', 'b', 'difference', '95 % interval'],
      rows: results.pairs.map((pair) => [pair.a, pair.b, signedPoints(pair.accepted_rate_difference), interval(pair.interval, true)]),
    },
    runs: {
      headers: ['task', 'config', 'repetition', 'outcome', 'acceptance', 'verified by', 'iterations', 'cost', 'duration', 'session'],
      rows: results.runs.map((run) => [
        run.task,
        run.config,
        String(run.repetition),
        run.outcome,
        run.acceptance_passed ? 'passed' : 'failed',
        run.verified_by ? verifiedByText(run.verified_by) : '—',
        String(run.iterations),
        dollars(run.cost_usd),
        formatDuration(run.duration_secs),
        run.session_id ?? '—',
      ]),
    },
  };
}

/**
 * An eval's results as Markdown, for the terminal and to paste into a pull request:
 * the configs side by side, each pair compared, every run. It renders the one value
 * `--json` prints (`evalResultsOf`); nothing here computes a figure.
 */
export function renderEvalMarkdown(results: EvalResults): string {
  const tables = evalTables(results);
  const lines = [`# Eval ${cell(results.suite)} (${results.eval_id})`, ''];
  const scope = scopeNote(results);
  if (scope) lines.push(`**${scope.headline}**`, ...scope.missing.map((run) => `- ${cell(run)}`), '');
  lines.push(...table(tables.configs), '', OUTCOMES_NOTE);
  if (results.pairs.length > 0) lines.push('', '## Accepted rate, a − b', '', ...table(tables.pairs), '', PAIRS_NOTE);
  lines.push('', '## Runs', '', ...table(tables.runs));
  return lines.join('\n') + '\n';
}

/** What the figures are of, when not every run of the eval: a shard's share, or an eval with runs missing (named). */
export function scopeNote(results: EvalResults): { headline: string; missing: string[] } | null {
  const missing = results.missing_runs.map((run) => `task ${JSON.stringify(run.task)}, config ${JSON.stringify(run.config)}, repetition ${run.repetition}`);
  const shard = results.shard
    ? `Shard ${results.shard.index}/${results.shard.total} of the eval: merge the shards' bundles for the whole (codeloops eval merge).`
    : '';
  if (results.complete) return shard ? { headline: shard, missing: [] } : null;
  const headline = `Incomplete: ${missing.length} run${missing.length === 1 ? '' : 's'} missing, not counted in the figures (run ${missing.length === 1 ? 'it' : 'them'}: codeloops eval --resume ${results.eval_id}).`;
  return { headline: shard ? `${shard} ${headline}` : headline, missing };
}

function table({ headers, rows }: EvalTable): string[] {
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)];
}

/** A name from the suite, safe in a table cell on one line. */
function cell(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/\|/g, '\\|');
}

export function percent(rate: number | null): string {
  return rate === null ? '—' : `${(rate * 100).toFixed(0)} %`;
}

export function signedPoints(difference: number | null): string {
  if (difference === null) return '—';
  const points = (difference * 100).toFixed(0);
  return `${difference > 0 ? '+' : ''}${points} points`;
}

export function interval(range: [number, number] | null, signed = false): string {
  if (!range) return '—';
  const end = (value: number) => `${signed && value > 0 ? '+' : ''}${(value * 100).toFixed(0)}`;
  return `${end(range[0])} to ${end(range[1])} %`;
}

function dollars(amount: number | null): string {
  return amount === null ? '—' : `$${amount.toFixed(2)}`;
}
