import { taskStateText, taskTitle, type QueueFile, type QueueTask } from '../sessionFormat/queueRecords.js';
import { formatDuration } from '../text/humanize.js';
import { escapeHtml, reportPage } from './evalHtml.js';

/**
 * `codeloops queue report`: what the night did, per task (its outcome and verification,
 * branch, files and lines changed, checks, cost, duration, open findings, a question
 * waiting for an answer) and in total; as Markdown on stdout, and as one self-contained
 * HTML page with `--html` under the eval report's policy (no script, no request), every
 * task's text shown as text.
 */

/** One task's figures as plain text cells, for each rendering to escape its own way. */
interface TaskRow {
  id: string;
  task: string;
  outcome: string;
  branch: string;
  changed: string;
  checks: string;
  cost: string;
  duration: string;
  sessions: string;
}

const HEADERS = ['id', 'task', 'outcome', 'branch', 'changed', 'checks', 'cost', 'duration', 'sessions'] as const;

function rowOf(task: QueueTask, runnerAlive: boolean): TaskRow {
  const result = task.result;
  const passed = result?.checks.filter((check) => check.passed).length ?? 0;
  return {
    id: String(task.id),
    task: taskTitle(task),
    outcome: taskStateText(task, runnerAlive),
    branch: task.branch,
    changed: result?.files_changed == null ? '—' : `${result.files_changed} files +${result.insertions ?? 0} −${result.deletions ?? 0}`,
    checks: result && result.checks.length > 0 ? `${passed}/${result.checks.length}` : '—',
    cost: result?.total_cost_usd == null ? '—' : `$${result.total_cost_usd.toFixed(2)}`,
    duration: result ? formatDuration(result.duration_secs) : '—',
    sessions: task.session_ids.join(', ') || '—',
  };
}

/** What a task left to say below the table: its error, open findings, the question it waits on. */
function notesOf(task: QueueTask): string[] {
  const notes: string[] = [];
  if (task.question !== null && task.state === 'needs_input') notes.push(`Waits for your answer: ${task.question}`);
  if (task.result?.error && task.outcome !== 'success') notes.push(`Error (${task.result.error_code ?? 'unknown'}): ${task.result.error}`);
  if (task.result?.summary && task.outcome === 'success') notes.push(`Summary: ${task.result.summary}`);
  if (task.commit && task.state === 'finished') notes.push(`Committed ${task.commit.slice(0, 12)} on ${task.branch}.`);
  if (task.result?.branch_changed) notes.push(task.result.branch_changed);
  if (task.push) notes.push(task.push.pushed ? `Pushed to ${task.push.remote}.` : `Pushing to ${task.push.remote} failed: ${task.push.error ?? 'unknown'}`);
  if (task.imported_from) notes.push(`Ran elsewhere: imported from ${task.imported_from}.`);
  for (const finding of task.result?.open_findings ?? [])
    notes.push(`Open finding ${finding.id}${finding.file ? ` (${finding.file}${finding.line ? `:${finding.line}` : ''})` : ''}: ${finding.message}`);
  return notes;
}

function totalsOf(queue: QueueFile): string {
  const count = (predicate: (task: QueueTask) => boolean) => queue.tasks.filter(predicate).length;
  const cost = queue.tasks.reduce((sum, task) => sum + (task.result?.total_cost_usd ?? 0), 0);
  const duration = queue.tasks.reduce((sum, task) => sum + (task.result?.duration_secs ?? 0), 0);
  return [
    `${queue.tasks.length} tasks`,
    `${count((task) => task.outcome === 'success')} succeeded`,
    `${count((task) => task.state === 'finished' && task.outcome !== 'success')} did not`,
    `${count((task) => task.state === 'needs_input')} waiting for an answer`,
    `${count((task) => task.state !== 'finished' && task.state !== 'needs_input')} not finished`,
    `$${cost.toFixed(2)}`,
    formatDuration(duration),
  ].join(', ');
}

/** The report as Markdown; `runnerAlive`: whether a `queue run` runs now (a task it left running is otherwise stopped). */
export function renderQueueMarkdown(queue: QueueFile, runnerAlive = true): string {
  const cell = (text: string) => text.replace(/[\r\n]+/g, ' ').replace(/\|/g, '\\|');
  const lines = [`# Queue of ${cell(queue.repository)}`, '', `Totals: ${totalsOf(queue)}.`, ''];
  if (queue.base_commit) lines.push(`Branches start from ${queue.base_commit.slice(0, 12)}.`, '');
  lines.push(`| ${HEADERS.join(' | ')} |`, `|${HEADERS.map(() => '---').join('|')}|`);
  for (const task of queue.tasks) lines.push(`| ${HEADERS.map((header) => cell(rowOf(task, runnerAlive)[header])).join(' | ')} |`);
  for (const task of queue.tasks) {
    const notes = notesOf(task);
    if (notes.length === 0) continue;
    lines.push('', `## Task ${task.id}: ${cell(taskTitle(task))}`, '', ...notes.map((note) => `- ${cell(note)}`));
  }
  return lines.join('\n') + '\n';
}

export function renderQueueHtml(queue: QueueFile, runnerAlive = true): string {
  const head = HEADERS.map((header) => `<th>${escapeHtml(header)}</th>`).join('');
  const rows = queue.tasks
    .map((task) => {
      const row = rowOf(task, runnerAlive);
      return `<tr class="task" data-outcome="${escapeHtml(task.outcome ?? task.state)}">${HEADERS.map((header) => `<td class="${header}">${escapeHtml(row[header])}</td>`).join('')}</tr>`;
    })
    .join('\n');
  const sections = queue.tasks
    .map((task) => ({ task, notes: notesOf(task) }))
    .filter(({ notes }) => notes.length > 0)
    .map(
      ({ task, notes }) =>
        `<section class="task-notes"><h2>Task ${task.id}: <span class="title">${escapeHtml(taskTitle(task))}</span></h2><ul>${notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul></section>`,
    )
    .join('\n');
  return reportPage(
    `Queue of ${queue.repository}`,
    STYLE,
    `<h1>Queue of <span class="repository">${escapeHtml(queue.repository)}</span></h1>
<p class="totals">${escapeHtml(`Totals: ${totalsOf(queue)}.`)}</p>
<table class="tasks"><thead><tr>${head}</tr></thead><tbody>
${rows}
</tbody></table>
${sections}`,
  );
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { padding: 0.25rem 0.6rem; text-align: left; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
.totals, li { color: var(--muted); }
tr[data-outcome="success"] td.outcome { color: #1a7f37; }
tr[data-outcome="failed"] td.outcome, tr[data-outcome="refused"] td.outcome { color: #cf222e; }
tr[data-outcome="needs_input"] td.outcome { color: #bf8700; }
`;
