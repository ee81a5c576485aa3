import type { RollbackOutcome } from '../sessionFormat/rollbackOutcome.js';
import { sanitizeForTerminal } from '../text/terminalText.js';

/** What `rollback` and `apply` (and their undos) say of the paths they moved, or could not. */

type MovedPaths = Pick<RollbackOutcome, 'conflicts' | 'restored' | 'added' | 'removed' | 'blocked'> & { result: string };

/** A move's paths, one a line with a mark as git shows them: written anew (A), over a file (M), removed (D); or its conflicts (!). */
export function movedPathLines(outcome: MovedPaths): string[] {
  const line = (mark: string) => (file: string) => `  ${mark} ${sanitizeForTerminal(file)}`;
  if (outcome.result === 'conflict') return outcome.conflicts.map(line('!'));
  return [
    ...outcome.restored.filter((file) => !outcome.added.includes(file)).map(line('M')),
    ...outcome.added.map(line('A')),
    ...outcome.removed.map(line('D')),
  ];
}

/** What to do about a conflict, in the command's own words (the engine's message names no flags): overwrite, or move away what no snapshot holds. */
export function conflictHints(outcome: MovedPaths, undoCommand: string): string[] {
  if (outcome.result !== 'conflict') return [];
  const overwritable = outcome.conflicts.filter((file) => !outcome.blocked.includes(file));
  const hints: string[] = [];
  if (overwritable.length > 0) hints.push(`Run again with --force to overwrite your changes (they stay recoverable with: ${undoCommand}).`);
  if (outcome.blocked.length > 0) hints.push('--force never removes what no snapshot holds: move those paths away first.');
  return hints;
}
