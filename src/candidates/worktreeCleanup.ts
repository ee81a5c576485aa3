import fs from 'node:fs';
import path from 'node:path';
import { openRepository, type Repository } from '../git/repository.js';
import { lastTree, pointRef, readSnapshot, takeSnapshot } from '../git/snapshots.js';
import { pruneWorktrees, removeEmptyFolders, removeWorktree } from '../git/worktrees.js';
import type { Candidate } from '../sessionFormat/candidateGroups.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { isLoopRunning } from '../sessions/loopLiveness.js';
import { stillRunningIn } from '../worktreeLoops/loopWorktrees.js';
import { appendToGroup, groupStatus, listGroups, type GroupState } from './groupRecord.js';

/**
 * Removing candidates' worktrees: after an apply, on a discard, and for groups whose
 * runner died (found and pruned on the next run). A worktree is never removed while
 * its loop runs, nor silently when it holds changes no snapshot has (edits made after
 * its loop ended): it is kept and the reason said, or, when the user insists, its
 * tree is snapshotted first so nothing is lost.
 */

export interface CleanupPaths {
  groupsDirectory: string;
  sidecarDirOf: (sessionId: string) => string;
}

export interface RemovedWorktrees {
  removed: string[];
  kept: { label: string; reason: string }[];
  /** Worktrees that held changes no snapshot had: snapshotted under these refs before they were removed. */
  saved: { label: string; ref: string }[];
}

/** Whose worktrees: all of the group's (default), or these labels. */
export async function removeGroupWorktrees(
  state: GroupState,
  paths: CleanupPaths,
  options: { labels?: readonly string[]; saveChanges?: boolean } = {},
): Promise<RemovedWorktrees> {
  const result: RemovedWorktrees = { removed: [], kept: [], saved: [] };
  let repository: Repository;
  try {
    repository = await openRepository(state.started.working_dir);
  } catch (error) {
    return {
      removed: [],
      saved: [],
      kept: state.started.candidates.map((candidate) => ({ label: candidate.label, reason: `its repository cannot be read: ${(error as Error).message}` })),
    };
  }
  for (const candidate of state.started.candidates) {
    if (options.labels && !options.labels.includes(candidate.label)) continue;
    if (state.removed.has(candidate.label) || !fs.existsSync(candidate.worktree)) continue;
    const keep = await reasonToKeep(state, candidate, options.saveChanges ?? false);
    if (keep?.reason) {
      result.kept.push({ label: candidate.label, reason: keep.reason });
      continue;
    }
    if (keep?.savedRef) result.saved.push({ label: candidate.label, ref: keep.savedRef });
    try {
      await removeWorktree(repository, candidate.worktree);
      removeEmptyFolders(path.dirname(candidate.worktree), path.dirname(path.dirname(path.dirname(candidate.worktree))));
      result.removed.push(candidate.label);
    } catch (error) {
      result.kept.push({ label: candidate.label, reason: `it could not be removed: ${(error as Error).message}` });
    }
  }
  if (result.removed.length > 0 || result.kept.length > 0)
    appendToGroup(paths.groupsDirectory, state.id, { type: 'worktrees_removed', removed: result.removed, kept: result.kept });
  return result;
}

/**
 * Why a worktree must stay, or null when removing it loses nothing: its loop runs, or
 * its files differ from every tree codeloops recorded for it (the last tree its loop
 * left, or the group's starting tree if its loop never took one). With `saveChanges`,
 * such a tree is snapshotted under `refs/codeloops/<group>/<n>/kept` instead.
 */
