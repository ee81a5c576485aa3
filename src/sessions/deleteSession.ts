import fs from 'node:fs';
import path from 'node:path';
import { describeNonFile } from '../files/regularFile.js';
import { openRepository } from '../git/repository.js';
import { deleteSessionRefs } from '../git/snapshots.js';
import { GROUP_RECORD_FILE, groupsDir } from '../sessionFormat/candidateGroupFiles.js';
import { groupRecordLineSchema, isGroupId } from '../sessionFormat/candidateGroups.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { isLoopRunning } from './loopLiveness.js';
import { readJsonlRecords } from './sidecarReader.js';
import type { SessionStore } from './sessionStore.js';

export interface DeletedSession {
  session_id: string;
  /** Snapshot refs removed from the session's repository. */
  snapshot_refs: number;
  /** Why the snapshots stayed, when they could not be removed (the repository is gone, say). */
  warnings: string[];
}

/**
 * Deletes a session: its file, its sidecar record and its snapshots in its
 * repository. The user's files, index, HEAD and branches are not touched. A session
 * whose loop is running is refused (code `loop_running`): its runner would go on
 * writing a file that is gone.
 */
export async function deleteSession(
  store: SessionStore,
  sessionId: string,
  sidecarDir: string,
  groupsDirectory: string = groupsDir(),
): Promise<DeletedSession> {
  const summary = await store.summary(sessionId);
  if (summary && summary.outcome === null && isLoopRunning(summary)) {
    throw new CodeloopsError('loop_running', `Session ${sessionId} is running: interrupt its loop before deleting it.`, { session_id: sessionId });
  }
  const file = store.filePathOf(sessionId);
  const stats = fs.lstatSync(file, { throwIfNoEntry: false });
  if (!summary && !stats) throw new CodeloopsError('session_not_found', `No session "${sessionId}" in ${store.directory}.`, { id: sessionId });
  // A folder, a FIFO or a device named like a session is not one: it is not ours to remove. (A link is removed, never what it leads to.)
  if (stats && !stats.isFile() && !stats.isSymbolicLink()) {
    throw new CodeloopsError('not_a_session', `${file} ${describeNonFile(stats)}: it is not a session, and is left as it is.`, { file });
  }
  // A candidate's worktree is removed once the group is done with it, but its snapshots live on in the repository it was made from.
  const repositoryDir =
    summary?.working_dir && !fs.existsSync(summary.working_dir) ? await candidateRepositoryOf(store, sessionId, groupsDirectory) : undefined;
  fs.rmSync(file, { force: true });
  fs.rmSync(sidecarDir, { recursive: true, force: true });
  const warnings: string[] = [];
  let snapshotRefs = 0;
  const workingDir = repositoryDir ?? summary?.working_dir;
  if (workingDir && fs.existsSync(workingDir)) {
    try {
      snapshotRefs = await deleteSessionRefs(await openRepository(workingDir), sessionId);
    } catch (error) {
      warnings.push(`its snapshots in ${workingDir} could not be removed: ${(error as Error).message}`);
    }
  } else if (workingDir) {
    warnings.push(`its repository ${workingDir} is gone, so there were no snapshots to remove`);
  }
  return { session_id: sessionId, snapshot_refs: snapshotRefs, warnings };
}

/** The user's repository a candidate's worktree was made from, as its group's record says; undefined for other sessions. */
async function candidateRepositoryOf(store: SessionStore, sessionId: string, groupsDirectory: string): Promise<string | undefined> {
  try {
    const groupId = (await store.startLine(sessionId)).candidate_group;
    // The id comes from a file: it names a folder under the groups' folder, or nothing.
    if (!groupId || !isGroupId(groupId)) return undefined;
    const lines = await readJsonlRecords(
      path.join(groupsDirectory, groupId, GROUP_RECORD_FILE),
      groupRecordLineSchema,
      () => {},
      (line) => line,
    );
    const started = lines.find((line) => line.type === 'group_started');
    return started?.type === 'group_started' ? started.repository : undefined;
  } catch {
    return undefined;
  }
}
