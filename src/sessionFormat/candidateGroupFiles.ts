import path from 'node:path';
import { dataHome, fileTimestamp, promptHash, sidecarsDir, type Environment } from './sessionFiles.js';

/** Where candidate groups live on disk: their records, their worktrees, their refs (see `candidateGroups.ts`). */

/** `group-2025-01-27T15-30-45Z_a3f2c1`: never a session's id, and sorted by time like them. */
export function groupIdFor(date: Date, prompt: string): string {
  return `group-${fileTimestamp(date)}_${promptHash(prompt)}`;
}

/** `sidecars/_groups`: every group's record folder. */
export function groupsDir(env: Environment = process.env): string {
  return path.join(sidecarsDir(env), '_groups');
}

export const GROUP_RECORD_FILE = 'group.jsonl';

/** `$XDG_DATA_HOME/codeloops/worktrees`: the candidates' worktrees, outside every repository. */
export function worktreesDir(env: Environment = process.env): string {
  return path.join(dataHome(env), 'codeloops', 'worktrees');
}

/** `refs/codeloops/<group>/base`: the user's tree the candidates started from. */
export function groupBaseRef(groupId: string): string {
  return `refs/codeloops/${groupId}/base`;
}