async function reasonToKeep(state: GroupState, candidate: Candidate, saveChanges: boolean): Promise<{ reason?: string; savedRef?: string } | null> {
  const sessionId = state.sessions.get(candidate.label) ?? state.finished.get(candidate.label)?.session_id ?? null;
  if (sessionId && isLoopRunning({ working_dir: candidate.working_dir, timestamp: new Date().toISOString() })) return { reason: 'its loop is running' };
  let worktree: Repository;
  try {
    worktree = await openRepository(candidate.worktree);
  } catch {
    return null; // no longer a working tree of the repository: nothing git could lose
  }
  const running = stillRunningIn(worktree);
  if (running)
    return { reason: `what its loop started still runs (process group ${String(running.details.process_group ?? running.details.pid)}): stop it first` };
  const known = sessionId ? await lastTree(worktree, sessionId) : undefined;
  const recorded = known ?? (await readSnapshot(worktree, state.started.base_ref));
  const now = await takeSnapshot(worktree, `codeloops ${state.id} candidate ${candidate.label}: its worktree before removal`);
  if (recorded && recorded.tree === now.tree) return null;
  const keptRef = `refs/codeloops/${state.id}/${candidate.index}/kept`;
  if (saveChanges) {
    await pointRef(
      worktree,
      keptRef,
      now.commit,
      `codeloops ${state.id} candidate ${candidate.label}: changes made in its worktree after its loop's last snapshot`,
    );
    return { savedRef: keptRef };
  }
  return {
    reason: `it holds changes no snapshot has (made after its loop's last snapshot); look at ${candidate.worktree}, then remove it with --force, which keeps those changes in ${keptRef}`,
  };
}

/**
 * Worktrees left by a group whose runner died (a crash, kill -9, the machine turned
 * off): found on the next run in the same repository and removed. One that holds
 * changes no snapshot has (an agent killed half-way through its edits) is
 * snapshotted first, and the ref said. Their group's record says it crashed. What
 * happened is returned in words. While an agent such a runner could not stop still
 * runs in one of them, nothing is touched and the run is refused (`loop_running`, its
 * process group named), as a single loop is.
 */
export async function pruneLeftoverWorktrees(repository: Repository, paths: CleanupPaths): Promise<string[]> {
  const messages: string[] = [];
  const root = fs.realpathSync(repository.root);
  // Only groups that never ended and whose runner is gone; one already marked crashed was dealt with.
  const crashed = (await listGroups(paths.groupsDirectory)).filter(
    (state) => !state.end && groupStatus(state) === 'crashed' && sameFolder(state.started.repository, root),
  );
  const pendingOf = (state: GroupState) =>
    state.started.candidates.filter((candidate) => !state.removed.has(candidate.label) && fs.existsSync(candidate.worktree));
  // An agent its dead runner could not stop may still be at work in its worktree: nothing is touched while one runs.
  for (const state of crashed) {
    for (const candidate of pendingOf(state)) {
      const worktree = await openRepository(candidate.worktree).catch(() => undefined);
      const running = worktree && stillRunningIn(worktree);
      if (running) {
        throw new CodeloopsError('loop_running', `Candidate ${candidate.label} of the group ${state.id}: ${running.message}`, {
          ...running.details,
          group_id: state.id,
          candidate: candidate.label,
        });
      }
    }
  }
  for (const state of crashed) {
    const pending = pendingOf(state);
    const result = pending.length > 0 ? await removeGroupWorktrees(state, paths, { saveChanges: true }) : { removed: [], kept: [], saved: [] };
    appendToGroup(paths.groupsDirectory, state.id, { type: 'group_finished', status: 'crashed', ranking: [] });
    if (result.removed.length > 0)
      messages.push(`candidate group ${state.id} was left by a runner that stopped: removed its worktrees (${result.removed.join(', ')})`);
    for (const saved of result.saved)
      messages.push(`candidate group ${state.id}: the worktree of ${saved.label} held changes no snapshot had; they are kept in ${saved.ref}`);
    for (const kept of result.kept) messages.push(`candidate group ${state.id}: kept the worktree of ${kept.label}: ${kept.reason}`);
  }
  await pruneWorktrees(repository);
  return messages;
}

function sameFolder(recorded: string, realRoot: string): boolean {
  try {
    return fs.realpathSync(recorded) === realRoot;
  } catch {
    return false;
  }
}
