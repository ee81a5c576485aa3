import { renderShell, type PageName } from './pageShell.js';
import { renderSessionListPage } from './sessionListPage.js';
import { renderSessionPage } from './sessionPage.js';
import { renderStatsPage } from './statsPage.js';

// The browser page's entry point (`codeloops ui`); the editor's webview has its own (../main.ts).
// The server names the page; the address holds the session id and the filters.
const root = document.getElementById('app');
const page = document.body.dataset.page as PageName | undefined;
if (root && page) {
  const shell = renderShell(root, page);
  if (page === 'session') {
    const encoded = location.pathname.split('/')[2] ?? '';
    renderSessionPage(shell, decodeURIComponent(encoded));
  } else if (page === 'stats') renderStatsPage(shell);
  else renderSessionListPage(shell);
}
