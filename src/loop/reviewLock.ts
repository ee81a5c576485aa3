import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../process/processGroup.js';
import { CodeloopsError } from '../sessionFormat/failures.js';

/** In a sidecar folder: held while a review action changes the session's review (and, while its loop waits, its tree). */
const REVIEW_LOCK_FILE = 'review.lock';
/** How long a review action waits for another one on the same session before giving up. */
const WAIT_MS = 60_000;
const RETRY_MS = 25;

/**
 * One review action on a session at a time: a rejected hunk and a comment made at
 * once (the editor and a terminal) would take the same id, and two rejections would
 * write the same undo refs. A loop paused for review takes it too before it goes on,
 * so that it never resumes in the middle of a change to the tree. Held for moments;
 * a lock left by a process that died is taken over.
 */
export async function withReviewLock<T>(sidecarDir: string, work: () => Promise<T>): Promise<T> {
  fs.mkdirSync(sidecarDir, { recursive: true, mode: 0o700 });
  const lockPath = path.join(sidecarDir, REVIEW_LOCK_FILE);
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number(readHolder(lockPath));
      if (!Number.isInteger(holder) || holder <= 0 || !isProcessAlive(holder)) {
        fs.rmSync(lockPath, { force: true }); // its process is gone
        continue;
      }
      if (Date.now() > deadline) {
        throw new CodeloopsError('review_busy', `Another review action on this session (pid ${holder}) has not finished for a minute; try again once it has.`, {
          pid: holder,
          lock_file: lockPath,
        });
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
  try {
    return await work();
  } finally {
    if (readHolder(lockPath) === String(process.pid)) fs.rmSync(lockPath, { force: true });
  }
}

function readHolder(lockPath: string): string | undefined {
  try {
    return fs.readFileSync(lockPath, 'utf8');
  } catch {
    return undefined;
  }
}
