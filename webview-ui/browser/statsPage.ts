import { h } from '../dom.js';
import { renderStats } from '../statsView.js';
import { fetchSessions, fetchStats } from './api.js';
import { createFilterBar, filterFromAddress } from './filterBar.js';
import { openLiveFeed } from './liveFeed.js';
import type { PageShell } from './pageShell.js';

const REFRESH_DELAY_MS = 1_000;

/**
 * Stats over the filtered sessions: the totals `codeloops sessions stats` prints,
 * sessions per day, the success rate over time, iterations to success and projects.
 */
export function renderStatsPage(shell: PageShell): void {
  let filter = filterFromAddress();
  let loading: AbortController | undefined;
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  const body = h('div', { class: 'stats-body' }, h('p', { class: 'muted' }, 'Loading stats…'));
  const bar = createFilterBar(filter, (next) => {
    filter = next;
    void load();
  });
  shell.content.replaceChildren(h('h1', { class: 'page-title' }, 'Stats'), bar.element, body);

  async function load(): Promise<void> {
    loading?.abort();
    const controller = (loading = new AbortController());
    try {
      const [stats, summaries] = await Promise.all([fetchStats(filter, controller.signal), fetchSessions(filter, controller.signal)]);
      if (controller.signal.aborted) return;
      body.replaceChildren(...renderStats(stats, summaries));
    } catch (error) {
      if (controller.signal.aborted) return;
      body.replaceChildren(h('p', { class: 'error' }, `The stats cannot be computed: ${(error as Error).message}`));
    }
  }

  const refreshSoon = (): void => {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => void load(), REFRESH_DELAY_MS);
  };
  void fetchStats(new URLSearchParams()).then(
    (all) => bar.setProjects(all.by_project.map((project) => project.project)),
    () => {},
  );
  void load();
  openLiveFeed({
    onEvent: (event) => {
      if (event.type === 'session_created' || event.type === 'session_completed' || event.type === 'session_removed') refreshSoon();
    },
    onStatus: (status) => shell.setFeedStatus(status),
  });
}
