import type { SessionStats } from '../src/sessionFormat/sessionSummaries.js';
import type { StatsSession } from '../src/sessionView/statsProtocol.js';
import { barChart, rateChart, shareBars, type BarDatum } from './browser/charts.js';
import { h } from './dom.js';
import { formatCost, formatCount, formatDuration } from './format.js';

/** Over a longer span, days become weeks: a bar a day would be a hair. */
const MAX_DAILY_PERIODS = 120;
/** Bars of the iterations histogram; the last one counts that many or more. */
const MAX_ITERATION_BARS = 20;
/** Projects drawn; the rest are summed up in a line. */
const MAX_PROJECTS = 15;
const DAY_MS = 24 * 3600 * 1000;

/**
 * The figures of `codeloops sessions stats` as both stats pages show them (the web
 * page of `codeloops ui` and the editor's): the totals grouped (sessions, tasks, the
 * critic, cost), sessions per day, the success rate over time, iterations to success,
 * projects, and the task figures per actor and critic pair.
 */
export function renderStats(stats: SessionStats, summaries: readonly StatsSession[]): HTMLElement[] {
  if (stats.total_sessions === 0) return [h('p', { class: 'muted' }, 'No sessions to count.')];
  const periods = periodsOf(stats.sessions_over_time.map((day) => day.date));
  const successOverTime = successRateBars(summaries, periods);
  const successes = summaries.filter((summary) => summary.outcome === 'success');
  const projects = stats.by_project.slice(0, MAX_PROJECTS).map((project) => {
    const succeeded = Math.round(project.success_rate * project.total);
    return {
      label: project.project,
      total: project.total,
      part: succeeded,
      title: `${project.project}: ${project.total} sessions, ${succeeded} succeeded (${percent(project.success_rate)})`,
    };
  });
  const otherProjects = stats.by_project.length - projects.length;
  return [
    ...figureGroups(stats),
    h(
      'div',
      { class: 'chart-grid' },
      chartCard('Sessions per ' + periods.unit, barChart(sessionBars(stats, periods), { label: `Sessions per ${periods.unit}` }), 'chart-sessions'),
      chartCard(
        'Success rate over time',
        successOverTime.length > 0 ? rateChart(successOverTime, { label: `Success rate per ${periods.unit}` }) : h('p', { class: 'muted' }, 'No sessions.'),
        'chart-success',
      ),
      chartCard(
        'Iterations to success',
        successes.length > 0
          ? h(
              'div',
              {},
              barChart(iterationsToSuccessBars(successes), { label: 'Successful sessions by the number of iterations they took', barClass: 'bar-success' }),
              h('p', { class: 'chart-note muted' }, 'Successful sessions by the number of iterations they took'),
            )
          : h('p', { class: 'muted' }, 'No successful session yet.'),
        'chart-iterations',
      ),
      chartCard(
        'By project',
        h(
          'div',
          {},
          shareBars(projects, { label: 'Sessions and successes by project', describe: (row) => `${row.total} · ${percent(row.part / row.total)} success` }),
          otherProjects > 0 ? h('p', { class: 'muted' }, `and ${otherProjects} more project${otherProjects === 1 ? '' : 's'}`) : null,
        ),
        'chart-projects',
      ),
    ),
    agentsTable(stats),
  ];
}

/** A rate of nothing (its denominator 0) is null: shown as a dash, said as such. */
const NOTHING_TO_RATE = 'nothing to count it over';
const share = (value: number | null): string => (value === null ? '—' : percent(value));
const dollars = (value: number | null): string => (value === null ? '—' : (formatCost(value) ?? '—'));

