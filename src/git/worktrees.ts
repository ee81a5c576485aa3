import fs from 'node:fs';
import path from 'node:path';
import { gitBytes } from './gitProcess.js';
import type { Repository } from './repository.js';

/**
 * Linked git worktrees (`git worktree`): a second working tree of the same
 * repository, sharing its objects and refs (snapshots taken in one are seen from
 * all), with its own HEAD and index. Candidates run in them, detached at a snapshot
 * of the user's tree: the user's working tree, index, HEAD and branches are never
 * touched, and no branch is created.
 */

export interface WorktreeEntry {
  /** The worktree's top folder. */
  path: string;
  /** The commit checked out, or null (an unborn branch). */
  head: string | null;
  /** The folder is gone (deleted by hand): `git worktree prune` forgets it. */
  prunable: boolean;
}

/**
 * The worktrees being added in this process, by the repository's shared git folder:
 * `git worktree add` writes that folder's administrative files, so two at once (the
 * candidates of a group, an eval's runs, their isolated checks) are made one at a time.
 */
const adding = new Map<string, Promise<void>>();

/** A hooks folder with no hook in it: git looks for `<folder>/post-checkout` and finds nothing. */
const NO_HOOKS = process.platform === 'win32' ? 'NUL' : '/dev/null';

/**
 * Checks `commit` out, detached, into a new worktree at `worktreePath` (a folder that
 * must not exist yet); or, given `{ branch }`, that existing branch (a queue's task works on its own).
 * `hooks: false` runs none of the repository's hooks (`post-checkout`): they are files in
 * its git folder, which an agent working in the repository can write, and one could
 * edit what a worktree that judges the agent checks out.
 */
export async function addWorktree(
  repository: Repository,
  worktreePath: string,
  commit: string | { branch: string },
  options: { hooks?: boolean } = {},
): Promise<void> {
  // The attributes file is in the shared git folder (`<common>/info/attributes`), whichever worktree opened it.
  const shared = path.dirname(path.dirname(repository.attributesFile));
  const add = async () => {
    fs.mkdirSync(path.dirname(worktreePath), { recursive: true, mode: 0o700 });
    const what = typeof commit === 'string' ? ['--detach', worktreePath, commit] : [worktreePath, commit.branch];
    const noHooks = options.hooks === false ? ['-c', `core.hooksPath=${NO_HOOKS}`] : [];
    await gitBytes(repository.root, [...noHooks, 'worktree', 'add', '--quiet', ...what]);
  };
  const added = (adding.get(shared) ?? Promise.resolve()).then(add);
  const settled = added.catch(() => undefined);
  adding.set(shared, settled);
  try {
    await added;
  } finally {
    if (adding.get(shared) === settled) adding.delete(shared);
  }
}

/** Every worktree of the repository, the main one first. */
export async function listWorktrees(repository: Repository): Promise<WorktreeEntry[]> {
  const output = (await gitBytes(repository.root, ['worktree', 'list', '--porcelain', '-z'])).toString('utf8');
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | undefined;
  for (const field of output.split('\0')) {
    if (field === '') {
      if (current) entries.push(current);
      current = undefined;
    } else if (field.startsWith('worktree ')) current = { path: field.slice('worktree '.length), head: null, prunable: false };
    else if (current && field.startsWith('HEAD ')) current.head = field.slice('HEAD '.length);
    else if (current && field.startsWith('prunable')) current.prunable = true;
  }
  if (current) entries.push(current);
  return entries;
}

/**
 * Removes a worktree: its folder (with whatever is in it: ignored files, installed
 * dependencies) and git's record of it. The caller has made sure nothing in it is
 * worth keeping. A folder already gone is only forgotten.
 */
export async function removeWorktree(repository: Repository, worktreePath: string): Promise<void> {
  if (fs.existsSync(worktreePath)) {
    try {
      await gitBytes(repository.root, ['worktree', 'remove', '--force', '--force', worktreePath]);
    } catch (error) {
      // Not a worktree git knows (its record was pruned): the folder is ours, under our own folder.
      if (fs.existsSync(path.join(worktreePath, '.git'))) fs.rmSync(worktreePath, { recursive: true, force: true });
      else throw error;
    }
  }
  await pruneWorktrees(repository);
}

/** Forgets worktrees whose folders are gone. */
export async function pruneWorktrees(repository: Repository): Promise<void> {
  await gitBytes(repository.root, ['worktree', 'prune']);
}

/** Removes the empty folders from `folder` up to (not including) `stopAt`. */
export function removeEmptyFolders(folder: string, stopAt: string): void {
  for (let current = folder; current.startsWith(stopAt + path.sep) && current !== stopAt; current = path.dirname(current)) {
    try {
      fs.rmdirSync(current);
    } catch {
      return; // not empty, or gone
    }
  }
}
