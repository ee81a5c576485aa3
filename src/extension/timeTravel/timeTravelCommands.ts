import { rollBack, undoRollback, type RollbackRequest } from '../../rollback/rollback.js';
import type { RollbackOutcome } from '../../sessionFormat/rollbackOutcome.js';
import type { FailureCode } from '../../sessionFormat/failures.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import type { EditorCommands, EditorWindow, FolderRef, RunLog } from '../editorPorts.js';
import { COMMANDS } from '../ids.js';
import type { LoopRegistry } from '../runs/loopRegistry.js';
import type { LoopProcessEnd, RunOverrides } from '../runner/loopProcess.js';
import type { RunController } from '../runs/runController.js';

/**
 * Rollback, its undo and resume, as the editor offers them: every change to the
 * user's files is shown first in a modal that lists them, conflicts are said in
 * words with an explicit "overwrite", and each rollback offers its undo at once.
 * The engine does the work; these functions only ask and tell.
 */

const MAX_LISTED = 20;

export interface TimeTravelDeps<F extends FolderRef = FolderRef> {
  store: SessionStore;
  /** Starts the loop that carries a session on. */
  runs: RunController<F>;
  /** Which sessions run now: their files are not rolled back under them. */
  registry: LoopRegistry<F>;
  log: RunLog;
  window: EditorWindow;
  commands: EditorCommands;
  /** A session's sidecar folder, where its moves are recorded. */
  sidecarDirOf: (sessionId: string) => string;
  /** The open workspace folder that holds a path, if any. */
  folderOf: (filePath: string) => F | undefined;
  /** Called after the files or the record changed, so the tree and viewers show it. */
  changed: (sessionId: string) => void;
}

export async function rollBackIteration<F extends FolderRef>(
  deps: TimeTravelDeps<F>,
  sessionId: string,
  iteration: number,
): Promise<RollbackOutcome | undefined> {
  const request = await requestFor(deps, sessionId);
  if (!request) return undefined;
  const outcome = await confirmAndMove(deps, (force, dryRun) => rollBack({ ...request, iteration, force, dryRun }), {
    question: `Roll back to before iteration ${iteration}?`,
    action: 'Roll Back',
  });
  if (outcome?.result === 'rolled_back') {
    const undo = 'Undo Rollback';
    void deps.window.showInfo(`Codeloops: rolled back to before iteration ${iteration} (${fileCount(outcome)}).`, undo).then((choice) => {
      if (choice === undo) void deps.commands.execute(COMMANDS.undoRollback, sessionId);
    });
  }
  return outcome;
}

export async function undoLastRollback<F extends FolderRef>(deps: TimeTravelDeps<F>, sessionId: string): Promise<RollbackOutcome | undefined> {
  const request = await requestFor(deps, sessionId);
  if (!request) return undefined;
  const outcome = await confirmAndMove(deps, (force, dryRun) => undoRollback({ ...request, force, dryRun }), {
    question: 'Undo the last rollback?',
    action: 'Undo Rollback',
  });
  if (outcome?.result === 'undone') void deps.window.showInfo(`Codeloops: rollback undone (${fileCount(outcome)}).`);
  return outcome;
}

/** Refusals of resume that the user can overrule: the files cannot be checked, or differ from how the loop left them. */
const OVERRULABLE: readonly FailureCode[] = ['tree_changed', 'snapshot_missing'];

/** Carries a session on in the workspace folder that holds it; offers to go on anyway when the files changed since. */
export async function resumeSession<F extends FolderRef>(
  deps: TimeTravelDeps<F>,
  sessionId: string,
  overrides?: RunOverrides,
): Promise<LoopProcessEnd | undefined> {
  const start = await deps.store.startLine(sessionId);
  const folder = deps.folderOf(start.working_dir);
  if (!folder) {
    void deps.window.showError(`Codeloops: this session ran in ${start.working_dir}. Open that folder to resume it.`);
    return undefined;
  }
  if (!deps.runs.canStartIn(folder)) return undefined;
  deps.log.show(true);
  const end = await deps.runs.start(folder, { resume: sessionId }, { handles: OVERRULABLE, overrides });
  if (end?.kind === 'refused' && OVERRULABLE.includes(end.code)) {
    const anyway = 'Resume Anyway';
    const choice = await deps.window.confirm('Resume with the files as they are now?', end.message, anyway);
    if (choice === anyway) return deps.runs.start(folder, { resume: sessionId, force: true }, { overrides });
  }
  return end;
}

