import type { LiveEvent } from '../../src/server/apiPayloads.js';
import { advanceLoop, LOOP_STARTING, loopProgressText, type LoopProgress } from '../../src/sessionFormat/loopProgress.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import type { SessionSummary } from '../../src/sessionFormat/sessionSummaries.js';
import { h, icon } from '../dom.js';
import { formatDuration, formatTimestamp, relativeTime } from '../format.js';
import { fetchSessions, fetchStats } from './api.js';
import { createFilterBar, filterFromAddress, OUTCOME_LABELS } from './filterBar.js';
import { openLiveFeed } from './liveFeed.js';
import { LIST_ADDRESS_KEY, pageLink, sessionPagePath, type PageShell } from './pageShell.js';
import { VirtualList } from './virtualList.js';

/** Each row's height in pixels; the stylesheet gives rows the same. */
export const SESSION_ROW_HEIGHT = 64;
/** Sessions started within this long show how long ago; older ones their date. */
const RELATIVE_TIME_MS = 7 * 24 * 3600 * 1000;
/** New sessions come in bursts (several terminals); the list is fetched once per burst. */
const REFETCH_DELAY_MS = 300;
/** The list loads after the live stream's greeting (so nothing falls between the two), or after this without it. */
const GREETING_WAIT_MS = 1_500;

const OUTCOME_ICONS: Readonly<Record<string, string>> = {
  success: 'pass-filled',
  failed: 'error',
  interrupted: 'debug-pause',
  max_iterations_reached: 'warning',
  running: 'sync',
  none: 'circle-large-outline',
};

/**
 * Every session, newest first, filtered by the server (the same filters as
 * `codeloops sessions list`), drawn as a virtual list, and kept up to date: new
 * sessions appear, running ones show their iteration and phase.
 */
export function renderSessionListPage(shell: PageShell): void {
  new SessionListPage(shell);
}

class SessionListPage {
  private filter = filterFromAddress();
  private summaries: SessionSummary[] = [];
  /** Where each running session's loop is, from the live stream. */
  private readonly running = new Map<string, LoopProgress>();
  /** Sessions created since the page opened: they stand out. */
  private readonly fresh = new Set<string>();
  private fetching: AbortController | undefined;
  private refetchTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly count = h('p', { class: 'list-count muted', role: 'status' }, 'Loading sessions…');
  private readonly list = new VirtualList<SessionSummary>(SESSION_ROW_HEIGHT, (summary) =>
    renderRow(summary, this.running.get(summary.id), this.fresh.has(summary.id)),
  );
  private readonly empty = h('p', { class: 'list-empty muted' });

  constructor(shell: PageShell) {
    const bar = createFilterBar(this.filter, (next) => {
      this.filter = next;
      void this.load();
    });
    shell.content.replaceChildren(
      h('h1', { class: 'page-title' }, 'Sessions'),
      bar.element,
      this.count,
      h(
        'div',
        { class: 'list-header', 'aria-hidden': 'true' },
        h('span', {}, 'Prompt'),
        h('span', {}, 'Iterations'),
        h('span', {}, 'Duration'),
        h('span', {}, 'Started'),
      ),
      this.list.element,
      this.empty,
    );
    void fetchStats(new URLSearchParams()).then(
      (stats) => bar.setProjects(stats.by_project.map((project) => project.project)),
      () => {},
    );
    openLiveFeed({ onEvent: (event) => this.onLive(event), onStatus: (status) => shell.setFeedStatus(status) });
    setTimeout(() => {
      if (this.fetching === undefined) void this.load();
    }, GREETING_WAIT_MS);
  }

  private async load(): Promise<void> {
    this.fetching?.abort();
    const controller = (this.fetching = new AbortController());
    try {
      const loaded = await fetchSessions(this.filter, controller.signal);
      if (controller.signal.aborted) return;
      this.summaries = loaded;
      try {
        sessionStorage.setItem(LIST_ADDRESS_KEY, location.search);
      } catch {
        // storage off: the way back shows every session
      }
      this.showCount();
      this.list.setItems(loaded);
      this.empty.textContent =
        loaded.length === 0
          ? this.filter.toString()
            ? 'No session matches these filters.'
            : 'No sessions yet. Run "codeloops -p <task>" in a repository, and it shows up here.'
          : '';
    } catch (error) {
      if (controller.signal.aborted) return;
      this.count.textContent = `The sessions cannot be listed: ${(error as Error).message}`;
      this.count.className = 'list-count error';
    }
  }

