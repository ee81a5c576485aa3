import { renderShell, type PageName } from './pageShell.js';
import { renderSessionListPage } from './sessionListPage.js';
import { renderSessionPage } from './sessionPage.js';
import { renderStatsPage } from './statsPage.js';

/**
 * A page of `codeloops ui` (started from ../main.ts, the one entry point). The server
 * names the page; the address holds the session id and the filters.
 */
export function startBrowserPage(root: HTMLElement): void {
  const page = document.body.dataset.page as PageName | undefined;
  if (!page) return;
  const shell = renderShell(root, page);
  if (page === 'session') {
    const encoded = location.pathname.split('/')[2] ?? '';
    renderSessionPage(shell, decodeURIComponent(encoded));
  } else if (page === 'stats') renderStatsPage(shell);
  else renderSessionListPage(shell);
}
