import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { displayPath } from '../git/gitProcess.js';
import { openRepository, type Repository } from '../git/repository.js';
import { restorePaths } from '../git/restore.js';
import {
  lastTree,
  listSessionRefs,
  pointRef,
  readSnapshot,
  rollbackRef,
  sessionHeadRef,
  snapshotIterations,
  snapshotRef,
  takeSnapshot,
  type Snapshot,
} from '../git/snapshots.js';
import { changedPaths, type TreeEntryChange } from '../git/treeDiff.js';
import { acquireRepositoryLock } from '../loop/repositoryLock.js';
import type { RollbackOutcome } from '../sessionFormat/rollbackOutcome.js';
import { stampEvent, type RunEventInput } from '../sessionFormat/runEvents.js';
import { SidecarRecorder } from '../sessionWriter/sidecarRecorder.js';
import { IterationNotFoundError } from '../sessions/sessionStore.js';

/**
 * Rollback and its undo: puts the paths a loop changed back to how they were before
 * an iteration, and only those. Both directions are the same move, "from the tree
 * codeloops last left to a target tree", guarded the same way:
 *
 * - the paths to touch are those that differ between the session's last tree (its
 *   `head` ref) and the target; whatever else the user has (untracked, ignored, edited
 *   elsewhere) is not looked at;
 * - a path the user changed since that last tree, and that the move would overwrite,
 *   is a conflict: nothing changes unless `force`;
 * - the current tree is snapshotted first, so every move can be undone.
 *
 * Never `reset --hard`, `clean` or `checkout` of a branch: HEAD, the index and the
 * stash stay as they are.
 */

export interface RollbackRequest {
  sessionId: string;
  /** The session's `working_dir`: the repository holding its snapshots. */
  workingDir: string;
  /** The session's sidecar folder, where the rollback is recorded. */
  sidecarDirectory: string;
  /** Overwrite conflicting paths: all of them (true), or only these (what a user was shown and agreed to). */
  force: boolean | readonly string[];
  /** Say what would happen, write nothing. */
  dryRun?: boolean;
}

/** Puts the tree back to how it was before `iteration` (default: the last iteration with snapshots). */
export async function rollBack(request: RollbackRequest & { iteration?: number }): Promise<RollbackOutcome> {
  const repository = await openRepository(request.workingDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const refs = await listSessionRefs(repository, request.sessionId);
    const iterations = snapshotIterations(refs, request.sessionId);
    const outcome = emptyOutcome(request.sessionId);
    if (iterations.length === 0) {
      return {
        ...outcome,
        result: 'snapshot_missing',
        iteration: request.iteration ?? null,
        message:
          `No snapshots of session ${request.sessionId} are in ${repository.root}: they were deleted, the repository was cloned afresh, ` +
          `or the session was recorded by a runner that does not take them. Nothing was changed.`,
      };
    }
    const iteration = request.iteration ?? iterations.at(-1)!;
    if (iteration < 1 || iteration > iterations.at(-1)!) {
      throw new IterationNotFoundError(
        `Session ${request.sessionId} has no iteration ${iteration} to roll back (its snapshots cover iterations ${describeRange(iterations)}).`,
      );
    }
    const target = await readSnapshot(repository, snapshotRef(request.sessionId, iteration, 'pre'));
    const last = await lastTree(repository, request.sessionId, refs, iterations);
    if (!target || !last) {
      return {
        ...outcome,
        result: 'snapshot_missing',
        iteration,
        message: `The snapshot of the tree before iteration ${iteration} of session ${request.sessionId} is gone from ${repository.root}. Nothing was changed.`,
      };
    }
    const rollback = nextRollbackNumber(refs, request.sessionId);
    const moved = await moveTree(repository, {
      from: last,
      to: target,
      force: request.force,
      saveCurrentAs: rollbackRef(request.sessionId, rollback, 'before'),
      afterRefs: [rollbackRef(request.sessionId, rollback, 'after'), sessionHeadRef(request.sessionId)],
      message: `codeloops ${request.sessionId} rollback ${rollback} to before iteration ${iteration}`,
      dryRun: Boolean(request.dryRun),
    });
    const base = { ...outcome, ...moved.lists, iteration };
    if (moved.kind === 'nothing') {
      return {
        ...base,
        result: 'nothing_to_roll_back',
        message: `The files session ${request.sessionId} changed are already as they were before iteration ${iteration}. Nothing was changed.`,
      };
    }
    if (moved.kind === 'conflict') return { ...base, result: 'conflict', message: conflictMessage(moved.lists, 'roll back') };
    if (moved.kind === 'preview') {
      return {
        ...base,
        result: 'rolled_back',
        dry_run: true,
        message: `Would roll session ${request.sessionId} back to before iteration ${iteration}: ${describeMove(moved.lists, 'would ')}. Nothing was changed (dry run).`,
      };
    }
    const warnings = record(request.sidecarDirectory, {
      type: 'rollback',
      rollback,
      to_iteration: iteration,
      restored: moved.lists.restored,
      removed: moved.lists.removed,
      overwritten: moved.lists.overwritten,
      before_ref: rollbackRef(request.sessionId, rollback, 'before'),
    });
    return {
      ...base,
      result: 'rolled_back',
      rollback,
      saved_ref: rollbackRef(request.sessionId, rollback, 'before'),
      warnings,
      message:
        `Rolled session ${request.sessionId} back to before iteration ${iteration}: ${describeMove(moved.lists)}. ` +
        `The tree as it was is kept, so this can be undone.`,
    };
  } finally {
    lock.release();
  }
}

