import fs from 'node:fs';
import path from 'node:path';
import type { Repository } from '../git/repository.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { LOCK_FILE_NAME, parseLockOwner, serializeLockOwner, type LockOwner } from '../sessionFormat/loopLock.js';
import { isProcessAlive } from '../sessions/runningLoops.js';

export class LoopAlreadyRunningError extends CodeloopsError {
  override name = 'LoopAlreadyRunningError';
  constructor(message: string, details: { pid?: number; started_at?: string; lock_file: string }) {
    super('loop_running', message, details);
  }
}

export interface RepositoryLock {
  release(): void;
  /** Says in the lock file that the loop waits for the user's review (or no longer does). */
  setPausedForReview(paused: boolean): void;
}

/**
 * One loop per repository at a time: two loops snapshotting and restoring the same
 * tree would attribute each other's edits. A lock left by a runner that died is
 * taken over.
 */
export function acquireRepositoryLock(repository: Repository): RepositoryLock {
  const lockPath = path.join(repository.gitDir, LOCK_FILE_NAME);
  const owner: LockOwner = { pid: process.pid, startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, serializeLockOwner(owner), { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        setPausedForReview(paused) {
          if (released) return;
          // Written whole and renamed over the lock: a reader never sees half of it. If it
          // cannot be written, the user's changes to the tree are refused while paused: safe.
          const temporary = `${lockPath}.${process.pid}.tmp`;
          try {
            fs.writeFileSync(temporary, serializeLockOwner({ ...owner, ...(paused ? { pausedForReview: true } : {}) }), { mode: 0o600 });
            fs.renameSync(temporary, lockPath);
          } catch {
            fs.rmSync(temporary, { force: true });
          }
        },
        release() {
          if (released) return;
          released = true;
          try {
            const current = parseLockOwner(fs.readFileSync(lockPath, 'utf8'));
            if (current?.pid === owner.pid && current.startedAt === owner.startedAt) fs.rmSync(lockPath, { force: true });
          } catch {
            // gone already
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const raw = readLock(lockPath);
      const existing = raw === undefined ? undefined : parseLockOwner(raw);
      if (existing && isProcessAlive(existing.pid)) {
        throw new LoopAlreadyRunningError(
          `Another codeloops loop is running in ${repository.root} (pid ${existing.pid}, since ${existing.startedAt}). ` +
            `Wait for it to finish or interrupt it; if no loop is running, delete ${lockPath}.`,
          { pid: existing.pid, started_at: existing.startedAt, lock_file: lockPath },
        );
      }
      // Stale: its runner is gone. Removed only if it is still the lock judged stale,
      // so two runners starting at once cannot remove each other's fresh lock.
      if (readLock(lockPath) === raw) fs.rmSync(lockPath, { force: true });
    }
  }
  throw new LoopAlreadyRunningError(`Could not take the loop lock ${lockPath}.`, { lock_file: lockPath });
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
  if (owner?.pausedForReview && isProcessAlive(owner.pid)) return { release() {}, setPausedForReview() {} };
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
