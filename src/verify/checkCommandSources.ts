import path from 'node:path';
import { previewLine } from '../text/truncate.js';
import { stepsOf } from '../text/shellSteps.js';

/**
 * What a check's command rests on besides its own words, which the actor could edit
 * to make it pass: the `package.json` script `npm test` runs, the Makefile target
 * `make test` runs, pytest's section of the project's config, a script file the
 * command names. Read from the command as a shell would split it, at most three
 * scripts deep; what it cannot follow (a shell function, a variable) it leaves out.
 */

export type SourcePart =
  | { kind: 'npm_script'; name: string }
  | { kind: 'make_target'; name: string | null }
  | { kind: 'config_section'; headers: readonly string[] }
  | { kind: 'whole' };

export interface CommandSource {
  /** From the repository's top. */
  file: string;
  part: SourcePart;
  /** The check that rests on it. */
  check: string;
}

export interface CheckToFollow {
  name: string;
  run: string;
  /** Its folder from the repository's top ('' is the top). */
  folder: string;
}

/** How a tree's files are read while following commands: undefined when there is no such file. */
export type ReadFile = (file: string) => Promise<string | undefined>;

const PYTEST_SECTIONS: readonly { file: string; headers: string[] }[] = [
  { file: 'pyproject.toml', headers: ['tool.pytest.ini_options', 'tool.pytest'] },
  { file: 'setup.cfg', headers: ['tool:pytest'] },
  { file: 'tox.ini', headers: ['pytest'] },
];

/** The headers of pytest's section in a Python config file, by the file's name; undefined for any other file. */
export function pytestSectionHeaders(file: string): readonly string[] | undefined {
  return PYTEST_SECTIONS.find((section) => section.file === path.posix.basename(file))?.headers;
}

const NPM_LIKE = new Set(['npm', 'pnpm', 'yarn', 'bun']);
/** Subcommands of npm-like tools that are not scripts. */
const NOT_SCRIPTS = new Set(['install', 'i', 'ci', 'add', 'exec', 'x', 'dlx', 'npx', 'publish', 'link', 'audit', 'outdated', 'why', 'ls', 'list']);

export async function checkCommandSources(checks: readonly CheckToFollow[], files: ReadonlySet<string>, read: ReadFile): Promise<CommandSource[]> {
  const sources = new Map<string, CommandSource>();
  const add = (source: CommandSource) => sources.set(`${source.file}\0${JSON.stringify(source.part)}`, source);
  for (const check of checks) await follow(check.run, check.folder, 0, { check: check.name, files, read, add });
  return [...sources.values()];
}

interface Follow {
  check: string;
  files: ReadonlySet<string>;
  read: ReadFile;
  add: (source: CommandSource) => void;
}

async function follow(command: string, folder: string, depth: number, how: Follow): Promise<void> {
  if (depth > 3) return;
  let here = folder;
  for (const words of simpleCommands(command)) {
    if (words[0] === 'cd' && words[1]) {
      here = path.posix.normalize(path.posix.join(here, words[1]));
      continue;
    }
    await followOne(words, here, depth, how);
  }
}

async function followOne(words: readonly string[], folder: string, depth: number, how: Follow): Promise<void> {
  const at = (file: string) => (folder === '' || folder === '.' ? file : path.posix.join(folder, file));
  const [program, ...args] = words;
  if (!program) return;
  const script = NPM_LIKE.has(program) ? npmScriptName(program, args) : undefined;
  if (script) {
    const packageFile = at('package.json');
    how.add({ file: packageFile, part: { kind: 'npm_script', name: script }, check: how.check });
    for (const text of scriptTexts(await how.read(packageFile), script)) await follow(text, folder, depth + 1, how);
    return;
  }
  if (program === 'make' || program === 'gmake') {
    const { dir, file, target } = makeArguments(args);
    how.add({ file: at(path.posix.join(dir, file)), part: { kind: 'make_target', name: target }, check: how.check });
    return;
  }
  if (isPytest(words)) {
    for (const section of PYTEST_SECTIONS)
      if (how.files.has(at(section.file))) how.add({ file: at(section.file), part: { kind: 'config_section', headers: section.headers }, check: how.check });
  }
  if (program === 'tox' && how.files.has(at('tox.ini'))) how.add({ file: at('tox.ini'), part: { kind: 'whole' }, check: how.check });
  // A script file the command names (`node test/run.mjs`, `./ci.sh`).
  for (const word of words) {
    const file = path.posix.normalize(at(word));
    if (!file.startsWith('..') && how.files.has(file)) how.add({ file, part: { kind: 'whole' }, check: how.check });
  }
}

/** `npm test`, `npm run lint`, `yarn test`, `pnpm build`: the script a command runs. */
function npmScriptName(program: string, args: readonly string[]): string | undefined {
  const words = args.filter((word) => !word.startsWith('-'));
  const [first, second] = words;
  if (!first) return undefined;
  if (first === 'run' || first === 'run-script') return second;
  if (['test', 't', 'tst'].includes(first)) return program === 'bun' ? undefined : 'test';
  if (first === 'start' || first === 'stop' || first === 'restart') return first;
  // yarn and pnpm run a script by its bare name.
  return program === 'yarn' || program === 'pnpm' ? (NOT_SCRIPTS.has(first) ? undefined : first) : undefined;
}

