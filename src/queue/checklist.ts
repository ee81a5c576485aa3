/**
 * `codeloops queue add --file tasks.md`: each unchecked item of a Markdown checklist
 * (`- [ ] …`, `* [ ] …`, `1. [ ] …`) is a task, the text indented under it its
 * details; checked items (`[x]`) are done and left out, and so is everything else.
 */
export function tasksOfChecklist(markdown: string): string[] {
  const tasks: string[] = [];
  let current: { title: string; indent: number; details: string[] } | null = null;
  const close = () => {
    if (current) tasks.push(promptOf(current.title, current.details));
    current = null;
  };
  for (const line of markdown.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const item = /^(\s*)(?:[-*+]|\d+[.)])\s+\[([ xX])\]\s*(.*)$/.exec(line);
    const indent = /^\s*/.exec(line)![0].length;
    if (current && (line.trim() === '' || indent > current.indent)) {
      current.details.push(line);
      continue;
    }
    close();
    if (item && item[2] === ' ' && item[3]!.trim() !== '') current = { title: item[3]!.trim(), indent: item[1]!.length, details: [] };
  }
  close();
  return tasks;
}

function promptOf(title: string, details: string[]): string {
  const lines = [...details];
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  const common = Math.min(...lines.filter((line) => line.trim() !== '').map((line) => /^\s*/.exec(line)![0].length));
  const body = lines.map((line) => line.slice(Number.isFinite(common) ? common : 0)).join('\n');
  return body ? `${title}\n\n${body}` : title;
}
