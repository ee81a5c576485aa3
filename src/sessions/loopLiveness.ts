import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../process/processGroup.js';
import { LOCK_FILE_NAME, parseLockOwner } from '../sessionFormat/loopLock.js';

/**
 * Whether a session's loop is running right now, for sessions started by any runner
 * on this machine (a terminal, the editor). A session without an end is either
 * running or left by a runner that died; the repository lock tells them apart: a
 * running loop holds `<git dir>/codeloops.lock` with its pid, taken just before the
 * session file is created. (The loops of this very process are `loopsInThisProcess`
 * in `loop/loopRunner.ts`; the editor's are its `LoopRegistry`.)
 */

/** The lock is taken a moment before the session starts; anything further apart is another run. */
const LOCK_TO_START_MAX_MS = 60_000;
/** Session timestamps of other writers have whole seconds. */
const CLOCK_SLACK_MS = 2_000;
/** How far up from the working directory a repository's top can be. */
const MAX_LEVELS = 64;

export interface SessionStartFacts {
  working_dir: string;
  /** When the session started (ISO 8601). */
  timestamp: string;
}

export function isLoopRunning(session: SessionStartFacts): boolean {
  return loopRunnerPid(session) !== undefined;
}

/** The pid of the runner running the session's loop now (the one to signal to interrupt it), or undefined when none does. */
export function loopRunnerPid(session: SessionStartFacts): number | undefined {
  const gitDir = findGitDir(session.working_dir);
  if (!gitDir) return undefined;
  const text = readSmallFile(path.join(gitDir, LOCK_FILE_NAME));
  const owner = text === undefined ? undefined : parseLockOwner(text);
  if (!owner || !isProcessAlive(owner.pid)) return undefined;
  const started = Date.parse(session.timestamp);
  const locked = Date.parse(owner.startedAt);
  return started >= locked - CLOCK_SLACK_MS && started - locked <= LOCK_TO_START_MAX_MS ? owner.pid : undefined;
}

/** `.git` of the repository holding `workingDir`: a folder, or a file pointing to one (worktrees, submodules). */
function findGitDir(workingDir: string): string | undefined {
  if (!path.isAbsolute(workingDir)) return undefined;
  let dir = workingDir;
  for (let level = 0; level < MAX_LEVELS; level++) {
    const candidate = path.join(dir, '.git');
    const stat = fs.statSync(candidate, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return candidate;
    if (stat?.isFile()) {
      const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readSmallFile(candidate) ?? '')?.[1];
      return pointer ? path.resolve(dir, pointer) : undefined;
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** A lock or a `.git` pointer is a few dozen bytes; anything big is not one. */
function readSmallFile(file: string): string | undefined {
  try {
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile() || stat.size > 4096) return undefined;
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}
