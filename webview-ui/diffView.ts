import { graphemeBoundaryAtOrBefore } from '../src/text/truncate.js';
import { button, h } from './dom.js';

/** Lines rendered at once; more on request, so a multi-megabyte diff never freezes the view. */
export const DIFF_PAGE_LINES = 1500;

function lineClass(line: string): string {
  if (line.startsWith('diff --git')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-meta';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  if (/^(index |new file|deleted file|rename |similarity |Binary files|old mode|new mode)/.test(line)) return 'diff-meta';
  return 'diff-context';
}

/** A unified diff as coloured lines, a page at a time. */
export function renderDiff(diff: string, pageLines = DIFF_PAGE_LINES): HTMLElement {
  const container = h('div', { class: 'diff', role: 'region', 'aria-label': 'diff' });
  if (diff.trim() === '') {
    container.appendChild(h('p', { class: 'muted' }, 'No files changed.'));
    return container;
  }
  const lines = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  const pre = h('pre', { class: 'diff-lines' });
  container.appendChild(pre);
  let shown = 0;
  const more = h('div', { class: 'diff-more' });
  const showPage = (): void => {
    const fragment = document.createDocumentFragment();
    for (const line of lines.slice(shown, shown + pageLines)) fragment.appendChild(h('div', { class: `diff-line ${lineClass(line)}` }, line || ' '));
    pre.appendChild(fragment);
    shown = Math.min(lines.length, shown + pageLines);
    more.replaceChildren();
    if (shown < lines.length) {
      more.appendChild(
        button(
          `Show ${Math.min(pageLines, lines.length - shown).toLocaleString('en-US')} more lines (${(lines.length - shown).toLocaleString('en-US')} left)`,
          showPage,
          { icon: 'unfold' },
        ),
      );
    }
  };
  showPage();
  container.appendChild(more);
  return container;
}

/** Plain text (agent output, stderr) a page at a time, as text. */
export function renderText(text: string, pageChars = 200_000): HTMLElement {
  const pre = h('pre', { class: 'output' });
  const container = h('div', {}, pre);
  let shown = 0;
  const more = h('div', { class: 'diff-more' });
  const showPage = (): void => {
    // A page ends on a character boundary: no emoji is split between two pages.
    const end = Math.max(graphemeBoundaryAtOrBefore(text, shown + pageChars), Math.min(text.length, shown + 1));
    pre.appendChild(document.createTextNode(text.slice(shown, end)));
    shown = end;
    more.replaceChildren();
    if (shown < text.length)
      more.appendChild(button(`Show more (${(text.length - shown).toLocaleString('en-US')} characters left)`, showPage, { icon: 'unfold' }));
  };
  showPage();
  container.appendChild(more);
  return container;
}
