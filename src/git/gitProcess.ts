import { spawn } from 'node:child_process';
import path from 'node:path';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { HeadTailBuffer } from '../text/headTailBuffer.js';

/**
 * How the runner starts git: one way in, `node:child_process` with an argument list
 * (never a shell), bytes in and bytes out. Ambient GIT_* variables are dropped (a hook
 * or an editor can leave GIT_DIR or GIT_INDEX_FILE pointing elsewhere); the ones the
 * snapshot machinery sets on purpose are passed explicitly. File names are bytes to
 * git: output meant to be parsed as paths is read as `latin1`, which round-trips a
 * name that is not valid UTF-8 untouched into a restore.
 */

/** Variables this module sets itself. */
export type GitVariable =
  'GIT_INDEX_FILE' | 'GIT_AUTHOR_NAME' | 'GIT_AUTHOR_EMAIL' | 'GIT_COMMITTER_NAME' | 'GIT_COMMITTER_EMAIL' | 'GIT_TERMINAL_PROMPT' | 'GIT_OPTIONAL_LOCKS';

/** Snapshots are authored by codeloops, so no user identity is needed and none is borrowed. */
export const SNAPSHOT_IDENTITY: Readonly<Partial<Record<GitVariable, string>>> = {
  GIT_AUTHOR_NAME: 'codeloops',
  GIT_AUTHOR_EMAIL: 'codeloops@localhost',
  GIT_COMMITTER_NAME: 'codeloops',
  GIT_COMMITTER_EMAIL: 'codeloops@localhost',
};

/**
 * Options every invocation gets: no pager, no colour, no external diff or textconv
 * drivers, no signing prompts, paths printed as they are (not octal-escaped).
 */
const NEUTRAL_CONFIG = [
  '-c',
  'core.quotepath=false',
  '-c',
  'color.ui=false',
  '-c',
  'commit.gpgSign=false',
  '-c',
  'diff.noprefix=false',
  '-c',
  'diff.mnemonicPrefix=false',
  '-c',
  'diff.relative=false',
];

/**
 * For commands on an index of the runner's own (`GIT_INDEX_FILE`): the user's sparse
 * checkout and split index are about their own index. A sparse checkout would make
 * `git add` pass over files outside its cone (an agent's write there unseen), and a
 * split index would leave a `sharedindex.*` file in the git folder for every
 * temporary index written.
 */
const OWN_INDEX_CONFIG = ['-c', 'core.sparseCheckout=false', '-c', 'core.splitIndex=false'];

/** Variables that name programs git would start (editors, pagers, askpass); the runner's git needs none. */
const PROGRAM_VARIABLES = new Set(['EDITOR', 'VISUAL', 'PAGER', 'SSH_ASKPASS', 'GIT_EDITOR', 'GIT_PAGER', 'GIT_ASKPASS']);

/** How much of git's stderr is kept for an error message. */
const STDERR_KEEP_CHARS = 4_000;

export class GitNotInstalledError extends CodeloopsError {
  override name = 'GitNotInstalledError';
  constructor() {
    super('git_missing', 'git was not found on PATH. Codeloops needs git to snapshot the working tree: install git and try again.');
  }
}

/** A git command that failed; its stderr says why. */
export class GitCommandError extends CodeloopsError {
  override name = 'GitCommandError';
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super('git_failed', `git ${command} failed (exit ${exitCode ?? 'by a signal'}): ${stderr.trim()}`, { command, exit_code: exitCode });
  }
}

/**
 * git could not take one of its lock files (`index.lock`, a ref's `<name>.lock`,
 * `packed-refs.lock`): it exists. Another git process holds it, or one that stopped
 * half-way (a crash, a kill) left it behind, and git never removes it itself: the
 * message names the file, so that whoever knows no git runs can remove it.
 */
export class GitLockedError extends CodeloopsError {
  override name = 'GitLockedError';
  constructor(
    readonly command: string,
    readonly lockFile: string,
  ) {
    super(
      'git_locked',
      `git ${command} could not lock ${lockFile.slice(0, -'.lock'.length)}: ${lockFile} exists. Another git process is using it, or one that stopped half-way (a crash, a kill) left it behind; if no git command is running in this repository, remove that file and try again.`,
      { command, lock_file: lockFile },
    );
  }
}

/**
 * A filter that the repository's attributes give some files (`filter=<name>`, such as
 * Git LFS's `filter=lfs`) and that git must run to read or write them could not run,
 * or failed. Without it no snapshot of those files can be taken or put back.
 */
