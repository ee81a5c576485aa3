import { sanitizeForTerminal } from '../text/terminalText.js';
import { previewLine, takeHead } from '../text/truncate.js';
import { gitText } from './gitProcess.js';
import type { Repository } from './repository.js';

/**
 * Branches the runner makes for the user (a queue's tasks, `codeloops/<id>-<slug>`):
 * created only where none of that name is, moved only from where they were found
 * (compare-and-swap), so that a branch of the user's is never overwritten.
 */

export interface GitIdentity {
  name: string;
  email: string;
}

/** The commit a branch is at, or null when there is no such branch. */
export async function branchCommit(repository: Repository, branch: string): Promise<string | null> {
  const output = await gitText(repository.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { mayFindNothing: true });
  return output.trim() || null;
}

/** Creates `branch` at `commit`; false (and nothing changed) when a branch of that name exists. */
export async function createBranch(repository: Repository, branch: string, commit: string, message: string): Promise<boolean> {
  if ((await branchCommit(repository, branch)) !== null) return false;
  try {
    await moveBranch(repository, branch, commit, null, message);
    return true;
  } catch (error) {
    if ((await branchCommit(repository, branch)) !== null) return false;
    throw error;
  }
}

/**
 * The commit `branch` was made at, when its oldest reflog entry is `message`: a branch
 * the runner made itself (`createBranch` with that message), found again by a run after
 * one killed before it could record it. Null for any other branch, or without a reflog.
 */
export async function branchMadeWith(repository: Repository, branch: string, message: string): Promise<string | null> {
  if ((await branchCommit(repository, branch)) === null) return null;
  const log = await gitText(repository.root, ['reflog', 'show', '--format=%H %gs', `refs/heads/${branch}`], { mayFindNothing: true });
  const oldest = log.trimEnd().split('\n').at(-1) ?? '';
  const space = oldest.indexOf(' ');
  return space > 0 && oldest.slice(space + 1) === message ? oldest.slice(0, space) : null;
}

/** Whether `ancestor` is `commit` or in its history (false for commits of unrelated histories). */
export async function isAncestor(repository: Repository, ancestor: string, commit: string): Promise<boolean> {
  const base = (await gitText(repository.root, ['merge-base', ancestor, commit], { mayFindNothing: true })).trim();
  return base === ancestor;
}

/**
 * Makes a commit of `tree` with these parents, authored and committed by `identity`,
 * its message made fit for git (`commitMessageOf`). No branch moves: see `moveBranch`.
 */
export async function commitTree(repository: Repository, tree: string, parents: readonly string[], message: string, identity: GitIdentity): Promise<string> {
  const variables = {
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
  };
  const args = ['commit-tree', tree, ...parents.flatMap((parent) => ['-p', parent]), '-F', '-'];
  return (await gitText(repository.root, args, { variables, input: Buffer.from(commitMessageOf(message), 'utf8') })).trim();
}

/**
 * Moves `branch` to `commit` only from `from` (null: only where no branch of that name
 * is). The ref itself (`--no-deref`): a symbolic ref there is replaced, never followed to
 * the branch it names.
 */
export async function moveBranch(repository: Repository, branch: string, commit: string, from: string | null, reason: string): Promise<void> {
  await gitText(repository.root, ['update-ref', '--no-deref', '-m', reason, `refs/heads/${branch}`, commit, from ?? '']);
}

/** Whether the branch is a symbolic ref: a name for another branch (an agent can make its own branch one), whose commit `branchCommit` gives. */
export async function isSymbolicBranch(repository: Repository, branch: string): Promise<boolean> {
  return (await gitText(repository.root, ['symbolic-ref', '--quiet', `refs/heads/${branch}`], { mayFindNothing: true })).trim() !== '';
}

/** A commit message's first line at most, longer ones cut (the whole line then opens the body). */
const MAX_SUBJECT_CHARS = 100;
/** A whole commit message at most: a critic's summary can be as long as its answer. */
const MAX_MESSAGE_CHARS = 10_000;

/**
 * Text from an agent as a commit message git takes and a terminal shows as text: no
 * NUL (git refuses the commit), no control characters or escape sequences, a first line
 * of at most 100 characters, 10,000 characters in all.
 */
export function commitMessageOf(text: string): string {
  const lines = sanitizeForTerminal(text.replace(/\r\n?/g, '\n'))
    .split('\n')
    .map((line) => line.trimEnd());
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines.at(-1)!.trim() === '') lines.pop();
  if (lines.length === 0) return 'codeloops\n';
  const subject = lines[0]!;
  if (subject.length > MAX_SUBJECT_CHARS) lines.unshift(previewLine(subject, MAX_SUBJECT_CHARS), '');
  const message = lines.join('\n');
  return (message.length > MAX_MESSAGE_CHARS ? `${takeHead(message, MAX_MESSAGE_CHARS - 1)}…` : message) + '\n';
}

/** The user's git identity (`user.name` and `user.email` as this repository's config sees them), or null when either is not set. */
export async function userIdentity(repository: Repository): Promise<GitIdentity | null> {
  const read = async (key: string) => (await gitText(repository.root, ['config', '--get', key], { mayFindNothing: true })).trim();
  const [name, email] = await Promise.all([read('user.name'), read('user.email')]);
  return name && email ? { name, email } : null;
}

/** The files and lines changed between two commits. */
export async function changeStats(repository: Repository, from: string, to: string): Promise<{ files: number; insertions: number; deletions: number }> {
  const output = await gitText(repository.root, ['diff', '--numstat', '-z', '--no-renames', from, to]);
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  for (const record of output.split('\0')) {
    const match = /^(\d+|-)\t(\d+|-)\t/.exec(record);
    if (!match) continue;
    files += 1;
    insertions += match[1] === '-' ? 0 : Number(match[1]);
    deletions += match[2] === '-' ? 0 : Number(match[2]);
  }
  return { files, insertions, deletions };
}
