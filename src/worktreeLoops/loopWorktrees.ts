import path from 'node:path';
import fs from 'node:fs';
import type { Repository } from '../git/repository.js';
import { removeEmptyFolders, removeWorktree } from '../git/worktrees.js';
import { LoopAlreadyRunningError, refuseWhileLoopRuns } from '../loop/repositoryLock.js';

/**
 * The worktrees loops run in (a candidate's, an eval run's, a queued task's): where each
 * goes, and how it goes away. Each lives under the worktrees folder (outside every
 * repository) as `<run>/<slot>/<repository's name>`: the run (a group, an eval, a
 * queue) has a name no other run has, the slot one no other loop of that run has, so
 * two loops never share a folder; the top folder keeps the repository's name so that a
 * session's project reads the same as the user's.
 */
export function loopWorktreePath(worktreesDirectory: string, run: string, slot: string | number, repositoryRoot: string): string {
  return path.join(worktreesDirectory, run, String(slot), path.basename(repositoryRoot));
}

/** A worktree left at this place by a runner killed outright: it is ours, and its trees are in its session's snapshots. */
export async function removeLeftoverWorktree(source: Repository, worktree: string): Promise<void> {
  if (fs.existsSync(worktree)) await removeWorktree(source, worktree);
}

/** Removes a loop's worktree once it is done with (a failure to is no failure of the run), and the folders it leaves empty. */
export async function removeLoopWorktree(source: Repository, worktree: string, worktreesDirectory: string): Promise<void> {
  await removeWorktree(source, worktree).catch(() => undefined);
  removeEmptyFolders(path.dirname(worktree), worktreesDirectory);
}

/** The refusal a loop would meet in this worktree while its loop, or what its runner started, still runs; null when nothing does. */
export function stillRunningIn(worktree: Repository): LoopAlreadyRunningError | null {
  try {
    refuseWhileLoopRuns(worktree);
    return null;
  } catch (error) {
    if (error instanceof LoopAlreadyRunningError) return error;
    throw error;
  }
}
