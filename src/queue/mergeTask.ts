import { branchCommit, userIdentity, type GitIdentity } from '../git/branches.js';
import { GitCommandError, gitBytes, gitEach, gitText, nulSeparated } from '../git/gitProcess.js';
import { headCommit, type Repository } from '../git/repository.js';
import { restorePaths } from '../git/restore.js';
import { changedPaths, type TreeEntryChange } from '../git/treeDiff.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { QueueTask } from '../sessionFormat/queueRecords.js';
import { QUEUE_AUTHOR_FALLBACK } from './runQueue.js';

/**
 * Merging a finished task's branch into the branch the user is on (`queue merge`, the
 * Queue view's Merge), and undoing that merge. git's own `merge` is not used: it wants
 * an index with nothing staged and may leave conflict markers in the user's files.
 * Instead the merge is worked out first, in git's object store only
 * (`merge-tree --write-tree`), and refused with the files named when git cannot merge
 * cleanly; then the merge commit is made, the user's branch moved to it from where it
 * was (compare-and-swap), and only the files the merge changes are written, in the work
 * tree and the index. A file the merge changes that the user has changed (staged,
 * unstaged, untracked or ignored in its way) refuses the whole merge: their other work
 * is never looked at, let alone touched. Undoing moves the branch back the same way.
 */

export type MergeStatus = 'merged' | 'already_merged' | 'undone';

export interface MergeResult {
  status: MergeStatus;
  task: number;
  /** The user's branch (`refs/heads/…` left out). */
  branch: string;
  /** Where it was, and where it is now (the merge commit, or after an undo the commit before it). */
  from: string;
  to: string;
  /** The files written in the work tree and index. */
  files: string[];
}

/** Merges `task`'s branch into the current branch; see above. */
export async function mergeTask(repository: Repository, task: QueueTask, author: GitIdentity | null): Promise<MergeResult> {
  const taskCommit = await mergeableCommit(repository, task);
  const { branch, head } = await currentBranch(repository);
  const result = (from: string, to: string, files: string[], status: MergeStatus): MergeResult => ({ status, task: task.id, branch, from, to, files });
  if (await isAncestor(repository, taskCommit, head)) return result(head, head, [], 'already_merged');
  const tree = await mergedTree(repository, head, taskCommit);
  const identity = author ?? (await userIdentity(repository)) ?? QUEUE_AUTHOR_FALLBACK;
  const message = `Merge ${task.branch} (codeloops queue task ${task.id})\n`;
  const variables = {
    GIT_AUTHOR_NAME: identity.name,
    GIT_AUTHOR_EMAIL: identity.email,
    GIT_COMMITTER_NAME: identity.name,
    GIT_COMMITTER_EMAIL: identity.email,
  };
  // Checked before the commit is made, so that a refusal leaves not even an unreferenced object behind that matters.
  const changes = await guardedChanges(repository, head, tree);
  const merge = (
    await gitText(repository.root, ['commit-tree', tree, '-p', head, '-p', taskCommit, '-F', '-'], { variables, input: Buffer.from(message) })
  ).trim();
  await moveBranch(repository, branch, head, merge, changes, `codeloops: merge ${task.branch}`);
  return result(
    head,
    merge,
    changes.map((change) => change.path),
    'merged',
  );
}

/**
 * Undoes `mergeTask`: the current branch must still be at the merge of this task's
 * branch (its second parent the task's commit), and the files it wrote unchanged since.
 */
export async function undoTaskMerge(repository: Repository, task: QueueTask): Promise<MergeResult> {
  const taskCommit = await mergeableCommit(repository, task);
  const { branch, head } = await currentBranch(repository);
  const parents = (await gitText(repository.root, ['rev-list', '--parents', '-n', '1', head])).trim().split(' ').slice(1);
  if (parents.length !== 2 || parents[1] !== taskCommit) {
    throw new CodeloopsError('merge_refused', `${branch} is not at the merge of task ${task.id}'s branch ${task.branch}: there is no merge of it to undo.`, {
      id: task.id,
      reason: 'not_merged_here',
    });
  }
  const before = parents[0]!;
  const changes = await guardedChanges(repository, head, before);
  await moveBranch(repository, branch, head, before, changes, `codeloops: undo the merge of ${task.branch}`);
  return { status: 'undone', task: task.id, branch, from: head, to: before, files: changes.map((change) => change.path) };
}