/** Undoes the session's latest rollback, if the tree has not moved on since. */
export async function undoRollback(request: RollbackRequest): Promise<RollbackOutcome> {
  const repository = await openRepository(request.workingDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const refs = await listSessionRefs(repository, request.sessionId);
    const outcome = emptyOutcome(request.sessionId);
    const rollback = nextRollbackNumber(refs, request.sessionId) - 1;
    if (rollback === 0)
      return { ...outcome, result: 'nothing_to_roll_back', message: `Session ${request.sessionId} has no rollback to undo. Nothing was changed.` };
    if (refs.has(rollbackRef(request.sessionId, rollback, 'undone'))) {
      return {
        ...outcome,
        rollback,
        result: 'nothing_to_roll_back',
        message: `The last rollback of session ${request.sessionId} is already undone. Nothing was changed.`,
      };
    }
    const [before, after] = await Promise.all(
      ['before', 'after'].map((label) => readSnapshot(repository, rollbackRef(request.sessionId, rollback, label as 'before' | 'after'))),
    );
    if (!before || !after) {
      return {
        ...outcome,
        rollback,
        result: 'snapshot_missing',
        message: `The snapshots of rollback ${rollback} of session ${request.sessionId} are gone from ${repository.root}. Nothing was changed.`,
      };
    }
    const head = refs.get(sessionHeadRef(request.sessionId));
    if (head !== after.commit) {
      return {
        ...outcome,
        rollback,
        result: 'nothing_to_roll_back',
        message: `Session ${request.sessionId} has moved on since its rollback ${rollback} (it was resumed or rolled back again); roll back to an iteration instead. Nothing was changed.`,
      };
    }
    const moved = await moveTree(repository, {
      from: after,
      to: before,
      force: request.force,
      saveCurrentAs: rollbackRef(request.sessionId, rollback, 'replaced'),
      afterRefs: [rollbackRef(request.sessionId, rollback, 'undone'), sessionHeadRef(request.sessionId)],
      message: `codeloops ${request.sessionId} undo rollback ${rollback}`,
      dryRun: Boolean(request.dryRun),
    });
    const base = { ...outcome, ...moved.lists, rollback };
    if (moved.kind === 'nothing')
      return { ...base, result: 'nothing_to_roll_back', message: `The files of rollback ${rollback} are already as they were before it. Nothing was changed.` };
    if (moved.kind === 'conflict') return { ...base, result: 'conflict', message: conflictMessage(moved.lists, 'undo the rollback') };
    if (moved.kind === 'preview') {
      return {
        ...base,
        result: 'undone',
        dry_run: true,
        message: `Would undo rollback ${rollback} of session ${request.sessionId}: ${describeMove(moved.lists, 'would ')}. Nothing was changed (dry run).`,
      };
    }
    const warnings = record(request.sidecarDirectory, {
      type: 'rollback_undone',
      rollback,
      restored: moved.lists.restored,
      removed: moved.lists.removed,
      overwritten: moved.lists.overwritten,
    });
    return {
      ...base,
      result: 'undone',
      saved_ref: rollbackRef(request.sessionId, rollback, 'replaced'),
      warnings,
      message: `Undid rollback ${rollback} of session ${request.sessionId}: ${describeMove(moved.lists)}.`,
    };
  } finally {
    lock.release();
  }
}