export class GitFilterError extends CodeloopsError {
  override name = 'GitFilterError';
  constructor(details: { filter: string; program: string | null; program_missing: boolean; command: string }, configured: string | null, stderr: string) {
    const what = `git could not ${details.command === 'checkout-index' ? 'write' : 'read'} the files this repository gives the "${details.filter}" filter (filter=${details.filter} in its attributes)`;
    super(
      'git_filter_failed',
      details.program_missing && details.program
        ? `${what}: its program ${details.program} is not installed or not on PATH${configured ? ` (the filter runs "${configured}")` : ''}. ` +
            `Install it${details.filter === 'lfs' ? ' (Git LFS: https://git-lfs.com, then "git lfs install")' : ''} and try again, ` +
            `or remove the filter from git's configuration if this repository does not need it.`
        : `${what}: the filter failed${configured ? ` (it runs "${configured}")` : ''}: ${stderr.trim()}`,
      details,
    );
  }
}

export function gitEnvironment(variables: Partial<Record<GitVariable, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    const name = key.toUpperCase();
    if (value !== undefined && !name.startsWith('GIT_') && !PROGRAM_VARIABLES.has(name)) env[key] = value;
  }
  // Never wait on a credential prompt; never take locks a user's git might want;
  // messages in English, since a few of them are read.
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_OPTIONAL_LOCKS = '0';
  env.LC_ALL = 'C';
  return { ...env, ...variables };
}

export interface GitOptions {
  /** Written to git's stdin, which is closed after it. */
  input?: Buffer;
  variables?: Partial<Record<GitVariable, string>>;
  /**
   * A query that may find nothing (`rev-parse --verify --quiet`, `symbolic-ref --quiet`,
   * `cat-file -t`): a failure that says nothing on stderr means "none" and gives empty output.
   */
  mayFindNothing?: boolean;
}

/** Runs git with an argument list and gives its whole stdout as bytes. */
export async function gitBytes(directory: string, args: readonly string[], options: GitOptions = {}): Promise<Buffer> {
  const chunks: Buffer[] = [];
  await runGit(directory, args, options, (chunk) => chunks.push(chunk));
  return Buffer.concat(chunks);
}

/** Runs git and hands its stdout over a piece at a time, as it comes (for output too large to hold). */
export async function gitEach(directory: string, args: readonly string[], options: GitOptions, onStdout: (chunk: Buffer) => void): Promise<void> {
  await runGit(directory, args, options, onStdout);
}

/** Runs git and gives its stdout as UTF-8 text (for output that holds no paths to act on). */
export async function gitText(directory: string, args: readonly string[], options: GitOptions = {}): Promise<string> {
  return (await gitBytes(directory, args, options)).toString('utf8');
}

export interface StreamedOutput {
  text: string;
  totalChars: number;
  truncated: boolean;
}

/**
 * Runs git and keeps only the head and tail of its output: a diff can be hundreds
 * of megabytes, and the runner's memory must stay flat.
 */
export async function gitStreamed(directory: string, args: readonly string[], maxChars: number): Promise<StreamedOutput> {
  const buffer = new HeadTailBuffer(Math.floor(maxChars / 2), Math.floor(maxChars / 2));
  const decoder = new TextDecoder('utf-8');
  await runGit(directory, args, {}, (chunk) => buffer.append(decoder.decode(chunk, { stream: true })));
  buffer.append(decoder.decode());
  const text = buffer.toString();
  return { text, totalChars: buffer.totalChars, truncated: text.length !== buffer.totalChars };
}

