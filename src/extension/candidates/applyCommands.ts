import { applyCandidate } from '../../candidates/applyCandidate.js';
import type { ApplyOutcome } from '../../sessionFormat/applyOutcome.js';
import { groupsDir } from '../../sessionFormat/candidateGroupFiles.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import type { EditorCommands, EditorWindow, RunLog } from '../editorPorts.js';
import { COMMANDS } from '../ids.js';
import type { LoopRegistry } from '../runs/loopRegistry.js';
import { confirmAndMove } from '../timeTravel/timeTravelCommands.js';

/**
 * "Apply This Candidate" and its undo, as the editor offers them: the same modal as a
 * rollback (the files listed first, conflicts said plainly with an explicit
 * "overwrite"), then the move, then "Undo Apply" at once.
 */

export interface ApplyDeps {
  store: SessionStore;
  /** Which sessions run now: a candidate is applied once it has ended. */
  registry: Pick<LoopRegistry, 'refuseRunningSession'>;
  log: RunLog;
  /** A session's sidecar folder, where the apply is recorded. */
  sidecarDirOf: (sessionId: string) => string;
  window: EditorWindow;
  commands: EditorCommands;
  /** Called after the files or the records changed, so the tree and the pages show it. */
  changed: (sessionId: string) => void;
}

export async function applyCandidateSession(deps: ApplyDeps, sessionId: string): Promise<ApplyOutcome | undefined> {
  if (deps.registry.refuseRunningSession(sessionId)) return undefined;
  const start = await deps.store.startLine(sessionId);
  const name = start.candidate ?? sessionId;
  const outcome = await confirmAndMove(deps, (force, dryRun) => move(deps, sessionId, force, dryRun, false), {
    question: `Apply ${name} to your working tree?`,
    action: 'Apply This Candidate',
    undoAction: 'Undo Apply',
    writeLabel: 'Write',
    done: (result) => result.result === 'applied',
  });
  if (outcome?.result === 'applied') {
    const removed = outcome.worktrees_removed.length > 0 ? ` The group's worktrees were removed.` : '';
    const undo = 'Undo Apply';
    void deps.window.showInfo(`Codeloops: applied ${name} (${fileCount(outcome)}).${removed}`, undo).then((choice) => {
      if (choice === undo) void deps.commands.execute(COMMANDS.undoApply, sessionId);
    });
  }
  return outcome;
}

export async function undoApplySession(deps: ApplyDeps, sessionId: string): Promise<ApplyOutcome | undefined> {
  const outcome = await confirmAndMove(deps, (force, dryRun) => move(deps, sessionId, force, dryRun, true), {
    question: 'Undo the apply?',
    action: 'Undo Apply',
    undoAction: 'Undo Apply',
    done: (result) => result.result === 'apply_undone',
  });
  if (outcome?.result === 'apply_undone') void deps.window.showInfo(`Codeloops: apply undone (${fileCount(outcome)}).`);
  return outcome;
}

function move(deps: ApplyDeps, sessionId: string, force: boolean | readonly string[], dryRun: boolean, undo: boolean): Promise<ApplyOutcome> {
  return applyCandidate({ sessionId, store: deps.store, groupsDirectory: groupsDir(), sidecarDirOf: deps.sidecarDirOf, force, dryRun, undo });
}

function fileCount(outcome: ApplyOutcome): string {
  const count = outcome.restored.length + outcome.removed.length;
  return `${count} file${count === 1 ? '' : 's'}`;
}
