import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { displayPath, onDisk } from './gitProcess.js';
import type { Repository } from './repository.js';
import { asOnDisk, restorePaths } from './restore.js';
import { pointRef, takeSnapshot, type Snapshot } from './snapshots.js';
import { changedPaths, type TreeEntryChange } from './treeDiff.js';

/**
 * Moving the work tree from the tree codeloops last left to another snapshot, and
 * only the paths that differ between the two: what rollback, its undo and the undo
 * of a rejected hunk all do, guarded the same way.
 *
 * - the paths to touch are those that differ between `from` and `to`; whatever else
 *   the user has (untracked, ignored, edited elsewhere) is not looked at;
 * - a path the user changed since `from`, and that the move would overwrite, is a
 *   conflict: nothing changes unless `force`;
 * - what stands in the way and is in no snapshot is never removed, not even by force;
 * - the current tree is snapshotted first, so every move can be undone.
 */

export interface MoveLists {
  restored: string[];
  /** Of `restored`, the files the tree did not have. */
  added: string[];
  removed: string[];
  skipped: string[];
  conflicts: string[];
  overwritten: string[];
  /** Paths in the way that no snapshot holds (ignored files, folders): a move never removes them. */
  blocked: string[];
}

export type Move = { kind: 'moved' | 'nothing' | 'conflict' | 'preview'; lists: MoveLists };

export interface MoveRequest {
  /** The tree codeloops last left. */
  from: Snapshot;
  to: Snapshot;
  force: boolean | readonly string[];
  /** Where the current tree is kept before anything is written. */
  saveCurrentAs: string;
  /** Refs pointed at the tree after the move. */
  afterRefs: string[];
  message: string;
  dryRun: boolean;
}

export async function moveTree(repository: Repository, request: MoveRequest): Promise<Move> {
  const current = await takeSnapshot(repository, `${request.message} (the tree before)`);
  const [ownPaths, userChanged, toTarget] = await Promise.all([
    changedPaths(repository, request.from.tree, request.to.tree),
    changedPaths(repository, request.from.tree, current.tree),
    changedPaths(repository, current.tree, request.to.tree),
  ]);
  const own = new Set(ownPaths.map((change) => change.rawPath));
  const byUser = new Set(userChanged.map((change) => change.rawPath));
  // Only paths codeloops moved and that are not already where the move would put them.
  const pending: TreeEntryChange[] = toTarget.filter((change) => own.has(change.rawPath));
  // What the move will do on disk: a file the target kept off disk (a sparse checkout's) is removed, not written.
  const onTargetDisk = await asOnDisk(repository, request.to.commit, pending);
  const conflicts = pending.filter((change) => byUser.has(change.rawPath) && !change.isGitLink).map((change) => change.path);
  const { blocked, inTheWay } = obstacles(repository.root, onTargetDisk, own, byUser);
  conflicts.push(...inTheWay.filter((file) => !conflicts.includes(file)));
  const lists: MoveLists = { restored: [], added: [], removed: [], skipped: [], conflicts: [...new Set([...conflicts, ...blocked])], overwritten: [], blocked };
  if (pending.length === 0) return { kind: 'nothing', lists };
  // What is in the way and in no snapshot could never come back: not even --force overwrites it.
  const forced = (file: string) => request.force === true || (Array.isArray(request.force) && request.force.includes(file));
  if (blocked.length > 0 || conflicts.some((file) => !forced(file))) return { kind: 'conflict', lists };
  if (request.dryRun) {
    const touched = onTargetDisk.filter((change) => !change.isGitLink);
    return {
      kind: 'preview',
      lists: {
        ...lists,
        restored: touched.filter((change) => change.presentInTarget).map((change) => change.path),
        added: touched.filter((change) => change.presentInTarget && !change.presentInSource).map((change) => change.path),
        removed: touched.filter((change) => !change.presentInTarget).map((change) => change.path),
        skipped: pending.filter((change) => change.isGitLink).map((change) => change.path),
        overwritten: conflicts,
      },
    };
  }

  // Saved before the first file is written: a crash half-way still leaves the way back.
  await pointRef(repository, request.saveCurrentAs, current.commit, `${request.message} (the tree before)`);
  const restored = await restorePaths(repository, request.to.commit, pending);
  await takeSnapshot(repository, request.message, request.afterRefs);
  return {
    kind: 'moved',
    lists: { ...lists, restored: restored.restored, added: restored.added, removed: restored.removed, skipped: restored.skipped, overwritten: conflicts },
  };
}

/**
 * What stands where a file is to be written and is not in the current snapshot, so
 * that neither this move nor its undo could bring it back: a file there that git
 * ignores, a folder there (with whatever it holds), a file where a folder must be
 * that codeloops did not put there.
 */
