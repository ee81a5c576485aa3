import { openRepository } from '../git/repository.js';
import { applyRef, listSessionRefs, readSnapshot, sessionChangeEnds } from '../git/snapshots.js';
import { acquireRepositoryLock } from '../loop/repositoryLock.js';
import type { ApplyOutcome } from '../sessionFormat/applyOutcome.js';
import { conflictMessage, describeMove, moveTree } from '../git/treeMove.js';
import { record } from './rollback.js';

/**
 * Apply: puts a session's whole change (from the tree before its first iteration to
 * the last tree it left) into a working tree: rollback the other way, with the same
 * guards. Only the paths the session changed are touched; a path the user changed
 * since the session's starting tree is a conflict (nothing changes unless forced);
 * the tree is snapshotted first, so every apply can be undone. Its snapshots must be
 * in the target's repository: a candidate's worktree shares its refs with the
 * user's repository, and an imported session brings its own.
 */

/** An apply writes the session's version of a file. */
const WRITTEN: [string, string] = ['wrote', 'write'];

export interface ApplyRequest {
  sessionId: string;
  /** The working tree the changes go to. */
  targetDir: string;
  /** The session's sidecar folder, where the apply is recorded. */
  sidecarDirectory: string;
  /** Overwrite conflicting paths: all of them (true), or only these (what a user was shown and agreed to). */
  force: boolean | readonly string[];
  dryRun?: boolean;
}

export async function applySession(request: ApplyRequest): Promise<ApplyOutcome> {
  const repository = await openRepository(request.targetDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const outcome = emptyOutcome(request);
    const ends = await sessionChangeEnds(repository, request.sessionId);
    if (!ends) {
      return {
        ...outcome,
        result: 'snapshot_missing',
        message: `The snapshots of session ${request.sessionId} are not in ${repository.root} (deleted, another repository, or a session recorded without them). Nothing was changed.`,
      };
    }
    const refs = await listSessionRefs(repository, request.sessionId);
    const apply = nextApplyNumber(refs, request.sessionId);
    const moved = await moveTree(repository, {
      from: ends.start,
      to: ends.end,
      force: request.force,
      saveCurrentAs: applyRef(request.sessionId, apply, 'before'),
      afterRefs: [applyRef(request.sessionId, apply, 'after')],
      message: `codeloops ${request.sessionId} apply ${apply}`,
      dryRun: Boolean(request.dryRun),
    });
    const base = { ...outcome, ...moved.lists };
    if (moved.kind === 'nothing') {
      return {
        ...base,
        result: 'nothing_to_apply',
        message: `${repository.root} already has every change of session ${request.sessionId}. Nothing was changed.`,
      };
    }
    if (moved.kind === 'conflict') return { ...base, result: 'conflict', message: conflictMessage(moved.lists, 'apply the session') };
    if (moved.kind === 'preview') {
      return {
        ...base,
        result: 'applied',
        dry_run: true,
        message: `Would apply session ${request.sessionId} to ${repository.root}: ${describeMove(moved.lists, 'would ', WRITTEN)}. Nothing was changed (dry run).`,
      };
    }
    const savedRef = applyRef(request.sessionId, apply, 'before');
    const warnings = record(request.sidecarDirectory, {
      type: 'applied',
      apply,
      target_dir: repository.root,
      restored: moved.lists.restored,
      removed: moved.lists.removed,
      overwritten: moved.lists.overwritten,
      before_ref: savedRef,
    });
    return {
      ...base,
      result: 'applied',
      apply,
      saved_ref: savedRef,
      warnings,
      message: `Applied session ${request.sessionId} to ${repository.root}: ${describeMove(moved.lists, '', WRITTEN)}. The tree as it was is kept, so this can be undone.`,
    };
  } finally {
    lock.release();
  }
}

/** Undoes the session's latest apply, if it is not undone yet. */
export async function undoApply(request: ApplyRequest): Promise<ApplyOutcome> {
  const repository = await openRepository(request.targetDir);
  const lock = acquireRepositoryLock(repository);
  try {
    const outcome = emptyOutcome(request);
    const refs = await listSessionRefs(repository, request.sessionId);
    const apply = nextApplyNumber(refs, request.sessionId) - 1;
    if (apply === 0) return { ...outcome, message: `Session ${request.sessionId} was never applied here. Nothing was changed.` };
    if (refs.has(applyRef(request.sessionId, apply, 'undone'))) {
      return { ...outcome, apply, message: `The last apply of session ${request.sessionId} is already undone. Nothing was changed.` };
    }
    const [before, after] = await Promise.all([
      readSnapshot(repository, applyRef(request.sessionId, apply, 'before')),
      readSnapshot(repository, applyRef(request.sessionId, apply, 'after')),
    ]);
    if (!before || !after) {
      return {
        ...outcome,
        apply,
        result: 'snapshot_missing',
        message: `The snapshots of apply ${apply} of session ${request.sessionId} are gone. Nothing was changed.`,
      };
    }
    const moved = await moveTree(repository, {
      from: after,
      to: before,
      force: request.force,
      saveCurrentAs: applyRef(request.sessionId, apply, 'replaced'),
      afterRefs: [applyRef(request.sessionId, apply, 'undone')],
      message: `codeloops ${request.sessionId} undo apply ${apply}`,
      dryRun: Boolean(request.dryRun),
    });
    const base = { ...outcome, ...moved.lists, apply };
    if (moved.kind === 'nothing') return { ...base, message: `The files of apply ${apply} are already as they were before it. Nothing was changed.` };
    if (moved.kind === 'conflict') return { ...base, result: 'conflict', message: conflictMessage(moved.lists, 'undo the apply') };
    if (moved.kind === 'preview') {
      return {
        ...base,
        result: 'apply_undone',
        dry_run: true,
        message: `Would undo apply ${apply} of session ${request.sessionId}: ${describeMove(moved.lists, 'would ')}. Nothing was changed (dry run).`,
      };
    }
    const warnings = record(request.sidecarDirectory, {
      type: 'apply_undone',
      apply,
      restored: moved.lists.restored,
      removed: moved.lists.removed,
      overwritten: moved.lists.overwritten,
    });
    return {
      ...base,
      result: 'apply_undone',
      saved_ref: applyRef(request.sessionId, apply, 'replaced'),
      warnings,
      message: `Undid apply ${apply} of session ${request.sessionId}: ${describeMove(moved.lists)}.`,
    };
  } finally {
    lock.release();
  }
}

function nextApplyNumber(refs: ReadonlyMap<string, string>, sessionId: string): number {
  const prefix = `refs/codeloops/${sessionId}/apply/`;
  let highest = 0;
  for (const ref of refs.keys()) {
    const match = ref.startsWith(prefix) ? /^(\d+)\//.exec(ref.slice(prefix.length)) : null;
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}

function emptyOutcome(request: ApplyRequest): ApplyOutcome {
  return {
    result: 'nothing_to_apply',
    message: '',
    session_id: request.sessionId,
    apply: null,
    target_dir: request.targetDir,
    restored: [],
    removed: [],
    skipped: [],
    conflicts: [],
    blocked: [],
    overwritten: [],
    saved_ref: null,
    worktrees_removed: [],
    worktrees_kept: [],
    warnings: [],
    dry_run: false,
  };
}
