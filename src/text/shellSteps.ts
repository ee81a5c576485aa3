import { parse, quote, type ParseEntry } from 'shell-quote';

/** A step of a command: its words, `VAR=value` assignments left out. */
export type Step = string[];

/** A command's steps as sh splits them at `&&`, `||`, `;`, `|` and `&`, each without its leading `VAR=value` words; `$VAR` kept as written. */
export function stepsOf(command: string): Step[] {
  const entries: ParseEntry[] = parse(command, (name) => `$${name}`);
  const steps: Step[] = [[]];
  let redirected = false;
  for (const entry of entries) {
    if (typeof entry === 'string') {
      // The file of a redirection (`> out.txt`, `2>&1`) is no word of the command.
      if (!redirected) steps.at(-1)!.push(entry);
      redirected = false;
    } else if ('op' in entry && REDIRECTIONS.has(entry.op)) {
      // `2>&1`: the 2 before it is the descriptor, not an argument.
      if (/^\d$/.test(steps.at(-1)!.at(-1) ?? '')) steps.at(-1)!.pop();
      redirected = true;
    } else if ('op' in entry && entry.op !== 'glob') steps.push([]);
    else if ('pattern' in entry) steps.at(-1)!.push(entry.pattern);
  }
  return steps.map((words) => words.slice(leadingAssignments(words))).filter((words) => words.length > 0);
}

const REDIRECTIONS: ReadonlySet<string> = new Set(['>', '>>', '<', '>&', '<&', '>|', '<<<']);

export function leadingAssignments(words: Step): number {
  let index = 0;
  while (index < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[index]!)) index += 1;
  return index;
}

/** A word as sh would read it back as one argument, quoted only when it needs to be: for commands shown to the user to type. */
export function shellWord(word: string): string {
  return quote([word]);
}