  private showCount(): void {
    const { summaries, filter } = this;
    const runningHere = summaries.filter((summary) => this.running.has(summary.id)).length;
    this.count.className = 'list-count muted';
    this.count.textContent = `${summaries.length.toLocaleString('en-US')} session${summaries.length === 1 ? '' : 's'}${runningHere > 0 ? ` · ${runningHere} running` : ''}${filter.toString() ? ' match' : ''}`;
  }

  private refetchSoon(): void {
    clearTimeout(this.refetchTimer);
    this.refetchTimer = setTimeout(() => void this.load(), REFETCH_DELAY_MS);
  }

  private replaceSummary(summary: SessionSummary): boolean {
    const index = this.summaries.findIndex((candidate) => candidate.id === summary.id);
    if (index < 0) return false;
    this.summaries[index] = summary;
    return true;
  }

  private onLive(event: LiveEvent): void {
    const { running } = this;
    switch (event.type) {
      case 'hello':
        running.clear();
        for (const id of event.running) running.set(id, LOOP_STARTING);
        void this.load();
        return;
      case 'stream_error':
        void this.load();
        return;
      case 'session_created':
        this.fresh.add(event.id);
        if (event.running) running.set(event.id, LOOP_STARTING);
        this.refetchSoon();
        return;
      case 'session_updated':
        if (this.replaceSummary(event.summary)) this.list.refresh();
        return;
      case 'session_completed':
        running.delete(event.id);
        // Its outcome may now match the filters, or no longer.
        if (this.filter.has('outcome')) this.refetchSoon();
        else if (this.replaceSummary(event.summary)) this.list.refresh();
        this.showCount();
        return;
      case 'session_removed':
        running.delete(event.id);
        this.summaries = this.summaries.filter((summary) => summary.id !== event.id);
        this.list.setItems(this.summaries);
        this.showCount();
        return;
      case 'run_event':
        if (!followRunning(running, event.id, event.event)) return;
        this.showCount();
        this.list.refresh();
        return;
      default:
        return;
    }
  }
}

function renderRow(summary: SessionSummary, running: LoopProgress | undefined, isFresh: boolean): HTMLElement {
  const state = running ? 'running' : (summary.outcome ?? 'none');
  const label = running ? runningLabel(running) : summary.outcome ? OUTCOME_LABELS[summary.outcome] : 'Not finished';
  return pageLink(
    sessionPagePath(summary.id),
    { class: `session-row state-${state}${isFresh ? ' fresh' : ''}`, 'data-session-id': summary.id, title: summary.prompt_preview },
    h('span', { class: 'row-state', title: label }, icon(OUTCOME_ICONS[state] ?? 'question', running ? 'codicon-modifier-spin' : '')),
    h(
      'span',
      { class: 'row-main' },
      h('span', { class: 'row-prompt' }, summary.prompt_preview || '(empty prompt)'),
      h(
        'span',
        { class: 'row-meta muted' },
        h('span', { class: `row-outcome outcome-text-${state}` }, label),
        ` · ${summary.project} · ${summary.actor_agent}${summary.critic_agent !== summary.actor_agent ? ` / ${summary.critic_agent}` : ''}`,
      ),
    ),
    h('span', { class: 'row-iterations' }, String(summary.iterations)),
    h('span', { class: 'row-duration' }, summary.duration_secs === null ? '—' : formatDuration(summary.duration_secs)),
    h('span', { class: 'row-started', title: formatTimestamp(summary.timestamp) }, startedText(summary.timestamp)),
  );
}

/** "3 hours ago" this week; older, the date and time, which say more than "1 year ago" on every row. */
function startedText(timestamp: string, now = Date.now()): string {
  const time = Date.parse(timestamp);
  if (Number.isNaN(time) || now - time < RELATIVE_TIME_MS) return relativeTime(timestamp, now);
  return new Date(time).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/**
 * Where a running session's loop is after one of its run events; false when the event
 * changed nothing shown. A session that ends leaves the map.
 */
export function followRunning(running: Map<string, LoopProgress>, sessionId: string, event: RunEvent): boolean {
  const before = running.get(sessionId);
  const after = advanceLoop(before ?? LOOP_STARTING, event);
  if (after === before) return false;
  if (after.stage === 'ended') running.delete(sessionId);
  else running.set(sessionId, after);
  return true;
}

/** `Running · iteration 2 · critic`: where a running session's loop is, once it has begun its first iteration. */
export function runningLabel(progress: LoopProgress): string {
  return progress.iteration === null ? 'Running' : `Running · ${loopProgressText(progress)}`;
}
