import { h, icon, type Attributes } from '../dom.js';
import type { FeedStatus } from './liveFeed.js';

export type PageName = 'sessions' | 'session' | 'stats';

/**
 * A link to another page of this server. `h` keeps only http(s) targets (agent text
 * may hold links); these paths are built here from checked parts, never from agent text.
 */
export function pageLink(path: string, attributes: Attributes, ...children: Array<Node | string | null>): HTMLAnchorElement {
  const link = h('a', attributes, ...children);
  if (path.startsWith('/') && !path.startsWith('//')) link.setAttribute('href', path);
  return link;
}

/** Where the list page keeps its filters for the session page's way back (sessionStorage, this tab only). */
export const LIST_ADDRESS_KEY = 'codeloops.listAddress';

export const sessionPagePath = (id: string): string => `/sessions/${encodeURIComponent(id)}`;

export interface PageShell {
  /** Where the page puts its content. */
  content: HTMLElement;
  setFeedStatus(status: FeedStatus): void;
}

const FEED_TEXT: Readonly<Record<FeedStatus, { label: string; title: string }>> = {
  connecting: { label: 'Connecting…', title: 'Connecting to the live updates' },
  live: { label: 'Live', title: 'Sessions update as loops run' },
  reconnecting: { label: 'Reconnecting…', title: 'The server cannot be reached; trying again' },
  closed: { label: 'Offline', title: 'The server refused the live updates; reload the page' },
};

/** The top bar (name, pages, live status) and the content area under it. */
export function renderShell(root: HTMLElement, page: PageName): PageShell {
  const status = h('span', { class: 'feed-status feed-connecting', role: 'status' });
  const nav = h(
    'nav',
    { class: 'top-nav', 'aria-label': 'pages' },
    pageLink('/', { class: 'brand' }, icon('sync'), ' Codeloops'),
    pageLink(
      '/',
      { class: `nav-link${page === 'sessions' || page === 'session' ? ' active' : ''}`, ...(page === 'sessions' ? { 'aria-current': 'page' } : {}) },
      'Sessions',
    ),
    pageLink('/stats', { class: `nav-link${page === 'stats' ? ' active' : ''}`, ...(page === 'stats' ? { 'aria-current': 'page' } : {}) }, 'Stats'),
    h('span', { class: 'spacer' }),
    status,
  );
  const content = h('main', { class: `page page-${page}` });
  root.replaceChildren(h('header', { class: 'top-bar' }, nav), content);
  const shell: PageShell = {
    content,
    setFeedStatus(feed) {
      status.className = `feed-status feed-${feed}`;
      status.title = FEED_TEXT[feed].title;
      status.replaceChildren(h('span', { class: 'feed-dot', 'aria-hidden': 'true' }), FEED_TEXT[feed].label);
    },
  };
  shell.setFeedStatus('connecting');
  return shell;
}