function runGit(directory: string, args: readonly string[], options: GitOptions, onStdout: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const ownIndex = options.variables?.GIT_INDEX_FILE ? OWN_INDEX_CONFIG : [];
    const child = spawn('git', [...NEUTRAL_CONFIG, ...ownIndex, ...args], {
      cwd: directory,
      env: gitEnvironment(options.variables),
      stdio: [options.input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const stderr = new HeadTailBuffer(STDERR_KEEP_CHARS / 2, STDERR_KEEP_CHARS / 2);
    // Both are pipes (stdio above), so both exist.
    child.stdout!.on('data', onStdout);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => stderr.append(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT' ? new GitNotInstalledError() : error));
    if (options.input) {
      // git may exit before reading everything (a bad argument): that is reported by its exit code, not EPIPE.
      child.stdin?.on('error', () => {});
      child.stdin?.end(options.input);
    }
    child.on('close', (exitCode) => {
      const message = stderr.toString();
      if (exitCode === 0 || (options.mayFindNothing && exitCode !== null && message.trim() === '')) resolve();
      else void explainFailure(directory, subcommandOf(args), exitCode, message).then(reject, reject);
    });
  });
}

/** The git command in an argument list: its first word that is not an option (`-c key=value` included). */
function subcommandOf(args: readonly string[]): string {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' || args[i] === '-C') i++;
    else if (!args[i]!.startsWith('-')) return args[i]!;
  }
  return args[0] ?? '';
}

/** git's words (LC_ALL=C) when a filter could not run or failed: a clean or smudge command, or a long-running filter process. */
const FILTER_FAILED = /(?:clean|smudge) filter '([^']+)' failed|external filter '[^']+' failed|subprocess '[^']+' failed|the remote end hung up unexpectedly/;
/** A shell's words for a program it cannot find (dash, bash), and git's when it runs one itself; the filter's exit code 127 says the same. */
const PROGRAM_NOT_FOUND = /: (?:line )?\d+: (\S+): (?:command )?not found|cannot run (\S+?):|' failed 127\b/;

/** git's words (LC_ALL=C) when one of its lock files exists: `Unable to create '<path>.lock': File exists.` */
const LOCK_EXISTS = /Unable to create '([^']+\.lock)': File exists/;

/** A failed command's error: a lock file in the way, a filter that could not run, said so (which one, which program), or git's own words. */
async function explainFailure(directory: string, command: string, exitCode: number | null, stderr: string): Promise<Error> {
  const locked = LOCK_EXISTS.exec(stderr)?.[1];
  if (locked) return new GitLockedError(command, locked);
  const failed = FILTER_FAILED.exec(stderr);
  if (!failed) return new GitCommandError(command, exitCode, stderr);
  const filters = await configuredFilters(directory).catch(() => new Map<string, Map<string, string>>());
  // The filter's name when git says it, else the filter whose command git names.
  const name = failed[1] ?? [...filters].find(([, settings]) => [...settings.values()].some((value) => stderr.includes(value)))?.[0];
  if (!name) return new GitCommandError(command, exitCode, stderr);
  const settings = filters.get(name);
  const configured = settings?.get('process') ?? settings?.get(command === 'checkout-index' ? 'smudge' : 'clean') ?? null;
  const notFound = PROGRAM_NOT_FOUND.exec(stderr);
  const program = notFound?.[1] ?? notFound?.[2] ?? configured?.trim().split(/\s+/)[0] ?? null;
  return new GitFilterError({ filter: name, program, program_missing: notFound !== null, command }, configured, stderr);
}

/** `filter.<name>.<setting>` from git's configuration, by filter name. */
async function configuredFilters(directory: string): Promise<Map<string, Map<string, string>>> {
  const output = await gitText(directory, ['config', '-z', '--get-regexp', '^filter\\.'], { mayFindNothing: true });
  const filters = new Map<string, Map<string, string>>();
  // `-z`: each entry is `key\nvalue\0`; a filter's name may hold dots, its setting does not.
  for (const entry of output.split('\0')) {
    const newline = entry.indexOf('\n');
    const key = newline < 0 ? entry : entry.slice(0, newline);
    const match = /^filter\.(.+)\.([^.]+)$/.exec(key);
    if (!match) continue;
    if (!filters.has(match[1]!)) filters.set(match[1]!, new Map());
    filters.get(match[1]!)!.set(match[2]!.toLowerCase(), newline < 0 ? '' : entry.slice(newline + 1));
  }
  return filters;
}

/** A raw (latin1) path as people read it. */
export function displayPath(rawPath: string): string {
  return Buffer.from(rawPath, 'latin1').toString('utf8');
}

/** A raw (latin1) repository path as a file system path under the work tree's top, bytes intact. */
export function onDisk(root: string, rawPath: string): Buffer {
  return Buffer.concat([Buffer.from(root + path.sep, 'utf8'), Buffer.from(rawPath, 'latin1')]);
}

/** NUL-separated raw paths, as `--stdin -z` plumbing reads them. */
export function nulSeparated(rawPaths: readonly string[]): Buffer {
  return Buffer.from(rawPaths.map((rawPath) => `${rawPath}\0`).join(''), 'latin1');
}
