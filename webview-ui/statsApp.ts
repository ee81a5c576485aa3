import {
  statsHostMessageSchema,
  statsStateSchema,
  type StatsFilter,
  type StatsHostMessage,
  type StatsState,
  type StatsViewerMessage,
} from '../src/sessionView/statsProtocol.js';
import { createFilterBar, type FilterBar } from './browser/filterBar.js';
import { append, clear, h } from './dom.js';
import { renderStats } from './statsView.js';
import { onHostMessage, type PageTransport } from './transport.js';

/** How the stats page talks to its host (the editor's webview). */
export type StatsTransport = PageTransport<StatsViewerMessage, StatsState>;

const FILTER_TEXTS = ['after', 'before', 'search', 'project'] as const;

/**
 * The editor's stats page (Codeloops: Show Statistics): the figures of the web stats
 * page, drawn by the same code, over the sessions its filters let through. The host
 * picks the first filter (this workspace folder's project) and sends the figures again
 * whenever the sessions change.
 */
export class StatsApp {
  private bar: FilterBar | undefined;
  /** The filter the page last asked for: figures of another one are an older answer, not shown. */
  private wanted: StatsFilter | undefined;
  private readonly filters = h('div', { class: 'stats-filters' });
  private readonly status = h('div', { class: 'status muted' }, 'Loading stats…');
  private readonly body = h('div', { class: 'stats-body' });

  constructor(
    root: HTMLElement,
    private readonly transport: StatsTransport,
  ) {
    clear(root);
    append(root, h('main', { class: 'viewer stats-page' }, h('h1', { class: 'title' }, 'Codeloops statistics'), this.filters, this.status, this.body));
    onHostMessage(transport, statsHostMessageSchema, (message) => this.handle(message));
    transport.send({ type: 'ready' });
    // After a reload of its host, the page counts what it counted before.
    const saved = statsStateSchema.safeParse(transport.loadState());
    if (saved.success) this.ask(saved.data.filter);
  }

  handle(message: StatsHostMessage): void {
    if (message.type === 'error') {
      this.status.textContent = message.message;
      this.status.className = 'status error';
      return;
    }
    if (this.wanted && queryOf(message.filter).toString() !== queryOf(this.wanted).toString()) return;
    this.showFilters(message.filter).setProjects(message.projects);
    this.status.replaceChildren();
    this.status.className = 'status muted';
    this.body.replaceChildren(...renderStats(message.stats, message.sessions));
    this.transport.saveState({ filter: message.filter });
  }

  private ask(filter: StatsFilter): void {
    this.wanted = filter;
    this.showFilters(filter);
    this.transport.send({ type: 'filter', filter });
  }

  /** The filter bar of the web page, set as the first figures (or the saved state) say. */
  private showFilters(initial: StatsFilter): FilterBar {
    if (!this.bar) {
      this.bar = createFilterBar(queryOf(initial), (query) => this.ask(filterOf(query)), { address: false });
      this.filters.replaceChildren(this.bar.element);
    }
    return this.bar;
  }
}

/** The filter bar's query (the API's parameters) as the protocol's filter, and back. */
export function filterOf(query: URLSearchParams): StatsFilter {
  const filter: StatsFilter = {};
  const outcomes = query.getAll('outcome');
  if (outcomes.length > 0) filter.outcome = outcomes;
  for (const name of FILTER_TEXTS) {
    const value = query.get(name);
    if (value) filter[name] = value;
  }
  return filter;
}

function queryOf(filter: StatsFilter): URLSearchParams {
  const query = new URLSearchParams();
  for (const outcome of filter.outcome ?? []) query.append('outcome', outcome);
  for (const name of FILTER_TEXTS) if (filter[name]) query.set(name, filter[name]);
  return query;
}
