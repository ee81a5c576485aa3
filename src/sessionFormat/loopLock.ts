/**
 * The loop lock, `<git dir>/codeloops.lock`: one loop per repository, held by the
 * runner that writes the session. Its JSON says who holds it and since when; any
 * reader on the machine uses it to tell a running loop from one whose runner died.
 */

export const LOCK_FILE_NAME = 'codeloops.lock';

export interface LockOwner {
  pid: number;
  /** When the lock was taken (ISO 8601): a moment before the session file is created. */
  startedAt: string;
  /** The loop waits for the user's review (`review = "pause"`): the user may change the tree meanwhile (reject a hunk). */
  pausedForReview?: boolean;
}

export function serializeLockOwner(owner: LockOwner): string {
  return JSON.stringify(owner);
}

/** A lock file's owner, or undefined for anything that is not one (torn, foreign, garbage). */
export function parseLockOwner(raw: string): LockOwner | undefined {
  try {
    const value = JSON.parse(raw) as Partial<LockOwner>;
    return typeof value.pid === 'number' && Number.isInteger(value.pid) && value.pid > 0 && typeof value.startedAt === 'string'
      ? { pid: value.pid, startedAt: value.startedAt, ...(value.pausedForReview === true ? { pausedForReview: true } : {}) }
      : undefined;
  } catch {
    return undefined;
  }
}
