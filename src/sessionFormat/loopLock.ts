/**
 * The loop lock, `<git dir>/codeloops.lock`: one loop per repository, held by the
 * runner that writes the session. Its JSON says who holds it, since when, and which
 * process groups it has running right now (the agent's, a check's); any reader on the
 * machine uses it to tell a running loop from one whose runner died, and a runner
 * that died from one whose agent still runs.
 */

export const LOCK_FILE_NAME = 'codeloops.lock';

export interface LockOwner {
  pid: number;
  /** When the lock was taken (ISO 8601): a moment before the session file is created. */
  startedAt: string;
  /** The loop waits for the user's review (`review = "pause"`): the user may change the tree meanwhile (reject a hunk). */
  pausedForReview?: boolean;
  /** The process groups the runner started and has not yet seen end: its agent's, or a check's. */
  processGroups?: number[];
}

export function serializeLockOwner(owner: LockOwner): string {
  return JSON.stringify(owner);
}

const isPid = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value > 0;

/** A lock file's owner, or undefined for anything that is not one (torn, foreign, garbage). */
export function parseLockOwner(raw: string): LockOwner | undefined {
  try {
    const value = JSON.parse(raw) as Partial<LockOwner>;
    if (!isPid(value.pid) || typeof value.startedAt !== 'string') return undefined;
    const groups = Array.isArray(value.processGroups) ? value.processGroups.filter(isPid) : [];
    return {
      pid: value.pid,
      startedAt: value.startedAt,
      ...(groups.length > 0 ? { processGroups: groups } : {}),
      ...(value.pausedForReview === true ? { pausedForReview: true } : {}),
    };
  } catch {
    return undefined;
  }
}
