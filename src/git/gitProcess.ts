import { execa } from 'execa';
import { simpleGit, type SimpleGit } from 'simple-git';
import { HeadTailBuffer } from '../text/headTailBuffer.js';

/**
 * How the runner starts git. Ambient GIT_* variables are dropped (a hook or an
 * editor can leave GIT_DIR or GIT_INDEX_FILE pointing elsewhere); the ones the
 * snapshot machinery sets on purpose are passed explicitly.
 *
 * Two ways in: simple-git for commands whose output is text, and `gitBytes` (execa)
 * for the plumbing that must be byte-exact: file names are bytes to git, and a name
 * that is not valid UTF-8 must round-trip untouched into a restore.
 */

/** Variables this module sets itself; simple-git refuses any other GIT_* by design. */
const OWN_GIT_VARIABLES = [
  'GIT_INDEX_FILE',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_TERMINAL_PROMPT',
  'GIT_OPTIONAL_LOCKS',
] as const;
export type GitVariable = (typeof OWN_GIT_VARIABLES)[number];

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
export const NEUTRAL_CONFIG = [
  '-c', 'core.quotepath=false',
  '-c', 'color.ui=false',
  '-c', 'commit.gpgSign=false',
  '-c', 'diff.noprefix=false',
  '-c', 'diff.mnemonicPrefix=false',
  '-c', 'diff.relative=false',
];

/**
 * Variables that name programs git would start (editors, pagers, askpass) or move its
 * config. The runner's git needs none of them, and simple-git refuses to run with
 * them set, while many users have EDITOR or PAGER in their shell and npm sets PREFIX.
 */
const PROGRAM_VARIABLES = new Set(['EDITOR', 'VISUAL', 'PAGER', 'PREFIX', 'SSH_ASKPASS']);

function baseEnvironment(): Record<string, string> {
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
  return env;
}

export function gitClient(directory: string, variables: Partial<Record<GitVariable, string>> = {}): SimpleGit {
  return simpleGit({ baseDir: directory, allowEnvironment: [...OWN_GIT_VARIABLES], trimmed: false })
    .env({ ...baseEnvironment(), ...variables });
}

export function gitEnvironment(variables: Partial<Record<GitVariable, string>> = {}): Record<string, string> {
  return { ...baseEnvironment(), ...variables };
}

/**
 * Runs git with bytes in and bytes out. Paths from it are kept as `latin1` strings
 * (one character per byte), which round-trip exactly; `displayPath` decodes them.
 */
export async function gitBytes(
  directory: string,
  args: readonly string[],
  options: { input?: Buffer; variables?: Partial<Record<GitVariable, string>> } = {},
): Promise<Buffer> {
  const result = await execa('git', [...NEUTRAL_CONFIG, ...args], {
    cwd: directory,
    env: gitEnvironment(options.variables),
    extendEnv: false,
    encoding: 'buffer',
    reject: false,
    ...(options.input ? { input: options.input } : { stdin: 'ignore' as const }),
  });
  if (result.exitCode !== 0) {
    throw new Error(`git ${args[0]} failed (exit ${result.exitCode}): ${Buffer.from(result.stderr).toString('utf8').trim()}`);
  }
  return Buffer.from(result.stdout);
}

/** A raw (latin1) path as people read it. */
export function displayPath(rawPath: string): string {
  return Buffer.from(rawPath, 'latin1').toString('utf8');
}

/** NUL-separated raw paths, as `--stdin -z` plumbing reads them. */
export function nulSeparated(rawPaths: readonly string[]): Buffer {
  return Buffer.from(rawPaths.map((rawPath) => `${rawPath}\0`).join(''), 'latin1');
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
  const child = execa('git', [...NEUTRAL_CONFIG, ...args], {
    cwd: directory,
    env: gitEnvironment(),
    extendEnv: false,
    buffer: { stdout: false, stderr: true },
    stdin: 'ignore',
    encoding: 'utf8',
    reject: false,
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => buffer.append(chunk));
  const result = await child;
  if (result.exitCode !== 0) {
    throw new Error(`git ${args[0]} failed (exit ${result.exitCode}): ${String(result.stderr).trim()}`);
  }
  const text = buffer.toString();
  return { text, totalChars: buffer.totalChars, truncated: text.length !== buffer.totalChars };
}