function obstacles(
  root: string,
  pending: readonly TreeEntryChange[],
  own: ReadonlySet<string>,
  byUser: ReadonlySet<string>,
): { blocked: string[]; inTheWay: string[] } {
  const removals = new Set(pending.filter((change) => !change.presentInTarget).map((change) => change.rawPath));
  const blocked = new Set<string>();
  const inTheWay = new Set<string>();
  for (const change of pending) {
    if (!change.presentInTarget || change.isGitLink) continue;
    const stat = statOf(root, change.rawPath);
    // A folder the pending removals empty goes with them; anything else in it would be lost.
    if (stat?.isDirectory() && !holdsOnly(root, change.rawPath, removals)) blocked.add(`${change.path}/`);
    // A file no snapshot has (git ignores it now) is in the way, unless it already is what would be written.
    else if (stat && !stat.isDirectory() && !change.presentInSource && !holdsObject(root, change.rawPath, stat, change.targetObject)) blocked.add(change.path);
    const parts = change.rawPath.split('/');
    for (let depth = 1; depth < parts.length; depth++) {
      const prefix = parts.slice(0, depth).join('/');
      const parent = statOf(root, prefix);
      if (!parent) break;
      if (!parent.isDirectory()) {
        // A file where a folder must be: codeloops' own goes; the user's is a conflict; an ignored one is kept.
        if (byUser.has(prefix)) inTheWay.add(displayPath(prefix));
        else if (!own.has(prefix)) blocked.add(displayPath(prefix));
        break;
      }
    }
  }
  return { blocked: [...blocked], inTheWay: [...inTheWay] };
}

/** Whether everything under a folder on disk is among these paths (nested repositories never are). */
function holdsOnly(root: string, rawFolder: string, paths: ReadonlySet<string>): boolean {
  let entries: fs.Dirent<Buffer>[];
  try {
    entries = fs.readdirSync(onDisk(root, rawFolder), { encoding: 'buffer', withFileTypes: true });
  } catch {
    return false;
  }
  return entries.every((entry) => {
    const child = `${rawFolder}/${entry.name.toString('latin1')}`;
    if (entry.name.toString('latin1') === '.git') return false;
    return entry.isDirectory() ? holdsOnly(root, child, paths) : paths.has(child);
  });
}

function statOf(root: string, rawPath: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(onDisk(root, rawPath));
  } catch {
    return undefined; // absent, or under a file (ENOTDIR)
  }
}

/** Whether a file on disk has exactly the content of a git blob (git's own object id). */
function holdsObject(root: string, rawPath: string, stat: fs.Stats, objectId: string): boolean {
  if (!stat.isFile() || !/^[0-9a-f]{40}$/.test(objectId)) return false;
  const bytes = fs.readFileSync(onDisk(root, rawPath));
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex') === objectId;
}

/** Why a move changed nothing, in words. */
export function conflictMessage(lists: MoveLists, action: string): string {
  const changed = lists.conflicts.filter((file) => !lists.blocked.includes(file));
  const parts: string[] = [];
  if (changed.length > 0) {
    parts.push(
      `${changed.length === 1 ? 'this file was' : `these ${changed.length} files were`} changed after codeloops last touched the tree, ` +
        `and to ${action} would overwrite ${changed.length === 1 ? 'it' : 'them'}: ${changed.join(', ')}. ` +
        `Commit or move those changes first, or overwrite them (they stay recoverable by undoing the rollback)`,
    );
  }
  if (lists.blocked.length > 0) {
    parts.push(
      `${lists.blocked.join(', ')} ${lists.blocked.length === 1 ? 'stands' : 'stand'} where files must be written and ${lists.blocked.length === 1 ? 'is' : 'are'} in no snapshot ` +
        `(ignored by git, or a folder now): they could not be brought back, so they are never overwritten. Move them away first`,
    );
  }
  return `Changed nothing: ${parts.join('. Also, ')}.`;
}

/** What a move did (or, with `would`, would do), in words; `written` names what writing a file is (a rollback restores, an apply writes). */
export function describeMove(lists: MoveLists, would = '', written: [past: string, present: string] = ['restored', 'restore']): string {
  const verb = (past: string, present: string) => (would ? `${would}${present}` : past);
  const parts: string[] = [];
  if (lists.restored.length > 0) parts.push(`${verb(...written)} ${listPaths(lists.restored)}`);
  if (lists.removed.length > 0) parts.push(`${verb('removed', 'remove')} ${listPaths(lists.removed)}`);
  if (lists.overwritten.length > 0) parts.push(`${verb('overwrote', 'overwrite')} your changes to ${listPaths(lists.overwritten)}`);
  if (lists.skipped.length > 0) parts.push(`${verb('left', 'leave')} the nested repositories ${listPaths(lists.skipped)} alone`);
  return parts.join('; ') || 'nothing to write';
}

export function listPaths(paths: readonly string[]): string {
  return paths.length <= 6 ? paths.join(', ') : `${paths.slice(0, 6).join(', ')} and ${paths.length - 6} more`;
}
