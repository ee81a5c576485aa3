import fs from 'node:fs';
import { gitBytes, gitText } from '../git/gitProcess.js';
import type { Repository } from '../git/repository.js';
import { restoreChangedPaths } from '../git/restore.js';
import type { Snapshot } from '../git/snapshots.js';

/**
 * The critic reviews and the checks judge; neither changes anything. Claude Code's
 * critic may still run shell commands (to run the tests), and a check may write
 * files, so whatever changed is put back: files to the actor's version, and HEAD,
 * the branch and the index to what they were before.
 */

export interface UserGitState {
  /** `refs/heads/…` HEAD points at, or null when detached. */
  branch: string | null;
  head: string | null;
  index: Buffer | null;
}

export async function captureUserGitState(repository: Repository): Promise<UserGitState> {
  const root = repository.root;
  const branch = (await gitText(root, ['symbolic-ref', '--quiet', 'HEAD'], { mayFindNothing: true })).trim() || null;
  const head = (await gitText(root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { mayFindNothing: true })).trim() || null;
  let index: Buffer | null = null;
  try {
    index = fs.readFileSync(repository.indexFile);
  } catch {
    // no index yet
  }
  return { branch, head, index };
}

export interface GuardReport {
  /** Files the critic changed, now back to the actor's version. */
  revertedFiles: string[];
  /** HEAD, branch or index changes that were undone, in words. */
  revertedGitState: string[];
}

export async function revertChangesSince(repository: Repository, before: UserGitState, afterCritic: Snapshot, actorVersion: Snapshot): Promise<GuardReport> {
  const revertedGitState: string[] = [];
  const now = await captureUserGitState(repository);
  const root = repository.root;
  if (now.branch !== before.branch && before.branch) {
    await gitBytes(root, ['symbolic-ref', '-m', 'codeloops: undo the critic', 'HEAD', before.branch]);
    revertedGitState.push(`switched back to ${before.branch.replace(/^refs\/heads\//, '')}`);
  }
  if (before.branch && before.head && now.head !== before.head) {
    // Compare-and-swap: only if the branch is still where the critic left it.
    const current = (await gitText(root, ['rev-parse', '--verify', '--quiet', `${before.branch}^{commit}`], { mayFindNothing: true })).trim();
    if (current && current !== before.head) {
      await gitBytes(root, ['update-ref', '-m', 'codeloops: undo the critic', before.branch, before.head, current]);
      revertedGitState.push(
        `moved ${before.branch.replace(/^refs\/heads\//, '')} back to ${before.head.slice(0, 12)} (the critic's commit ${current.slice(0, 12)} is kept in the reflog)`,
      );
    }
  }
  if (before.index && now.index && !before.index.equals(now.index)) {
    const temporary = `${repository.indexFile}.codeloops-${process.pid}`;
    fs.writeFileSync(temporary, before.index);
    fs.renameSync(temporary, repository.indexFile);
    revertedGitState.push('restored the index');
  }
  let revertedFiles: string[] = [];
  if (afterCritic.tree !== actorVersion.tree) {
    const restored = await restoreChangedPaths(repository, afterCritic.commit, actorVersion.commit);
    revertedFiles = [...restored.restored, ...restored.removed].sort();
  }
  return { revertedFiles, revertedGitState };
}
