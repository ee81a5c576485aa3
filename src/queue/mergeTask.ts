import fs from 'node:fs';
import { branchCommit, commitTree, isAncestor, moveBranch, userIdentity, type GitIdentity } from '../git/branches.js';
import { displayPath, GitCommandError, gitBytes, gitEach, gitText, nulSeparated, onDisk } from '../git/gitProcess.js';
import { headCommit, type Repository } from '../git/repository.js';
import { restorePaths } from '../git/restore.js';
import { removeTemporaryIndex, temporaryIndexPath } from '../git/temporaryIndex.js';
import { changedPaths, type TreeEntryChange } from '../git/treeDiff.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { MergeResult, MergeStatus, QueueTask } from '../sessionFormat/queueRecords.js';
import { QUEUE_AUTHOR_FALLBACK } from './runQueue.js';

/**
 * Merging a finished task's branch into the branch the user is on (`queue merge`, the
 * Queue view's Merge), and undoing that merge. git's own `merge` is not used: it wants
 * an index with nothing staged and may leave conflict markers in the user's files.
 * Instead the merge is worked out first, in git's object store only
 * (`merge-tree --write-tree`), and refused with the files named when git cannot merge
 * cleanly; then the merge commit is made, only the files the merge changes are written,
 * in the work tree and the index, and the user's branch moved to it from where it was
 * (compare-and-swap): all of it or, when a step fails, none (`moveAndWrite`). Anything of
 * the user's where the merge writes (a change, staged or not, an untracked or ignored
 * file, a folder of theirs where a file goes, a file or link where a folder goes) refuses
 * the whole merge: their other work is never looked at, let alone touched. Undoing moves
 * the branch back the same way.
 */

/** Merges `task`'s branch into the current branch; see above. */
export async function mergeTask(repository: Repository, task: QueueTask, author: GitIdentity | null): Promise<MergeResult> {
  const taskCommit = await mergeableCommit(repository, task);
  const { branch, head } = await currentBranch(repository);
  const result = (from: string, to: string, files: string[], status: MergeStatus): MergeResult => ({ status, task: task.id, branch, from, to, files });
  if (await isAncestor(repository, taskCommit, head)) return result(head, head, [], 'already_merged');
  const tree = await mergedTree(repository, head, taskCommit);
  const identity = author ?? (await userIdentity(repository)) ?? QUEUE_AUTHOR_FALLBACK;
  // Checked before the commit is made, so that a refusal leaves not even an unreferenced object behind that matters.
  const changes = await guardedChanges(repository, head, tree);
  const merge = await commitTree(repository, tree, [head, taskCommit], `Merge ${task.branch} (codeloops queue task ${task.id})`, identity);
  await moveAndWrite(repository, branch, head, merge, changes, `codeloops: merge ${task.branch}`);
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
  await moveAndWrite(repository, branch, head, before, changes, `codeloops: undo the merge of ${task.branch}`);
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

/**
 * The paths that differ from `from` to `to`; `tree_changed` naming whatever of the
 * user's is at one of them, under one (a folder of theirs where the merge writes a
 * file), or above one (a file or link of theirs where the merge needs a folder):
 * changes git sees, untracked and ignored files, and what git is told not to look at.
 */
async function guardedChanges(repository: Repository, from: string, to: string): Promise<TreeEntryChange[]> {
  const changes = await changedPaths(repository, from, to);
  const shown = await statusInTheWay(repository, changes);
  // What is on disk in the way is named by the user's files in it, when git status shows them.
  const unshown = onDiskInTheWay(repository.root, changes).filter((found) => !shown.some((raw) => raw === found || raw.startsWith(`${found}/`)));
  const inTheWay = new Set([...shown, ...unshown, ...(await unwatched(repository, changes))]);
  if (inTheWay.size > 0) {
    const files = [...inTheWay].sort().map(displayPath);
    throw new CodeloopsError(
      'tree_changed',
      `You have changes in files the merge would write, or files in its way: ${files.join(', ')}. Nothing was changed.`,
      {
        changed: files,
        merge: true,
      },
    );
  }
  return changes;
}

/** The user's paths git status shows (staged, unstaged, untracked, ignored) at, under or above a changed path. */
async function statusInTheWay(repository: Repository, changes: readonly TreeEntryChange[]): Promise<string[]> {
  const changed = new Set(changes.map((change) => change.rawPath));
  const above = new Set(changes.flatMap((change) => ancestorsOf(change.rawPath)));
  const status = await gitBytes(repository.root, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames']);
  // `XY path\0` per entry; a folder (an ignored one, a nested repository) ends with `/`.
  return status
    .toString('latin1')
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3))
    .filter((raw) => {
      const entry = raw.replace(/\/$/, '');
      return changed.has(entry) || above.has(entry) || ancestorsOf(entry).some((folder) => changed.has(folder));
    });
}

