import type { GroupComparison } from '../sessionFormat/candidateGroups.js';
import { judgeOverruledText } from '../sessionFormat/groupWording.js';
import { formatCount, formatDuration, indent } from '../text/humanize.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { previewLine } from '../text/truncate.js';
import { paint, renderTable } from './terminal.js';

/** A candidate group's comparison in words: printed when the group ends and by `codeloops candidates <group>`. */

const STATUS_WORDS: Readonly<Record<string, string>> = { max_iterations_reached: 'limit reached' };

/** The comparison as a table, the judge's reasoning, and what to type next. */
export function renderComparison(comparison: GroupComparison, color: boolean): string {
  const clean = sanitizeForTerminal;
  const rows = comparison.candidates.map((row) => [
    row.rank === null ? '' : String(row.rank),
    row.label,
    (STATUS_WORDS[row.status] ?? row.status) + (row.progress ? ` (${row.progress})` : '') + (row.applied ? ', applied' : ''),
    String(row.iterations),
    row.checks_total === null ? '—' : `${row.checks_passed}/${row.checks_total}`,
    row.total_cost_usd === null ? '—' : `${row.cost_estimated ? '≈' : ''}$${row.total_cost_usd.toFixed(2)}`,
    row.total_tokens > 0 ? formatCount(row.total_tokens) : '—',
    row.duration_secs === null ? '—' : formatDuration(row.duration_secs),
    row.files_changed === null ? '—' : String(row.files_changed),
    row.insertions === null ? '—' : `+${row.insertions} −${row.deletions ?? 0}`,
    row.confidence === null ? '—' : `${Math.round(row.confidence * 100)}%`,
    row.session_id ?? '—',
  ]);
  const lines = [
    paint(`Candidates of ${comparison.group_id} (${comparison.status}): ${clean(previewLine(comparison.prompt, 80))}`, 'heading', color),
    renderTable(['#', 'CANDIDATE', 'STATUS', 'ITER', 'CHECKS', 'COST', 'TOKENS', 'TIME', 'FILES', 'LINES', 'CONF', 'SESSION'], rows, 40).trimEnd(),
  ];
  for (const row of comparison.candidates) if (row.error) lines.push(paint(`${row.label}: ${clean(row.error)}`, 'error', color));
  if (comparison.judge) {
    lines.push('', paint(`Judge (${comparison.judge.agent}${comparison.judge.model ? `, ${comparison.judge.model}` : ''})`, 'heading', color));
    // Said before its reasoning, which argues for the candidate it put first.
    const overruled = judgeOverruledText(comparison);
    if (overruled) lines.push(paint(indent(clean(overruled)), 'warning', color));
    lines.push(indent(clean(comparison.judge.reasoning || '(no reasoning given)')));
  }
  for (const warning of comparison.warnings) lines.push(paint(`warning: ${clean(warning)}`, 'warning', color));
  const best = comparison.candidates.find((row) => row.label === comparison.winner);
  if (comparison.applied) lines.push('', `Applied: ${comparison.applied.label}. Undo with: codeloops apply --undo ${comparison.applied.session_id}`);
  else if (best?.session_id) lines.push('', `Best: ${best.label}. Put its changes into your tree with: codeloops apply ${best.session_id}`);
  else if (comparison.status !== 'running') lines.push('', 'No candidate succeeded. Apply one anyway with: codeloops apply <session>');
  return lines.join('\n') + '\n';
}
