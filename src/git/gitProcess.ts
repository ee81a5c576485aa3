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
    const child = spawn('git', [...NEUTRAL_CONFIG, ...args], {
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
      else reject(new GitCommandError(args[0] ?? '', exitCode, message));
    });
  });
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