/**
 * What is on disk where the merge writes and `from` has nothing (whatever git status
 * says of it: a name that differs only in case on a file system that ignores case), and
 * anything but a real folder above a changed path, unless the merge removes it itself:
 * a file, or a folder that holds nothing but files the merge removes (`from`'s folder
 * that the merge makes a file).
 */
function onDiskInTheWay(root: string, changes: readonly TreeEntryChange[]): string[] {
  const removed = new Set(changes.filter((change) => change.presentInSource && !change.presentInTarget).map((change) => change.rawPath));
  const found = new Set<string>();
  for (const change of changes) {
    const blocking = ancestorsOf(change.rawPath).find((folder) => {
      const stat = lstatOf(root, folder);
      return stat !== undefined && !stat.isDirectory();
    });
    if (blocking !== undefined && !removed.has(blocking)) found.add(blocking);
    else if (blocking === undefined && !change.presentInSource && lstatOf(root, change.rawPath) && !holdsOnly(root, change.rawPath, removed)) {
      found.add(change.rawPath);
    }
  }
  return [...found];
}

/** Whether the folder at `rawPath` holds files, all of them in `removed`, and nothing else (not even an empty folder). */
function holdsOnly(root: string, rawPath: string, removed: ReadonlySet<string>): boolean {
  if (!lstatOf(root, rawPath)?.isDirectory()) return false;
  const entries = fs.readdirSync(onDisk(root, rawPath), { withFileTypes: true, encoding: 'buffer' });
  return (
    entries.length > 0 &&
    entries.every((entry) => {
      const inside = `${rawPath}/${entry.name.toString('latin1')}`;
      return entry.isDirectory() ? holdsOnly(root, inside, removed) : removed.has(inside);
    })
  );
}

