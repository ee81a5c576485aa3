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
  /** `refs/heads/…` HEAD points at (a branch with no commit yet included), or null when detached. */
  branch: string | null;
  head: string | null;
  /** Every branch, by full name, with its commit. */
  branches: ReadonlyMap<string, string>;
  index: Buffer | null;
}

export async function captureUserGitState(repository: Repository): Promise<UserGitState> {
  const root = repository.root;
  const branch = (await gitText(root, ['symbolic-ref', '--quiet', 'HEAD'], { mayFindNothing: true })).trim() || null;
  let head: string | null = null;
  const branches = new Map<string, string>();
  // One listing for HEAD's commit and every branch's (none at all before the first commit).
  for (const line of (await gitText(root, ['show-ref', '--head', '--heads'], { mayFindNothing: true })).split('\n')) {
    const [commit, name] = line.split(' ');
    if (name === 'HEAD') head = commit!;
    else if (name) branches.set(name, commit!);
  }
  let index: Buffer | null = null;
  try {
    index = fs.readFileSync(repository.indexFile);
  } catch {
    // no index yet
  }
  return { branch, head, branches, index };
}

export interface GuardReport {
  /** Files the critic changed, now back to the actor's version. */
  revertedFiles: string[];
  /** HEAD, branch or index changes that were undone, in words. */
  revertedGitState: string[];
}

const short = (commit: string) => commit.slice(0, 12);
const branchName = (ref: string) => ref.replace(/^refs\/heads\//, '');

/**
 * Puts back what the critic or the checks (`whom`) changed since `before`: HEAD (on its
 * branch, detached, or on a branch with no commit yet), the branch it was on and the
 * one it is on now, the index, and the files (to the actor's version). Other branches
 * are left alone: while candidates run in worktrees, the user may be committing to
 * them. Each ref moves only from where it was found (compare-and-swap).
 */
export async function revertChangesSince(
  repository: Repository,
  before: UserGitState,
  afterThem: Snapshot,
  actorVersion: Snapshot,
  whom: 'the critic' | 'the checks',
): Promise<GuardReport> {
  const revertedGitState: string[] = [];
  const now = await captureUserGitState(repository);
  const root = repository.root;
  const message = `codeloops: undo ${whom}`;
  if (before.branch !== null && now.branch !== before.branch) {
    await gitBytes(root, ['symbolic-ref', '-m', message, 'HEAD', before.branch]);
    revertedGitState.push(`switched back to ${branchName(before.branch)}`);
  }
  if (before.branch === null && before.head !== null && (now.branch !== null || now.head !== before.head)) {
    await gitBytes(root, ['update-ref', '--no-deref', '-m', message, 'HEAD', before.head]);
    revertedGitState.push(`put HEAD back at ${short(before.head)}, detached`);
  }
  // HEAD's branch before and the one it is on now: a branch of their own they made and switched to included.
  for (const ref of new Set([before.branch, now.branch])) {
    if (ref === null) continue;
    const was = before.branches.get(ref);
    const is = now.branches.get(ref);
    if (was === is) continue;
    if (was === undefined) {
      await gitBytes(root, ['update-ref', '-d', '-m', message, ref, is!]);
      revertedGitState.push(`deleted the branch ${branchName(ref)} ${whom} made (it was at ${short(is!)})`);
    } else {
      // An absent ref is compared as the null id: it must still not exist.
      await gitBytes(root, ['update-ref', '-m', message, ref, was, is ?? '0'.repeat(was.length)]);
      revertedGitState.push(
        is === undefined
          ? `restored the branch ${branchName(ref)} ${whom} deleted (at ${short(was)})`
          : `moved ${branchName(ref)} back to ${short(was)} (the commit ${short(is)} ${whom} made is kept in its reflog)`,
      );
    }
  }
  if (before.index === null && now.index !== null) {
    fs.rmSync(repository.indexFile, { force: true });
    revertedGitState.push(`removed the index ${whom} made`);
  } else if (before.index !== null && (now.index === null || !before.index.equals(now.index))) {
    const temporary = `${repository.indexFile}.codeloops-${process.pid}`;
    fs.writeFileSync(temporary, before.index);
    fs.renameSync(temporary, repository.indexFile);
    revertedGitState.push('restored the index');
  }
  let revertedFiles: string[] = [];
  if (afterThem.tree !== actorVersion.tree) {
    const restored = await restoreChangedPaths(repository, afterThem.commit, actorVersion.commit);
    revertedFiles = [...restored.restored, ...restored.removed].sort();
  }
  return { revertedFiles, revertedGitState };
}