export interface MoveLists {
  restored: string[];
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
  const conflicts = pending.filter((change) => byUser.has(change.rawPath) && !change.isGitLink).map((change) => change.path);
  const { blocked, inTheWay } = obstacles(repository.root, pending, own, byUser);
  conflicts.push(...inTheWay.filter((file) => !conflicts.includes(file)));
  const lists: MoveLists = { restored: [], removed: [], skipped: [], conflicts: [...new Set([...conflicts, ...blocked])], overwritten: [], blocked };
  if (pending.length === 0) return { kind: 'nothing', lists };
  // What is in the way and in no snapshot could never come back: not even --force overwrites it.
  const forced = (file: string) => request.force === true || (Array.isArray(request.force) && request.force.includes(file));
  if (blocked.length > 0 || conflicts.some((file) => !forced(file))) return { kind: 'conflict', lists };
  if (request.dryRun) {
    const touched = pending.filter((change) => !change.isGitLink);
    return {
      kind: 'preview',
      lists: {
        ...lists,
        restored: touched.filter((change) => change.presentInTarget).map((change) => change.path),
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
    lists: { ...lists, restored: restored.restored, removed: restored.removed, skipped: restored.skipped, overwritten: conflicts },
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

function onDisk(root: string, rawPath: string): Buffer {
  return Buffer.concat([Buffer.from(root + path.sep, 'utf8'), Buffer.from(rawPath, 'latin1')]);
}

function nextRollbackNumber(refs: ReadonlyMap<string, string>, sessionId: string): number {
  const prefix = `refs/codeloops/${sessionId}/rollback/`;
  let highest = 0;
  for (const ref of refs.keys()) {
    const match = ref.startsWith(prefix) ? /^(\d+)\//.exec(ref.slice(prefix.length)) : null;
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}

/** Records the move in the session's sidecar; a record that cannot be written is a warning, not a failure. */
export function record(sidecarDirectory: string, input: RunEventInput): string[] {
  try {
    const recorder = SidecarRecorder.open(sidecarDirectory);
    try {
      recorder.record(stampEvent(input));
    } finally {
      recorder.close();
    }
    return [];
  } catch (error) {
    return [
      `the ${input.type === 'applied' || input.type === 'apply_undone' ? 'apply' : 'rollback'} was made but could not be recorded in ${sidecarDirectory}: ${(error as Error).message}`,
    ];
  }
}

function emptyOutcome(sessionId: string): RollbackOutcome {
  return {
    result: 'nothing_to_roll_back',
    message: '',
    session_id: sessionId,
    iteration: null,
    rollback: null,
    restored: [],
    removed: [],
    skipped: [],
    conflicts: [],
    blocked: [],
    overwritten: [],
    saved_ref: null,
    warnings: [],
    dry_run: false,
  };
}

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

/** The move in words; `written` names what writing a file is (a rollback restores, an apply writes). */
export function describeMove(lists: MoveLists, would = '', written: [past: string, present: string] = ['restored', 'restore']): string {
  const verb = (past: string, present: string) => (would ? `${would}${present}` : past);
  const parts: string[] = [];
  if (lists.restored.length > 0) parts.push(`${verb(...written)} ${listPaths(lists.restored)}`);
  if (lists.removed.length > 0) parts.push(`${verb('removed', 'remove')} ${listPaths(lists.removed)}`);
  if (lists.overwritten.length > 0) parts.push(`${verb('overwrote', 'overwrite')} your changes to ${listPaths(lists.overwritten)}`);
  if (lists.skipped.length > 0) parts.push(`${verb('left', 'leave')} the nested repositories ${listPaths(lists.skipped)} alone`);
  return parts.join('; ') || 'nothing to write';
}

function listPaths(paths: readonly string[]): string {
  return paths.length <= 6 ? paths.join(', ') : `${paths.slice(0, 6).join(', ')} and ${paths.length - 6} more`;
}

function describeRange(iterations: readonly number[]): string {
  return iterations.length === 1 ? String(iterations[0]) : `${iterations[0]}–${iterations.at(-1)}`;
}
