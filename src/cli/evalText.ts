import type { EvalResults } from '../sessionFormat/evalRecords.js';
import { formatDuration } from '../text/humanize.js';

/**
 * An eval's results as Markdown, for the terminal and to paste into a pull request:
 * the configs side by side, each pair compared, every run. It renders the one value
 * `--json` prints (`evalResultsOf`); nothing here computes a figure.
 */
export function renderEvalMarkdown(results: EvalResults): string {
  const lines = [`# Eval ${cell(results.suite)} (${results.eval_id})`, ''];
  lines.push(
    ...table(
      [
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
      results.configs.map((config) => [
        cell(config.name),
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
    ),
  );
  lines.push(
    '',
    'accepted: the loop ended success and the acceptance passed. false DONE: of the runs that ended success, acceptance failed. false CONTINUE: of the others, acceptance passed.',
  );
  if (results.pairs.length > 0) {
    lines.push('', '## Accepted rate, a − b', '');
    lines.push(
      ...table(
        ['a', 'b', 'difference', '95 % interval'],
        results.pairs.map((pair) => [cell(pair.a), cell(pair.b), signedPoints(pair.accepted_rate_difference), interval(pair.interval, true)]),
      ),
    );
    lines.push('', 'An interval that contains 0 does not tell the two apart: more repetitions narrow it.');
  }
  lines.push('', '## Runs', '');
  lines.push(
    ...table(
      ['task', 'config', 'repetition', 'outcome', 'acceptance', 'iterations', 'cost', 'duration', 'session'],
      results.runs.map((run) => [
        cell(run.task),
        cell(run.config),
        String(run.repetition),
        run.outcome,
        run.acceptance_passed ? 'passed' : 'failed',
        String(run.iterations),
        dollars(run.cost_usd),
        formatDuration(run.duration_secs),
        run.session_id ?? '—',
      ]),
    ),
  );
  return lines.join('\n') + '\n';
}

function table(headers: readonly string[], rows: readonly string[][]): string[] {
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
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

export function dollars(amount: number | null): string {
  return amount === null ? '—' : `$${amount.toFixed(2)}`;
}