/** The totals in four groups: sessions (as the original counts them), tasks (a resumed session carries on its task), the critic, cost. */
function figureGroups(stats: SessionStats): HTMLElement[] {
  const group = (title: string, className: string, ...tiles: HTMLElement[]) =>
    h('section', { class: `stats-group ${className}`, 'aria-label': title }, h('h2', {}, title), h('div', { class: 'tiles' }, ...tiles));
  return [
    group(
      'Sessions',
      'group-sessions',
      tile('Sessions', stats.total_sessions.toLocaleString('en-US')),
      tile('Success rate', percent(stats.success_rate)),
      tile('Avg iterations', stats.avg_iterations.toFixed(1)),
      tile('Avg duration', formatDuration(stats.avg_duration_secs)),
    ),
    group(
      'Tasks',
      'group-tasks',
      tile('Tasks', stats.total_tasks.toLocaleString('en-US'), 'Sessions carried on by resume count as one task'),
      tile('Task success rate', share(stats.task_success_rate)),
      tile('First-try success', share(stats.first_try_success_rate), 'Successful tasks done in one iteration'),
      tile('Verified success', share(stats.verified_success_rate), 'Successful tasks whose DONE a passing check or a command the critic ran backs'),
      tile(
        'By the start’s tests',
        share(stats.tests_verified_success_rate),
        'Successful tasks whose DONE rested on the start’s tests passing on the final code',
      ),
      tile('Waste rate', share(stats.waste_rate), 'Tasks that ended failed, interrupted or at the iteration limit'),
      tile('Avg iterations to success', stats.avg_iterations_to_success === null ? '—' : stats.avg_iterations_to_success.toFixed(1)),
      tile('Avg cycle time', stats.avg_cycle_time_secs === null ? '—' : formatDuration(stats.avg_cycle_time_secs), 'Of successful tasks'),
    ),
    group(
      'The critic',
      'group-critic',
      tile('Iterations', stats.total_iterations.toLocaleString('en-US')),
      tile('Approval rate', share(stats.critic_approval_rate), 'Iterations recorded DONE'),
      tile('DONE refused', share(stats.done_refused_rate), 'Of the critic’s DONEs, those the gate refused'),
      tile('Improvement rate', share(stats.improvement_rate), 'Rejections followed by an approval'),
      tile('Avg feedback length', stats.avg_feedback_length === null ? '—' : `${Math.round(stats.avg_feedback_length).toLocaleString('en-US')} chars`),
    ),
    group(
      'Cost',
      'group-cost',
      tile('Total cost', dollars(stats.total_cost_usd)),
      tile('Cost per success', dollars(stats.cost_per_success_usd), 'All tasks’ cost over the successful ones'),
      tile('Tokens', formatCount(stats.total_tokens)),
    ),
  ];
}

/** The task figures per actor and critic pair: which pair works best here. */
function agentsTable(stats: SessionStats): HTMLElement {
  const columns = ['Actor', 'Critic', 'Tasks', 'Success', 'First try', 'Verified', 'Waste', 'Approval', 'DONE refused', 'Cost per success'];
  const rows = stats.by_agents.map((pair) =>
    h(
      'tr',
      {},
      ...[
        pair.actor_agent,
        pair.critic_agent,
        pair.total_tasks.toLocaleString('en-US'),
        share(pair.task_success_rate),
        share(pair.first_try_success_rate),
        share(pair.verified_success_rate),
        share(pair.waste_rate),
        share(pair.critic_approval_rate),
        share(pair.done_refused_rate),
        dollars(pair.cost_per_success_usd),
      ].map((cell) => h('td', cell === '—' ? { title: NOTHING_TO_RATE } : {}, cell)),
    ),
  );
  return h(
    'section',
    { class: 'chart-card agents-card', 'aria-label': 'By actor and critic' },
    h('h2', {}, 'By actor and critic (tasks)'),
    h('table', { class: 'agents-table' }, h('thead', {}, h('tr', {}, ...columns.map((column) => h('th', {}, column)))), h('tbody', {}, ...rows)),
  );
}

function percent(value: number): string {
  return `${Math.round(value * 100)}%`;
}

/** Sessions started per period (a day, or a week over a long span), gaps included. */
function sessionBars(stats: SessionStats, periods: Periods): BarDatum[] {
  const perPeriod = new Map<string, number>();
  for (const day of stats.sessions_over_time) perPeriod.set(periods.keyOf(day.date), (perPeriod.get(periods.keyOf(day.date)) ?? 0) + day.count);
  return periods.keys.map((key) => {
    const count = perPeriod.get(key) ?? 0;
    return { label: shortDate(key), value: count, title: `${periods.unit === 'week' ? `Week of ${key}` : key}: ${count} session${count === 1 ? '' : 's'}` };
  });
}