async function requestFor<F extends FolderRef>(deps: TimeTravelDeps<F>, sessionId: string): Promise<Omit<RollbackRequest, 'force'> | undefined> {
  if (deps.registry.refuseRunningSession(sessionId)) return undefined;
  const start = await deps.store.startLine(sessionId);
  return { sessionId, workingDir: start.working_dir, sidecarDir: deps.sidecarDirOf(sessionId) };
}

/** What a move of files (a rollback, an apply, their undos) says it did or would do. */
export type MoveOutcome = Pick<RollbackOutcome, 'dry_run' | 'message' | 'session_id' | 'conflicts' | 'restored' | 'removed' | 'overwritten' | 'skipped'> & {
  result: string;
};

export interface MoveTexts<O extends MoveOutcome> {
  question: string;
  action: string;
  /** The undo, by the name the user will see (default: "Undo Rollback"). */
  undoAction?: string;
  /** What writing a file is called in the list (default: "Restore"). */
  writeLabel?: string;
  /** Whether the move was made (default: a rollback or its undo). */
  done?: (outcome: O) => boolean;
}

/** Dry run, then a modal listing what will change (and what would be overwritten), then the move. */
export async function confirmAndMove<O extends MoveOutcome>(
  deps: Pick<TimeTravelDeps, 'window' | 'log' | 'changed'>,
  move: (force: boolean | readonly string[], dryRun: boolean) => Promise<O>,
  texts: MoveTexts<O>,
): Promise<O | undefined> {
  let force: readonly string[] = [];
  let preview = await move(false, true);
  if (preview.result === 'conflict') {
    const overwrite = 'Overwrite My Changes';
    const choice = await deps.window.confirm(
      'You changed files since the loop last touched them.',
      `${listed('Your changes to these would be overwritten', preview.conflicts)}\n\nCommit or move them first, or overwrite them: they stay recoverable with "${texts.undoAction ?? 'Undo Rollback'}".`,
      overwrite,
    );
    if (choice !== overwrite) return undefined;
    // Only what the user was shown: a file changed while the dialog was open is a new conflict.
    force = preview.conflicts;
    preview = await move(force, true);
  }
  if (!preview.dry_run) {
    // Nothing to do, or the snapshots are gone: the engine's words say which.
    void deps.window.showInfo(`Codeloops: ${preview.message}`);
    return preview;
  }
  const detail = [
    listed(texts.writeLabel ?? 'Restore', preview.restored),
    listed('Remove', preview.removed),
    listed('Overwrite your changes to', preview.overwritten),
    listed('Leave alone (nested repositories)', preview.skipped),
  ]
    .filter(Boolean)
    .join('\n\n');
  const choice = await deps.window.confirm(
    texts.question,
    `${detail}\n\nOnly these files are touched; the current state is kept so this can be undone.`,
    texts.action,
  );
  if (choice !== texts.action) return undefined;
  const outcome = await move(force, false);
  deps.log.info(outcome.message);
  deps.changed(outcome.session_id);
  const made = texts.done ?? ((moved: O) => moved.result === 'rolled_back' || moved.result === 'undone');
  if (!made(outcome)) void deps.window.showWarning(`Codeloops: ${outcome.message}`);
  return outcome;
}

function listed(title: string, paths: readonly string[]): string {
  if (paths.length === 0) return '';
  const shown = paths.slice(0, MAX_LISTED).map((file) => `  ${file}`);
  if (paths.length > MAX_LISTED) shown.push(`  … and ${paths.length - MAX_LISTED} more`);
  return `${title} (${paths.length}):\n${shown.join('\n')}`;
}

function fileCount(outcome: RollbackOutcome): string {
  const count = outcome.restored.length + outcome.removed.length;
  return `${count} file${count === 1 ? '' : 's'}`;
}
