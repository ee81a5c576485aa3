import { applySession, undoApply } from '../rollback/apply.js';
import type { ApplyOutcome } from '../sessionFormat/applyOutcome.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { appendToGroup, groupStatus, readGroup, type GroupState } from './groupRecord.js';
import { removeGroupWorktrees } from './worktreeCleanup.js';

/**
 * `codeloops apply <session>`: a finished candidate's changes into the user's
 * working tree (the group's working directory), surgically and conflict-checked,
 * undoable; then the group's worktrees are removed unless kept. Any other session
 * (one imported from a CI run, say) is applied to its own working directory.
 */

export interface ApplyCandidateRequest {
  sessionId: string;
  store: SessionStore;
  groupsDirectory: string;
  sidecarDirOf: (sessionId: string) => string;
  /** Where the changes go; default: the group's working directory (or the session's own). */
  targetDir?: string;
  force: boolean | readonly string[];
  dryRun?: boolean;
  /** Keep the group's worktrees after the apply. */
  keep?: boolean;
  undo?: boolean;
}

export async function applyCandidate(request: ApplyCandidateRequest): Promise<ApplyOutcome> {
  // Its first line and its summary (from the index, or the file's last line): never the whole session, which may be hundreds of MB.
  const start = await request.store.startLine(request.sessionId);
  const group = start.candidate_group ? await readGroupOf(request.groupsDirectory, start.candidate_group) : null;
  const ended = (await request.store.summary(request.sessionId))?.outcome != null;
  if (!request.undo && !ended) {
    throw new CodeloopsError('loop_running', `Session ${request.sessionId} has not ended: wait for its loop to finish (or interrupt it) before applying it.`, {
      session_id: request.sessionId,
    });
  }
  if (group && groupStatus(group) === 'running' && !request.undo && !request.dryRun) {
    throw new CodeloopsError('loop_running', `Candidate group ${group.id} is still running: wait for every candidate to end, or interrupt the group.`, {
      group_id: group.id,
    });
  }
  const targetDir = request.targetDir ?? group?.started.working_dir ?? start.working_dir;
  const move = {
    sessionId: request.sessionId,
    targetDir,
    sidecarDir: request.sidecarDirOf(request.sessionId),
    force: request.force,
    dryRun: request.dryRun,
  };
  const outcome = request.undo ? await undoApply(move) : await applySession(move);
  if (!group || outcome.dry_run || !start.candidate) return outcome;
  if (outcome.result === 'apply_undone') {
    appendToGroup(request.groupsDirectory, group.id, {
      type: 'candidate_apply_undone',
      label: start.candidate,
      session_id: request.sessionId,
      apply: outcome.apply!,
    });
    return outcome;
  }
  if (outcome.result !== 'applied' && outcome.result !== 'nothing_to_apply') return outcome;
  if (outcome.result === 'applied') {
    appendToGroup(request.groupsDirectory, group.id, {
      type: 'candidate_applied',
      label: start.candidate,
      session_id: request.sessionId,
      apply: outcome.apply!,
      target_dir: outcome.target_dir,
    });
  }
  if (request.keep) return outcome;
  const worktrees = await removeGroupWorktrees(await readGroup(request.groupsDirectory, group.id), {
    groupsDirectory: request.groupsDirectory,
    sidecarDirOf: request.sidecarDirOf,
  });
  return { ...outcome, worktrees_removed: worktrees.removed, worktrees_kept: worktrees.kept };
}

async function readGroupOf(groupsDirectory: string, groupId: string): Promise<GroupState | null> {
  try {
    return await readGroup(groupsDirectory, groupId);
  } catch {
    return null; // its record is gone (deleted, not imported): the session is applied on its own
  }
}