/** The commit of a task that ended `success` on its branch; anything else has nothing to merge. */
async function mergeableCommit(repository: Repository, task: QueueTask): Promise<string> {
  const commit = task.outcome === 'success' ? await branchCommit(repository, task.branch) : null;
  if (!commit) {
    const why =
      task.outcome === 'success' ? `its branch ${task.branch} is gone` : `it has not succeeded (${task.state === 'finished' ? task.outcome : task.state})`;
    throw new CodeloopsError('merge_refused', `Task ${task.id} cannot be merged: ${why}.`, {
      id: task.id,
      reason: task.outcome === 'success' ? 'branch_missing' : 'not_succeeded',
    });
  }
  return commit;
}

async function currentBranch(repository: Repository): Promise<{ branch: string; head: string }> {
  const ref = (await gitText(repository.root, ['symbolic-ref', '--quiet', 'HEAD'], { mayFindNothing: true })).trim();
  const head = await headCommit(repository);
  if (!ref.startsWith('refs/heads/') || !head) {
    throw new CodeloopsError('merge_refused', 'HEAD is not on a branch with a commit: there is no current branch to merge into.', { reason: 'no_branch' });
  }
  return { branch: ref.slice('refs/heads/'.length), head };
}

async function isAncestor(repository: Repository, ancestor: string, of: string): Promise<boolean> {
  const base = (await gitText(repository.root, ['merge-base', ancestor, of], { mayFindNothing: true })).trim();
  return base === ancestor;
}

/** The tree git's merge of the two commits gives, or `merge_conflict` naming the files git cannot merge. */
async function mergedTree(repository: Repository, head: string, taskCommit: string): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    await gitEach(repository.root, ['merge-tree', '--write-tree', '-z', '--name-only', head, taskCommit], {}, (chunk) => chunks.push(chunk));
  } catch (error) {
    // Exit 1 is git's "the merge has conflicts", said on stdout: the tree, then the conflicted paths up to an empty field.
    if (!(error instanceof GitCommandError) || error.exitCode !== 1) throw error;
    const fields = Buffer.concat(chunks).toString('latin1').split('\0');
    const end = fields.indexOf('', 1);
    const files = [...new Set(fields.slice(1, end < 0 ? undefined : end))].map((raw) => Buffer.from(raw, 'latin1').toString('utf8'));
    throw new CodeloopsError(
      'merge_conflict',
      `git cannot merge ${taskCommit.slice(0, 12)} cleanly: ${files.join(', ')} changed on both sides. Nothing was changed.`,
      {
        files,
      },
    );
  }
  return Buffer.concat(chunks).toString('latin1').split('\0')[0]!.trim();
}

/** The paths that differ from `from` to `to`; `tree_changed` when the user has any of them changed (or something in their way). */
async function guardedChanges(repository: Repository, from: string, to: string): Promise<TreeEntryChange[]> {
  const changes = await changedPaths(repository, from, to);
  const touched = new Set(changes.map((change) => change.rawPath));
  const status = (await gitBytes(repository.root, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames'])).toString(
    'latin1',
  );
  // `XY path\0` per entry; a folder (an ignored one ends with `/`) is in the way of every path under it.
  const changed = status
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3))
    .filter((raw) => touched.has(raw.replace(/\/$/, '')) || [...touched].some((path) => path.startsWith(raw.endsWith('/') ? raw : `${raw}/`)));
  if (changed.length > 0) {
    const files = changed.map((raw) => Buffer.from(raw, 'latin1').toString('utf8'));
    throw new CodeloopsError('tree_changed', `You have changes in files the merge would write: ${files.join(', ')}. Nothing was changed.`, {
      changed: files,
      merge: true,
    });
  }
  return changes;
}

/** Moves `branch` from `from` to `to` (refused if it moved meanwhile), then writes the changed paths to the work tree and the index. */
async function moveBranch(
  repository: Repository,
  branch: string,
  from: string,
  to: string,
  changes: readonly TreeEntryChange[],
  message: string,
): Promise<void> {
  await gitText(repository.root, ['update-ref', '-m', message, `refs/heads/${branch}`, to, from]);
  await restorePaths(repository, to, changes);
  if (changes.length === 0) return;
  // The index takes the new commit's entries for those paths only: whatever else the user staged stays staged.
  await gitBytes(repository.root, ['reset', '-q', '--pathspec-from-file=-', '--pathspec-file-nul', to, '--'], {
    input: nulSeparated(changes.map((change) => `:(literal)${change.rawPath}`)),
  });
}
