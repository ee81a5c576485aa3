import { h, icon } from '../dom.js';
import { previewLine } from '../../src/text/truncate.js';
import { ViewerApp } from '../viewerApp.js';
import { sessionPath } from './api.js';
import { HttpTransport } from './httpTransport.js';
import { LIST_ADDRESS_KEY, pageLink, type PageShell } from './pageShell.js';

/**
 * One session: the same viewer as in the editor (ViewerApp), over HTTP. Links to the
 * raw session and its whole diff, which the API streams.
 */
export function renderSessionPage(shell: PageShell, sessionId: string): void {
  const viewerRoot = h('div', { class: 'viewer-root' });
  const raw = h('a', { class: 'button', title: 'The session as JSON (GET /api/sessions/:id)' }, icon('json'), 'JSON');
  raw.setAttribute('href', sessionPath(sessionId));
  const diff = h('a', { class: 'button', title: 'Every iteration’s recorded diff as text (GET /api/sessions/:id/diff)' }, icon('diff'), 'Whole diff');
  diff.setAttribute('href', `${sessionPath(sessionId)}/diff`);
  shell.content.replaceChildren(
    h(
      'div',
      { class: 'session-actions' },
      pageLink(backToList(), { class: 'back-link' }, icon('arrow-left'), ' All sessions'),
      h('span', { class: 'spacer' }),
      raw,
      diff,
    ),
    viewerRoot,
  );
  const transport = new HttpTransport(sessionId, {
    onStatus: (status) => shell.setFeedStatus(status),
    onTitle: (prompt) => (document.title = `Codeloops · ${previewLine(prompt.trim().split('\n')[0] ?? prompt, 60)}`),
  });
  new ViewerApp(viewerRoot, transport);
}

/** Back to the list as it was last filtered in this tab. */
function backToList(): string {
  try {
    const search = sessionStorage.getItem(LIST_ADDRESS_KEY) ?? '';
    return search.startsWith('?') ? `/${search}` : '/';
  } catch {
    return '/';
  }
}
