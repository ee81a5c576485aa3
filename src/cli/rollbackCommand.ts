import { rollBack, undoRollback } from '../rollback/rollback.js';
import type { RollbackOutcome, RollbackResultKind } from '../sessionFormat/rollbackOutcome.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { conflictHints, movedPathLines } from './moveOutcomeText.js';
import { openStore } from './openStore.js';
import { colorEnabled, paint } from './terminal.js';
import { UsageError } from './usageError.js';
import { printAnswer } from './answers.js';

/** Exit codes of `codeloops rollback`, one per result. */
export const ROLLBACK_EXIT_CODES: Readonly<Record<RollbackResultKind, number>> = {
  rolled_back: 0,
  undone: 0,
  nothing_to_roll_back: 3,
  conflict: 4,
  snapshot_missing: 5,
};

export interface RollbackOptions {
  iteration?: number;
  undo?: boolean;
  force?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

/**
 * `codeloops rollback <session> [--iteration N] [--force]` and `codeloops rollback
 * --undo <session>`: one result, said in words (or as JSON), with an exit code per
 * result.
 */
export async function rollbackCommand(idOrPrefix: string, options: RollbackOptions): Promise<number> {
  if (options.undo && options.iteration !== undefined) throw new UsageError('--undo takes no --iteration: it undoes the last rollback.');
  const store = openStore();
  const sessionId = await store.resolveId(idOrPrefix);
  const start = await store.startLine(sessionId);
  const carriedOnAfter = start.resumed_after_iteration;
  if (!options.undo && options.iteration !== undefined && start.resumed_from && carriedOnAfter !== undefined && options.iteration <= carriedOnAfter) {
    throw new UsageError(
      `Iteration ${options.iteration} belongs to the session this one carries on: roll back ${start.resumed_from} instead (codeloops rollback ${start.resumed_from} --iteration ${options.iteration}).`,
    );
  }
  const request = {
    sessionId,
    workingDir: start.working_dir,
    sidecarDir: sidecarDirOf(sessionId),
    force: Boolean(options.force),
    dryRun: Boolean(options.dryRun),
  };
  const outcome = options.undo ? await undoRollback(request) : await rollBack({ ...request, iteration: options.iteration });
  if (options.json) printAnswer('rollback', outcome);
  else printOutcome(outcome);
  return ROLLBACK_EXIT_CODES[outcome.result];
}

function printOutcome(outcome: RollbackOutcome): void {
  const color = colorEnabled(process.stdout);
  const tone = outcome.result === 'rolled_back' || outcome.result === 'undone' ? 'success' : outcome.result === 'nothing_to_roll_back' ? 'info' : 'error';
  const lines = [paint(sanitizeForTerminal(outcome.message), tone, color), ...movedPathLines(outcome)];
  for (const warning of outcome.warnings) lines.push(paint(`warning: ${sanitizeForTerminal(warning)}`, 'warning', color));
  const hint = nextStep(outcome);
  if (hint) lines.push(hint);
  process.stdout.write(lines.join('\n') + '\n');
}

/** What to type next, in this command's own words (the engine's message names no flags). */
function nextStep(outcome: RollbackOutcome): string | undefined {
  if (outcome.dry_run) return undefined;
  const undo = `codeloops rollback --undo ${outcome.session_id}`;
  if (outcome.result === 'rolled_back') return `Undo it with: ${undo}`;
  if (outcome.result !== 'conflict') return undefined;
  return conflictHints(outcome, undo).join(' ');
}
