/**
 * `codeloops queue add --file tasks.md`: each unchecked item of a Markdown checklist
 * (`- [ ] …`, `* [ ] …`, `1. [ ] …`) is a task, the text indented under it its
 * details; checked items (`[x]`) are done and left out, and so is everything else,
 * including what Markdown shows as no item at all: the lines of a fenced code block
 * (an example checklist) and HTML comments (an item commented out). A fence indented
 * under an item is part of its details, as it is.
 */
export function tasksOfChecklist(markdown: string): string[] {
  const tasks: string[] = [];
  let current: { title: string; indent: number; details: string[] } | null = null;
  const close = () => {
    if (current) tasks.push(promptOf(current.title, current.details));
    current = null;
  };
  const lines = new MarkdownLines();
  let fenceInDetails = false;
  for (const raw of markdown.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const { text, code, fenceOpens } = lines.next(raw);
    if (code) {
      if (fenceOpens) fenceInDetails = current !== null && indentOf(raw) > current.indent;
      if (fenceInDetails) current!.details.push(raw);
      else close();
      continue;
    }
    if (text === null) continue; // all of it a comment
    const item = /^(\s*)(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$/.exec(text);
    if (current && (text.trim() === '' || indentOf(text) > current.indent)) {
      current.details.push(text);
      continue;
    }
    close();
    if (item && item[2] === ' ' && item[3]!.trim() !== '') current = { title: item[3]!.trim(), indent: item[1]!.length, details: [] };
  }
  close();
  return tasks;
}

function indentOf(line: string): number {
  return /^\s*/.exec(line)![0].length;
}

/**
 * Markdown a line at a time, as far as a checklist needs it: whether a line belongs to
 * a fenced code block (``` or ~~~, closed by a fence of the same character at least as
 * long), and the line without its HTML comments (`<!-- … -->`, over lines too).
 */
class MarkdownLines {
  private fence: { char: string; length: number } | null = null;
  private inComment = false;

  /** `text` is null for a line that was all comment; `code` for the lines of a fence, its own included. */
  next(line: string): { text: string | null; code: boolean; fenceOpens: boolean } {
    if (this.fence) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line);
      if (close && close[1]![0] === this.fence.char && close[1]!.length >= this.fence.length) this.fence = null;
      return { text: null, code: true, fenceOpens: false };
    }
    const wasInComment = this.inComment;
    const text = this.withoutComments(line);
    const open = /^\s*(`{3,}|~{3,})/.exec(text);
    if (!wasInComment && open) {
      this.fence = { char: open[1]![0]!, length: open[1]!.length };
      return { text: null, code: true, fenceOpens: true };
    }
    return { text: text.trim() === '' && line.trim() !== '' ? null : text, code: false, fenceOpens: false };
  }

  private withoutComments(line: string): string {
    let kept = '';
    let rest = line;
    for (;;) {
      if (this.inComment) {
        const end = rest.indexOf('-->');
        if (end < 0) return kept;
        this.inComment = false;
        rest = rest.slice(end + 3);
      }
      const start = rest.indexOf('<!--');
      if (start < 0) return kept + rest;
      kept += rest.slice(0, start);
      rest = rest.slice(start + 4);
      this.inComment = true;
    }
  }
}

function promptOf(title: string, details: string[]): string {
  const lines = [...details];
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  const common = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => /^\s*/.exec(line)![0].length));
  const body = lines.map((line) => line.slice(Number.isFinite(common) ? common : 0)).join('\n');
  return body ? `${title}\n\n${body}` : title;
}
