import path from 'node:path';
import { applyCandidate } from '../candidates/applyCandidate.js';
import type { ApplyOutcome, ApplyResultKind } from '../sessionFormat/applyOutcome.js';
import { groupsDir } from '../sessionFormat/candidateGroupFiles.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { conflictHints, movedPathLines } from './moveOutcomeText.js';
import { openStore } from './openStore.js';
import { colorEnabled, paint } from './terminal.js';
import { printAnswer } from './answers.js';

/** Exit codes of `codeloops apply`, one per result (as `rollback`'s). */
export const APPLY_EXIT_CODES: Readonly<Record<ApplyResultKind, number>> = {
  applied: 0,
  apply_undone: 0,
  nothing_to_apply: 3,
  conflict: 4,
  snapshot_missing: 5,
};

export interface ApplyOptions {
  keep?: boolean;
  force?: boolean;
  dryRun?: boolean;
  json?: boolean;
  undo?: boolean;
  workingDir?: string;
}

/** `codeloops apply <session>`: its changes into the user's tree; `--undo` takes them back out. */
export async function applyCommand(idOrPrefix: string, options: ApplyOptions): Promise<number> {
  const store = openStore();
  const sessionId = await store.resolveId(idOrPrefix);
  const outcome = await applyCandidate({
    sessionId,
    store,
    groupsDirectory: groupsDir(),
    sidecarDirOf: (id) => sidecarDirOf(id),
    targetDir: options.workingDir ? path.resolve(options.workingDir) : undefined,
    force: Boolean(options.force),
    dryRun: options.dryRun,
    keep: options.keep,
    undo: options.undo,
  });
  if (options.json) printAnswer('apply', outcome);
  else printApplyOutcome(outcome);
  return APPLY_EXIT_CODES[outcome.result];
}

function printApplyOutcome(outcome: ApplyOutcome): void {
  const color = colorEnabled(process.stdout);
  const good = outcome.result === 'applied' || outcome.result === 'apply_undone';
  const lines = [
    paint(sanitizeForTerminal(outcome.message), good ? 'success' : outcome.result === 'nothing_to_apply' ? 'info' : 'error', color),
    ...movedPathLines(outcome),
  ];
  if (outcome.worktrees_removed.length > 0) lines.push(`Removed the group's worktrees (${outcome.worktrees_removed.join(', ')}); --keep keeps them.`);
  for (const kept of outcome.worktrees_kept) lines.push(paint(`kept the worktree of ${kept.label}: ${sanitizeForTerminal(kept.reason)}`, 'warning', color));
  for (const warning of outcome.warnings) lines.push(paint(`warning: ${sanitizeForTerminal(warning)}`, 'warning', color));
  if (!outcome.dry_run && outcome.result === 'applied') lines.push(`Undo it with: codeloops apply --undo ${outcome.session_id}`);
  lines.push(...conflictHints(outcome, `codeloops apply --undo ${outcome.session_id}`));
  process.stdout.write(lines.join('\n') + '\n');
}
