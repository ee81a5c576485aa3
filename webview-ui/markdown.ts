import { Lexer, type Token, type Tokens } from 'marked';
import { h } from './dom.js';

/**
 * Markdown (the critic's feedback) rendered to DOM nodes from marked's tokens.
 * Raw HTML in the text is shown as text; links keep only http(s) targets.
 */
export function renderMarkdown(markdown: string): HTMLElement {
  const container = h('div', { class: 'markdown' });
  for (const node of blocks(new Lexer({ gfm: true }).lex(markdown))) container.appendChild(node);
  return container;
}

function blocks(tokens: readonly Token[]): Node[] {
  return tokens.flatMap((token): Node[] => {
    switch (token.type) {
      case 'space':
        return [];
      case 'paragraph':
        return [h('p', {}, ...inline((token as Tokens.Paragraph).tokens))];
      case 'heading': {
        const heading = token as Tokens.Heading;
        const level = Math.min(6, Math.max(3, heading.depth + 2)) as 3 | 4 | 5 | 6;
        return [h(`h${level}`, {}, ...inline(heading.tokens))];
      }
      case 'code':
        return [h('pre', { class: 'code' }, h('code', {}, (token as Tokens.Code).text))];
      case 'blockquote':
        return [h('blockquote', {}, ...blocks((token as Tokens.Blockquote).tokens))];
      case 'list': {
        const list = token as Tokens.List;
        const items = list.items.map((item) => h('li', {}, ...(item.task ? [item.checked ? '☑ ' : '☐ '] : []), ...blocks(item.tokens)));
        return [list.ordered ? h('ol', {}, ...items) : h('ul', {}, ...items)];
      }
      case 'table': {
        const table = token as Tokens.Table;
        return [
          h(
            'table',
            {},
            h('thead', {}, h('tr', {}, ...table.header.map((cell) => h('th', {}, ...inline(cell.tokens))))),
            h('tbody', {}, ...table.rows.map((row) => h('tr', {}, ...row.map((cell) => h('td', {}, ...inline(cell.tokens)))))),
          ),
        ];
      }
      case 'hr':
        return [h('hr')];
      case 'text': {
        const text = token as Tokens.Text;
        return [h('p', {}, ...(text.tokens ? inline(text.tokens) : [text.text]))];
      }
      default:
        // html and anything unknown: its source, as text.
        return [h('p', {}, 'raw' in token ? String(token.raw) : '')];
    }
  });
}

function inline(tokens: readonly Token[] | undefined): Node[] {
  return (tokens ?? []).map((token): Node => {
    switch (token.type) {
      case 'strong':
        return h('strong', {}, ...inline((token as Tokens.Strong).tokens));
      case 'em':
        return h('em', {}, ...inline((token as Tokens.Em).tokens));
      case 'del':
        return h('del', {}, ...inline((token as Tokens.Del).tokens));
      case 'codespan':
        return h('code', {}, (token as Tokens.Codespan).text);
      case 'br':
        return h('br');
      case 'link': {
        const link = token as Tokens.Link;
        return h('a', { href: link.href, title: link.href }, ...inline(link.tokens));
      }
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens ? h('span', {}, ...inline(text.tokens)) : document.createTextNode(decodeEntities(text.text));
      }
      case 'escape':
        return document.createTextNode((token as Tokens.Escape).text);
      default:
        return document.createTextNode('raw' in token ? String(token.raw) : '');
    }
  });
}

/** marked escapes `&`, `<`, `"` in text tokens; a text node needs the characters back. */
function decodeEntities(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name] ?? _);
}