/** The share of sessions that succeeded, per period that had any. */
function successRateBars(summaries: readonly StatsSession[], periods: Periods): BarDatum[] {
  const outcomesPerPeriod = new Map<string, { total: number; successes: number }>();
  for (const summary of summaries) {
    const key = periods.keyOf(new Date(summary.timestamp).toISOString().slice(0, 10));
    const entry = outcomesPerPeriod.get(key) ?? { total: 0, successes: 0 };
    entry.total += 1;
    if (summary.outcome === 'success') entry.successes += 1;
    outcomesPerPeriod.set(key, entry);
  }
  return periods.keys
    .filter((key) => outcomesPerPeriod.has(key))
    .map((key) => {
      const { total, successes } = outcomesPerPeriod.get(key)!;
      return {
        label: shortDate(key),
        value: successes / total,
        title: `${periods.unit === 'week' ? `Week of ${key}` : key}: ${successes} of ${total} succeeded (${percent(successes / total)})`,
      };
    });
}

/** Successful sessions by how many iterations they took; loops without a limit can take hundreds, so the long tail shares the last bar. */
function iterationsToSuccessBars(successes: readonly StatsSession[]): BarDatum[] {
  const buckets = Math.min(MAX_ITERATION_BARS, Math.max(1, ...successes.map((summary) => summary.iterations)));
  const iterationCounts = new Array<number>(buckets).fill(0);
  for (const summary of successes) iterationCounts[Math.min(buckets, Math.max(1, summary.iterations)) - 1]! += 1;
  return iterationCounts.map((count, index) => {
    const tail = index === MAX_ITERATION_BARS - 1;
    const iterations = `${index + 1}${tail ? ' or more' : ''} iteration${index === 0 && !tail ? '' : 's'}`;
    return { label: `${index + 1}${tail ? '+' : ''}`, value: count, title: `${count} session${count === 1 ? '' : 's'} succeeded after ${iterations}` };
  });
}

function tile(label: string, value: string, title?: string): HTMLElement {
  return h(
    'div',
    { class: 'tile', ...(title || value === '—' ? { title: value === '—' ? NOTHING_TO_RATE : title } : {}) },
    h('div', { class: 'tile-value' }, value),
    h('div', { class: 'tile-label muted' }, label),
  );
}

function chartCard(title: string, chart: Element, className: string): HTMLElement {
  return h('section', { class: `chart-card ${className}`, 'aria-label': title }, h('h2', {}, title), chart as HTMLElement);
}

/** `2025-01-27` → `Jan 27`. */
function shortDate(day: string): string {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? day : date.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

interface Periods {
  unit: 'day' | 'week';
  /** Every period from the first to the last, empty ones included. */
  keys: string[];
  keyOf(day: string): string;
}

/** Days (UTC, as the stats count them) from the first to the last, or weeks (from Monday) over a long span. */
export function periodsOf(days: readonly string[]): Periods {
  const sorted = [...days].sort();
  if (sorted.length === 0) return { unit: 'day', keys: [], keyOf: (day) => day };
  const first = Date.parse(`${sorted[0]}T00:00:00Z`);
  const last = Date.parse(`${sorted.at(-1)}T00:00:00Z`);
  const span = Math.round((last - first) / DAY_MS) + 1;
  const unit = span > MAX_DAILY_PERIODS ? 'week' : 'day';
  const keyOf = (day: string): string => {
    if (unit === 'day') return day;
    const time = Date.parse(`${day}T00:00:00Z`);
    const sinceMonday = (new Date(time).getUTCDay() + 6) % 7;
    return new Date(time - sinceMonday * DAY_MS).toISOString().slice(0, 10);
  };
  const keys: string[] = [];
  for (let time = Date.parse(`${keyOf(sorted[0]!)}T00:00:00Z`); time <= last; time += (unit === 'week' ? 7 : 1) * DAY_MS) {
    keys.push(new Date(time).toISOString().slice(0, 10));
  }
  return { unit, keys, keyOf };
}
