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
    // The empty old value: git refuses when the ref exists by now.
    await gitText(repository.root, ['update-ref', '-m', message, `refs/heads/${branch}`, commit, '']);
    return true;
  } catch (error) {
    if ((await branchCommit(repository, branch)) !== null) return false;
    throw error;
  }
}

/**
 * Commits `tree` on `branch` with `message`, authored and committed by `identity`:
 * its parent is the branch's commit now (the agent's own commits stay in the history),
 * and the branch moves only from there. Returns the new commit.
 */
export async function commitTreeOnBranch(repository: Repository, branch: string, tree: string, message: string, identity: GitIdentity): Promise<string> {
  const parent = await branchCommit(repository, branch);
  const variables = {
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
  };
  const args = ['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-F', '-'];
  const commit = (await gitText(repository.root, args, { variables, input: Buffer.from(message, 'utf8') })).trim();
  await gitText(repository.root, ['update-ref', '-m', 'codeloops: the task succeeded', `refs/heads/${branch}`, commit, parent ?? '']);
  return commit;
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
