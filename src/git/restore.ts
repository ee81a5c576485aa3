import fs from 'node:fs';
import path from 'node:path';
import { gitBytes, nulSeparated, onDisk } from './gitProcess.js';
import type { Repository } from './repository.js';
import { changedPaths, type TreeEntryChange } from './treeDiff.js';
import { exactFilesOf, writeExactFiles } from './exactBytes.js';
import { pathsNotOnDisk } from './notOnDisk.js';
import { removeTemporaryIndex, temporaryIndexPath } from './temporaryIndex.js';

export interface RestoreResult {
  /** Paths written back with the target's content. */
  restored: string[];
  /** Of `restored`, the paths the tree did not have. */
  added: string[];
  /** Paths removed because the target does not have them. */
  removed: string[];
  /** Nested repositories and submodules left alone. */
  skipped: string[];
}

/**
 * Puts the paths that differ between `current` and `target` back to how they are in
 * `target`, and touches nothing else: no `reset --hard`, no `clean`, no index or
 * HEAD change. Files are written through a temporary index and `checkout-index`.
 */
export async function restoreChangedPaths(repository: Repository, current: string, target: string): Promise<RestoreResult> {
  return restorePaths(repository, target, await changedPaths(repository, current, target));
}

export async function restorePaths(repository: Repository, target: string, changes: readonly TreeEntryChange[]): Promise<RestoreResult> {
  const result: RestoreResult = { restored: [], added: [], removed: [], skipped: [] };
  const toWrite: TreeEntryChange[] = [];
  const toRemove: TreeEntryChange[] = [];
  const asOnTargetDisk = await asOnDisk(repository, target, changes);
  for (const change of asOnTargetDisk) {
    assertInside(change.rawPath);
    if (change.isGitLink) result.skipped.push(change.path);
    else if (change.presentInTarget) toWrite.push(change);
    else toRemove.push(change);
  }
  const offDisk = new Set(asOnTargetDisk.filter((change, index) => changes[index]!.presentInTarget && !change.presentInTarget).map((change) => change.rawPath));

  // Removals first: a file the target has may sit where a folder was created since.
  result.removed.push(...(await removeFiles(repository, target, toRemove, offDisk)));
  for (const change of toWrite) clearBlockingPath(repository.root, change.rawPath);

  // The bytes that were on disk, where the snapshot recorded them (git would convert line endings); the rest as git writes them.
  const exact =
    toWrite.length > 0
      ? await exactFilesOf(
          repository,
          target,
          toWrite.map((change) => change.rawPath),
        )
      : undefined;
  const byGit = toWrite.filter((change) => !exact?.has(change.rawPath));
  if (byGit.length > 0) {
    const temporaryIndex = temporaryIndexPath(repository, 'restore');
    try {
      const variables = { GIT_INDEX_FILE: temporaryIndex };
      await gitBytes(repository.root, ['read-tree', target], { variables });
      await gitBytes(repository.root, ['checkout-index', '--force', '-z', '--stdin'], {
        variables,
        input: nulSeparated(byGit.map((change) => change.rawPath)),
      });
    } finally {
      removeTemporaryIndex(temporaryIndex);
    }
  }
  const asRecorded = toWrite.flatMap((change) => {
    const file = exact?.get(change.rawPath);
    return file ? [{ target: onDisk(repository.root, change.rawPath), file }] : [];
  });
  await writeExactFiles(repository, asRecorded);
  result.restored.push(...toWrite.map((change) => change.path));
  result.added.push(...toWrite.filter((change) => !change.presentInSource).map((change) => change.path));
  return result;
}

/**
 * The changes as they are on disk in the target: a file its snapshot recorded as not on
 * disk (outside a sparse checkout's cone) is removed, not written, whatever the tree
 * holds for it. For a target that is not a snapshot, the changes as they are.
 */
export async function asOnDisk(repository: Repository, target: string, changes: readonly TreeEntryChange[]): Promise<TreeEntryChange[]> {
  if (!changes.some((change) => change.presentInTarget)) return [...changes];
  const absent = await pathsNotOnDisk(repository, target);
  return changes.map((change) => (change.presentInTarget && absent.has(change.rawPath) ? { ...change, presentInTarget: false } : change));
}

/**
 * Removes the files, then the folders they leave empty: those the target does not have,
 * and, above a file the target kept off disk, any (a sparse checkout has no folder there).
 */
async function removeFiles(repository: Repository, target: string, toRemove: readonly TreeEntryChange[], offDisk: ReadonlySet<string>): Promise<string[]> {
  const parents = new Set<string>();
  for (const change of toRemove) {
    const absolute = onDisk(repository.root, change.rawPath);
    const stat = fs.lstatSync(absolute, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) fs.rmSync(absolute, { force: true });
    parents.add(path.posix.dirname(change.rawPath));
  }
  const offDiskParents = new Set([...offDisk].map((rawPath) => path.posix.dirname(rawPath)));
  const targetDirectories = await directoriesIn(repository, target, [...parents]);
  for (const parent of [...parents].sort((a, b) => b.length - a.length)) {
    removeEmptyDirectories(repository.root, parent, offDiskParents.has(parent) ? new Set() : targetDirectories);
  }
  return toRemove.map((change) => change.path);
}

/** A path from git output must stay inside the work tree; anything else is a bug or an attack. */
function assertInside(rawPath: string): void {
  if (rawPath === '' || rawPath.startsWith('/') || rawPath.split('/').some((part) => part === '..' || part === '.git')) {
    throw new Error(`refusing to touch ${JSON.stringify(rawPath)}: it is not a plain path inside the work tree`);
  }
}

/** checkout-index cannot write `a/b` where `a` is now a file: a file in the way of a restored path goes. */
function clearBlockingPath(root: string, rawPath: string): void {
  const parts = rawPath.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const prefix = onDisk(root, parts.slice(0, depth).join('/'));
    const stat = fs.lstatSync(prefix, { throwIfNoEntry: false });
    if (!stat) return;
    if (!stat.isDirectory()) {
      fs.rmSync(prefix, { force: true });
      return;
    }
  }
}

/** Which of these folders (and their ancestors) exist in the target tree. */
async function directoriesIn(repository: Repository, target: string, folders: string[]): Promise<Set<string>> {
  const wanted = new Set<string>();
  for (const folder of folders) {
    for (let current = folder; current !== '.' && current !== ''; current = path.posix.dirname(current)) wanted.add(current);
  }
  if (wanted.size === 0) return new Set();
  const output = await gitBytes(repository.root, ['ls-tree', '-d', '-r', '-z', '--name-only', target]);
  return new Set(
    output
      .toString('latin1')
      .split('\0')
      .filter((entry) => wanted.has(entry)),
  );
}

function removeEmptyDirectories(root: string, rawFolder: string, keep: ReadonlySet<string>): void {
  for (let current = rawFolder; current !== '.' && current !== ''; current = path.posix.dirname(current)) {
    if (keep.has(current)) return;
    try {
      fs.rmdirSync(onDisk(root, current));
    } catch {
      return; // not empty, or already gone
    }
  }
}
