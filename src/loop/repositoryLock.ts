import fs from 'node:fs';
import path from 'node:path';
import type { Repository } from '../git/repository.js';
import { removeStaleTemporaryIndexes } from '../git/temporaryIndex.js';
import { isGroupAlive, isProcessAlive, type GroupRecorder } from '../process/processGroup.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { LOCK_FILE_NAME, parseLockOwner, serializeLockOwner, type LockOwner } from '../sessionFormat/loopLock.js';

export class LoopAlreadyRunningError extends CodeloopsError {
  override name = 'LoopAlreadyRunningError';
  constructor(message: string, details: { pid?: number; started_at?: string; process_group?: number; runner_pid?: number; lock_file: string }) {
    super('loop_running', message, details);
  }
}

/** The lock a loop holds; it records the process groups the loop has running (its agent's, a check's). */
export interface RepositoryLock extends GroupRecorder {
  release(): void;
  /** Says in the lock file that the loop waits for the user's review (or no longer does). */
  setPausedForReview(paused: boolean): void;
}

/**
 * One loop per repository at a time: two loops snapshotting and restoring the same
 * tree would attribute each other's edits. A lock left by a runner that died is
 * taken over, unless what that runner started still runs: an agent left behind by a
 * runner killed outright (SIGKILL, a crash) may still be changing files, and a new
 * loop is refused until it is stopped. Temporary index files left by runners that
 * died are removed on the way.
 */
export function acquireRepositoryLock(repository: Repository): RepositoryLock {
  const lockPath = path.join(repository.gitDir, LOCK_FILE_NAME);
  const owner: LockOwner = { pid: process.pid, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, serializeLockOwner(owner), { flag: 'wx', mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      takeOverIfStale(repository, lockPath);
      continue;
    }
    removeStaleTemporaryIndexes(repository);
    return heldLock(lockPath, owner);
  }
  throw new LoopAlreadyRunningError(`Could not take the loop lock ${lockPath}.`, { lock_file: lockPath });
}

function heldLock(lockPath: string, owner: LockOwner): RepositoryLock {
  const groups = new Set<number>();
  let pausedForReview = false;
  let released = false;
  const isStillOurs = (): boolean => {
    const current = parseLockOwner(readLock(lockPath) ?? '');
    return current?.pid === owner.pid && current.startedAt === owner.startedAt;
  };
  /** Rewritten whole and renamed into place: a reader never sees half a lock. */
  const record = (): void => {
    if (released || !isStillOurs()) return;
    const temporary = `${lockPath}.${process.pid}.tmp`;
    try {
      const state = { ...(groups.size > 0 ? { processGroups: [...groups] } : {}), ...(pausedForReview ? { pausedForReview: true } : {}) };
      fs.writeFileSync(temporary, serializeLockOwner({ ...owner, ...state }), { mode: 0o600 });
      fs.renameSync(temporary, lockPath);
    } catch {
      fs.rmSync(temporary, { force: true });
    }
  };
  return {
    add(pid) {
      groups.add(pid);
      record();
    },
    remove(pid) {
      groups.delete(pid);
      record();
    },
    // If it cannot be written, the user's changes to the tree are refused while paused: safe.
    setPausedForReview(paused) {
      pausedForReview = paused;
      record();
    },
    release() {
      if (released) return;
      released = true;
      try {
        if (isStillOurs()) fs.rmSync(lockPath, { force: true });
      } catch {
        // gone already
      }
    },
  };
}

/** Removes a lock whose runner is gone and left nothing running; throws when the loop, or what it started, still runs. */
function takeOverIfStale(repository: Repository, lockPath: string): void {
  const raw = readLock(lockPath);
  const existing = raw === undefined ? undefined : parseLockOwner(raw);
  if (existing) refuseWhileRunning(repository, lockPath, existing);
  // Stale: its runner is gone, and nothing it started runs. Removed only if it is still
  // the lock judged stale, so two runners starting at once cannot remove each other's fresh lock.
  if (readLock(lockPath) === raw) fs.rmSync(lockPath, { force: true });
}

/**
 * Refuses, as a new loop would be refused, while the loop that holds this
 * repository's lock (a candidate's worktree has its own) runs, or while what its
 * runner started still does after the runner died: for what cleans up after a runner
 * that died (a candidate group's worktrees), which must not pull a tree from under
 * an agent still at work in it. Takes nothing.
 */
export function refuseWhileLoopRuns(repository: Repository): void {
  const lockPath = path.join(repository.gitDir, LOCK_FILE_NAME);
  const raw = readLock(lockPath);
  const existing = raw === undefined ? undefined : parseLockOwner(raw);
  if (existing) refuseWhileRunning(repository, lockPath, existing);
}

function refuseWhileRunning(repository: Repository, lockPath: string, existing: LockOwner): void {
  if (isProcessAlive(existing.pid)) {
    throw new LoopAlreadyRunningError(
      `Another codeloops loop is running in ${repository.root} (pid ${existing.pid}, since ${existing.startedAt}). ` +
        `Wait for it to finish or interrupt it; if no loop is running, delete ${lockPath}.`,
      { pid: existing.pid, started_at: existing.startedAt, lock_file: lockPath },
    );
  }
  const leftBehind = existing.processGroups?.find(isGroupAlive);
  if (leftBehind !== undefined) {
    throw new LoopAlreadyRunningError(
      `The runner of a loop in ${repository.root} (pid ${existing.pid}, since ${existing.startedAt}) stopped without ending it, ` +
        `but what it started still runs: process group ${leftBehind}, which may still be changing files. ` +
        `Stop that process group (or wait for it to end), then start again; if it is not a leftover of that loop, delete ${lockPath}.`,
      { pid: leftBehind, process_group: leftBehind, runner_pid: existing.pid, started_at: existing.startedAt, lock_file: lockPath },
    );
  }
}

function readLock(lockPath: string): string | undefined {
  try {
    return fs.readFileSync(lockPath, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * For what changes the tree on the user's behalf outside a loop (a rejected hunk):
 * the loop lock, so that no loop starts meanwhile, or, while a loop holds it but
 * waits for the user's review, nothing: the loop does not touch the tree until the
 * user says to go on. A loop at work refuses it.
 */
export function acquireReviewLock(repository: Repository): RepositoryLock {
  const lockPath = path.join(repository.gitDir, LOCK_FILE_NAME);
  const raw = readLock(lockPath);
  const owner = raw === undefined ? undefined : parseLockOwner(raw);
  if (owner?.pausedForReview && isProcessAlive(owner.pid)) return { release() {}, setPausedForReview() {}, add() {}, remove() {} };
  try {
    return acquireRepositoryLock(repository);
  } catch (error) {
    if (error instanceof LoopAlreadyRunningError) {
      throw new LoopAlreadyRunningError(
        `A codeloops loop is at work in ${repository.root} (pid ${String(error.details.pid ?? '?')}): change its files while it is paused for review, or once it has ended.`,
        { ...(error.details as { lock_file: string }) },
      );
    }
    throw error;
  }
}
