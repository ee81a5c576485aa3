import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { sessionHeadRef, snapshotRef, takeSnapshot } from '../../src/git/snapshots.js';
import type { ReviewTarget } from '../../src/review/reviewTarget.js';
import { tempDir } from './testEnvironment.js';

/**
 * A file of `count` numbered lines (`line 1`, `line 2`, …), with the lines in `change`
 * replaced: the text a hunk test edits, so each hunk is easy to place by its line.
 */
export const numberedLines = (count: number, change: Record<number, string> = {}, eol = '\n') =>
  Array.from({ length: count }, (_, index) => change[index + 1] ?? `line ${index + 1}`).join(eol) + eol;

/**
 * An iteration as the loop records it, without running a loop: a snapshot before, the
 * actor's edits, a snapshot after, under the session's refs. What the review actions
 * (reject, undo, stage, comment) then act on.
 */
export async function iterationOf(repo: string, actor: () => void, sessionId = '2026-01-01T00-00-00Z_abcdef', iteration = 1): Promise<ReviewTarget> {
  const repository = await openRepository(repo);
  await takeSnapshot(repository, 'pre', [snapshotRef(sessionId, iteration, 'pre'), sessionHeadRef(sessionId)]);
  actor();
  await takeSnapshot(repository, 'post', [snapshotRef(sessionId, iteration, 'post'), sessionHeadRef(sessionId)]);
  return { sessionId, workingDir: repo, sidecarDir: path.join(tempDir('codeloops-sidecar-'), sessionId) };
}