/** The script and its `pre` and `post` scripts, as npm runs them. */
function scriptTexts(packageJson: string | undefined, name: string): string[] {
  const scripts = scriptsOf(packageJson);
  return [scripts[`pre${name}`], scripts[name], scripts[`post${name}`]].filter((text): text is string => typeof text === 'string');
}

function scriptsOf(packageJson: string | undefined): Record<string, unknown> {
  if (packageJson === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(packageJson);
    const scripts = (parsed as { scripts?: unknown } | null)?.scripts;
    return scripts && typeof scripts === 'object' ? (scripts as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function makeArguments(args: readonly string[]): { dir: string; file: string; target: string | null } {
  let dir = '';
  let file = 'Makefile';
  let target: string | null = null;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-C' || arg === '--directory') dir = args[++i] ?? '';
    else if (arg === '-f' || arg === '--file' || arg === '--makefile') file = args[++i] ?? file;
    else if (!arg.startsWith('-') && !arg.includes('=') && target === null) target = arg;
  }
  return { dir, file, target };
}

function isPytest(words: readonly string[]): boolean {
  return words.some((word, i) => word === 'pytest' || word === 'py.test' || (word === '-m' && words[i + 1] === 'pytest'));
}

/**
 * The simple commands of a shell line, each as its words: split at `&&`, `||`, `;`,
 * `|`, `&` and newlines as sh splits them (`text/shellSteps.ts`), leading `VAR=value`
 * assignments and `env`, `exec`, `time` skipped. Enough to follow a check, not a shell.
 */
export function simpleCommands(line: string): string[][] {
  return line
    .split('\n')
    .flatMap((each) => stepsOf(each))
    .map((words) => {
      let start = 0;
      while (start < words.length && (/^\w+=/.test(words[start]!) || words[start] === 'env' || words[start] === 'exec' || words[start] === 'time')) start++;
      return words.slice(start);
    })
    .filter((words) => words.length > 0);
}

/** How a source changed from the start tree to now, in words; undefined when what the check rests on is the same. */
export function sourceChange(source: CommandSource, before: string | undefined, after: string | undefined): string | undefined {
  if (before === after) return undefined;
  if (after === undefined) return before === undefined ? undefined : 'deleted';
  switch (source.part.kind) {
    case 'npm_script':
      return scriptChange(source.part.name, before, after);
    case 'make_target':
      return sameText(makeRecipe(before, source.part.name), makeRecipe(after, source.part.name), `the ${source.part.name ?? 'default'} target`);
    case 'config_section':
      return sameText(sectionOf(before, source.part.headers), sectionOf(after, source.part.headers), `[${source.part.headers[0]}]`);
    case 'whole':
      return before === undefined ? 'added' : 'modified';
  }
}

function scriptChange(name: string, before: string | undefined, after: string): string | undefined {
  const old = scriptsOf(before);
  const now = scriptsOf(after);
  for (const key of [`pre${name}`, name, `post${name}`]) {
    if (old[key] === now[key]) continue;
    const show = (value: unknown) => (typeof value === 'string' ? JSON.stringify(previewLine(value, 80)) : 'none');
    return `scripts.${key}: ${show(old[key])} → ${show(now[key])}`;
  }
  return undefined;
}

function sameText(before: string | undefined, after: string | undefined, what: string): string | undefined {
  if (before === after) return undefined;
  if (after === undefined) return `${what} removed`;
  return `${what} changed`;
}

/** A Makefile target's recipe: its rule line and the tab-indented lines under it (the first target when none is named). */
function makeRecipe(text: string | undefined, target: string | null): string | undefined {
  if (text === undefined) return undefined;
  const lines = text.split('\n');
  const start = lines.findIndex((line) =>
    target === null
      ? /^[A-Za-z0-9_.-][^:=\s]*\s*:(?!=)/.test(line) && !line.startsWith('.')
      : new RegExp(`^(?:[^:=#]*\\s)?${escapeRegExp(target)}(?:\\s[^:=#]*)?\\s*:(?!=)`).test(line),
  );
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length && (lines[end]!.startsWith('\t') || lines[end]!.trim() === '')) end++;
  return lines.slice(start, end).join('\n').trimEnd();
}

/** An INI or TOML section's text, from its header to the next header. */
function sectionOf(text: string | undefined, headers: readonly string[]): string | undefined {
  if (text === undefined) return undefined;
  const lines = text.split('\n');
  const bounds = sectionBounds(lines, headers);
  return bounds ? lines.slice(bounds.start, bounds.end).join('\n').trimEnd() : undefined;
}

function sectionBounds(lines: readonly string[], headers: readonly string[]): { start: number; end: number } | null {
  const start = lines.findIndex((line) => headers.some((header) => line.trim() === `[${header}]`));
  if (start < 0) return null;
  let end = start + 1;
  while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end++;
  return { start, end };
}

/** `text` with its section under one of `headers` as `from` has it: replaced, removed where `from` has none, added at the end where `text` has none. */
export function replaceSection(text: string, from: string, headers: readonly string[]): string {
  const wanted = sectionOf(from, headers);
  const lines = text.split('\n');
  const bounds = sectionBounds(lines, headers);
  if (!bounds) return wanted === undefined ? text : `${text.trimEnd()}\n\n${wanted}\n`;
  const replacement = wanted === undefined ? [] : [...wanted.split('\n'), ''];
  return [...lines.slice(0, bounds.start), ...replacement, ...lines.slice(bounds.end)].join('\n');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
