import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gitClient } from './gitProcess.js';
import type { Repository } from './repository.js';
import { changedPaths, type TreeEntryChange } from './treeDiff.js';

export interface RestoreResult {
  /** Paths written back with the target's content. */
  restored: string[];
  /** Paths removed because the target does not have them. */
  removed: string[];
  /** Nested repositories and submodules left alone. */
  skipped: string[];
}

/** Paths per checkout-index call: far below any argv limit. */
const PATHS_PER_CALL = 500;

/**
 * Puts the paths that differ between `current` and `target` back to how they are in
 * `target`, and touches nothing else: no `reset --hard`, no `clean`, no index or
 * HEAD change. Files are written through a temporary index and `checkout-index`.
 */
export async function restoreChangedPaths(repository: Repository, current: string, target: string): Promise<RestoreResult> {
  return restorePaths(repository, target, await changedPaths(repository, current, target));
}

export async function restorePaths(repository: Repository, target: string, changes: readonly TreeEntryChange[]): Promise<RestoreResult> {
  const result: RestoreResult = { restored: [], removed: [], skipped: [] };
  const toWrite: string[] = [];
  const toRemove: string[] = [];
  for (const change of changes) {
    assertInside(repository.root, change.path);
    if (change.isGitLink) result.skipped.push(change.path);
    else if (change.presentInTarget) toWrite.push(change.path);
    else toRemove.push(change.path);
  }

  // Removals first: a file the target has may sit where a folder was created since.
  const parents = new Set<string>();
  for (const relative of toRemove) {
    const absolute = path.join(repository.root, relative);
    const stat = fs.lstatSync(absolute, { throwIfNoEntry: false });
    if (stat && !stat.isDirectory()) fs.rmSync(absolute, { force: true });
    result.removed.push(relative);
    parents.add(path.dirname(relative));
  }
  // A folder the target does not have and that our removals emptied goes too.
  for (const relative of toWrite) clearBlockingPath(repository.root, relative);
  const targetDirectories = await directoriesIn(repository, target, [...parents]);
  for (const parent of [...parents].sort((a, b) => b.length - a.length)) {
    removeEmptyDirectories(repository.root, parent, targetDirectories);
  }

  if (toWrite.length > 0) {
    const temporaryIndex = path.join(repository.gitDir, `codeloops-restore-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      const git = gitClient(repository.root, { GIT_INDEX_FILE: temporaryIndex });
      await git.raw(['read-tree', target]);
      for (let i = 0; i < toWrite.length; i += PATHS_PER_CALL) {
        await git.raw(['checkout-index', '--force', '--', ...toWrite.slice(i, i + PATHS_PER_CALL)]);
      }
    } finally {
      fs.rmSync(temporaryIndex, { force: true });
      fs.rmSync(`${temporaryIndex}.lock`, { force: true });
    }
    result.restored.push(...toWrite);
  }
  return result;
}

/** A path from git output must stay inside the work tree; anything else is a bug or an attack. */
function assertInside(root: string, relative: string): void {
  const absolute = path.resolve(root, relative);
  if (absolute !== root && !absolute.startsWith(root + path.sep)) {
    throw new Error(`refusing to touch ${relative}: it is outside ${root}`);
  }
}

/** checkout-index cannot write `a/b` where `a` is now a file; a file in the way of a restored path is one the target replaces. */
function clearBlockingPath(root: string, relative: string): void {
  const parts = relative.split('/');
  for (let depth = 1; depth < parts.length; depth++) {
    const prefix = path.join(root, ...parts.slice(0, depth));
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
  const output = await gitClient(repository.root).raw(['ls-tree', '-d', '-r', '-z', '--name-only', target, '--', ...wanted]);
  return new Set(output.split('\0').filter(Boolean));
}

function removeEmptyDirectories(root: string, relativeFolder: string, keep: ReadonlySet<string>): void {
  for (let current = relativeFolder; current !== '.' && current !== ''; current = path.posix.dirname(current)) {
    if (keep.has(current)) return;
    const absolute = path.join(root, current);
    try {
      fs.rmdirSync(absolute);
    } catch {
      return; // not empty, or already gone
    }
  }
}
