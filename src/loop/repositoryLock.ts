import fs from 'node:fs';
import path from 'node:path';
import type { Repository } from '../git/repository.js';

export class LoopAlreadyRunningError extends Error {
  override name = 'LoopAlreadyRunningError';
}

export interface RepositoryLock {
  release(): void;
}

/** What the lock file holds: who runs the loop, since when. */
export interface LockOwner {
  pid: number;
  startedAt: string;
}

/** `<git dir>/codeloops.lock`. */
export const LOCK_FILE_NAME = 'codeloops.lock';

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
      fs.writeFileSync(lockPath, JSON.stringify(owner), { flag: 'wx', mode: 0o600 });
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          try {
            const current = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as LockOwner;
            if (current.pid === owner.pid && current.startedAt === owner.startedAt) fs.rmSync(lockPath, { force: true });
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
        );
      }
      // Stale: its runner is gone. Removed only if it is still the lock judged stale,
      // so two runners starting at once cannot remove each other's fresh lock.
      if (readLock(lockPath) === raw) fs.rmSync(lockPath, { force: true });
    }
  }
  throw new LoopAlreadyRunningError(`Could not take the loop lock ${lockPath}.`);
}

function readLock(lockPath: string): string | undefined {
  try {
    return fs.readFileSync(lockPath, 'utf8');
  } catch {
    return undefined;
  }
}

/** A lock file's owner, or undefined for anything that is not one (torn, foreign, garbage). */
export function parseLockOwner(raw: string): LockOwner | undefined {
  try {
    const value = JSON.parse(raw) as Partial<LockOwner>;
    return typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0 && typeof value.startedAt === 'string' ? (value as LockOwner) : undefined;
  } catch {
    return undefined;
  }
}

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