/** What is at a path, or undefined when nothing is (a file where a folder of the path would be included). */
function lstatOf(root: string, rawPath: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(onDisk(root, rawPath));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** Changed paths git is told not to look at (assume-unchanged, skip-worktree): whatever the user did to them, status would not say. */
async function unwatched(repository: Repository, changes: readonly TreeEntryChange[]): Promise<string[]> {
  const changed = new Set(changes.filter((change) => change.presentInSource).map((change) => change.rawPath));
  if (changed.size === 0) return [];
  // `-v`: a lower-case tag is assume-unchanged, `S` skip-worktree.
  const listed = (await gitBytes(repository.root, ['ls-files', '-v', '-z'])).toString('latin1').split('\0');
  return listed.filter((entry) => /^[a-zS] /.test(entry) && changed.has(entry.slice(2))).map((entry) => entry.slice(2));
}

/** `a/b/c` → `a`, `a/b`. */
function ancestorsOf(rawPath: string): string[] {
  const parts = rawPath.split('/');
  return parts.slice(1).map((_part, index) => parts.slice(0, index + 1).join('/'));
}

/**
 * Moves `branch` from `from` to `to` and writes the changed paths to the work tree and
 * the index, all or nothing. The index is taken as git takes it (`index.lock`; refused,
 * with nothing changed, when another git holds it) and its next state made in the lock;
 * then the files are written, the new index put in place, and last the branch moved (only
 * from where it was). Whatever fails on the way puts the index and the files back. A run
 * killed on the way leaves the merge's files written (and after the index, staged) with
 * the branch where it was: never a branch moved with an index that would take the
 * merge's files out again at the next commit.
 */
async function moveAndWrite(
  repository: Repository,
  branch: string,
  from: string,
  to: string,
  changes: readonly TreeEntryChange[],
  message: string,
): Promise<void> {
  if (changes.length === 0) return moveBranch(repository, branch, to, from, message);
  const lock = tryIndexLock(repository);
  if (lock === null) {
    throw new CodeloopsError(
      'merge_refused',
      `Another git process is changing the index (${repository.indexFile}.lock exists): ${branch} was not moved and nothing was changed. If no git command is running, a crashed one left that file behind: remove it and try again.`,
      { reason: 'index_locked', lock_file: `${repository.indexFile}.lock` },
    );
  }
  const before = temporaryIndexPath(repository, 'before-merge');
  const done = { files: false, index: false };
  try {
    await writeNextIndex(repository, lock, to, changes);
    done.files = true;
    await restorePaths(repository, to, changes);
    if (fs.existsSync(repository.indexFile)) fs.copyFileSync(repository.indexFile, before);
    fs.renameSync(lock, repository.indexFile);
    done.index = true;
    await moveBranch(repository, branch, to, from, message);
  } catch (error) {
    const failures = await putBack(repository, { lock, before, from, to }, done);
    if (failures.length === 0) throw error;
    throw new CodeloopsError(
      'git_failed',
      `${(error as Error).message}; and putting things back failed too: ${failures.join('; ')}. ${branch} did not move.`,
      {},
    );
  } finally {
    removeTemporaryIndex(before);
  }
}

/** Undoes what `moveAndWrite` did before a step failed: the index as it was (`before`), the files as `from` has them. What could not be put back is said. */
async function putBack(
  repository: Repository,
  saved: { lock: string; before: string; from: string; to: string },
  done: { files: boolean; index: boolean },
): Promise<string[]> {
  const failures: string[] = [];
  if (!done.index) fs.rmSync(saved.lock, { force: true });
  else {
    try {
      const lock = tryIndexLock(repository);
      if (lock === null) throw new Error('another git process took the index meanwhile');
      if (fs.existsSync(saved.before)) fs.renameSync(saved.before, lock);
      else fs.rmSync(lock);
      if (fs.existsSync(lock)) fs.renameSync(lock, repository.indexFile);
      else fs.rmSync(repository.indexFile, { force: true });
    } catch (failure) {
      failures.push(`your index has the merge's files staged (${(failure as Error).message})`);
    }
  }
  if (done.files) {
    await changedPaths(repository, saved.to, saved.from)
      .then((back) => restorePaths(repository, saved.from, back))
      .catch((failure: unknown) => failures.push(`the merge's files are still written (${(failure as Error).message})`));
  }
  return failures;
}

/** `<index>.lock`, made as git makes it (only where none is): no git changes the index while it is there. Null when another has it. */
function tryIndexLock(repository: Repository): string | null {
  const lock = `${repository.indexFile}.lock`;
  try {
    fs.closeSync(fs.openSync(lock, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  return lock;
}

/** The index as it is with the changed paths at `to` (whatever else is staged stays staged), written into the lock. */
async function writeNextIndex(repository: Repository, lock: string, to: string, changes: readonly TreeEntryChange[]): Promise<void> {
  const next = temporaryIndexPath(repository, 'merge');
  try {
    if (fs.existsSync(repository.indexFile)) fs.copyFileSync(repository.indexFile, next);
    await gitBytes(repository.root, ['reset', '-q', '--pathspec-from-file=-', '--pathspec-file-nul', to, '--'], {
      variables: { GIT_INDEX_FILE: next },
      input: nulSeparated(changes.map((change) => `:(literal)${change.rawPath}`)),
    });
    fs.renameSync(next, lock);
  } finally {
    removeTemporaryIndex(next);
  }
}
