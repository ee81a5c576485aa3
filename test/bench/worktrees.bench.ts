/**
 * What a candidate group does before its loops start, in a repository of 50,000 files
 * with a user's uncommitted edits and untracked files: one snapshot of the tree, then a
 * worktree of it per candidate (4); against 4 bare `git worktree add` of HEAD. And the
 * disk a worktree takes: its checked-out files, with the objects shared, not copied.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openRepository, type Repository } from '../../src/git/repository.js';
import { takeSnapshot } from '../../src/git/snapshots.js';
import { addWorktree, removeWorktree } from '../../src/git/worktrees.js';
import { median, runBenchmark, scratch } from './benchmark.js';
import { deleteRefs, generatedRepository } from './fixtures.js';

const FILES = 50_000;
const CANDIDATES = 4;

/** Kilobytes a folder takes on disk (du), optionally leaving out its `.git`. */
function diskKb(folder: string, withoutGit = false): number {
  return Number(execFileSync('du', ['-sk', ...(withoutGit ? ['--exclude=.git'] : []), folder], { encoding: 'utf8' }).split('\t')[0]);
}

/** Removes every worktree but the repository's own, and their folders. */
async function removeWorktrees(repository: Repository, git: (...args: string[]) => string, folders: string): Promise<void> {
  for (const line of git('worktree', 'list', '--porcelain').split('\n')) {
    const worktree = line.startsWith('worktree ') ? line.slice('worktree '.length) : '';
    if (worktree && worktree !== repository.root) await removeWorktree(repository, worktree);
  }
  fs.rmSync(folders, { recursive: true, force: true });
}

runBenchmark(async () => {
  const root = scratch('worktrees');
  const repo = path.join(root, 'repo');
  const git = generatedRepository(repo, FILES);
  // A user mid-work: 100 uncommitted edits and 10 untracked files, which the candidates start from too.
  for (let i = 0; i < 100; i++) fs.appendFileSync(path.join(repo, `src/module${i}/file${i * 500}.ts`), '// edited, not committed\n');
  for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(repo, `untracked-${i}.ts`), `untracked ${i}\n`);
  const repository = await openRepository(repo);
  const folders = path.join(root, 'worktrees');
  const clean = () => removeWorktrees(repository, git, folders);
  // Ours: one snapshot of the user's tree, then a worktree of it per candidate.
  const oursOnce = async (n: number) => {
    const started = performance.now();
    const base = await takeSnapshot(repository, 'bench base', [`refs/codeloops/bench-group-${n}/base`]);
    for (let i = 1; i <= CANDIDATES; i++) await addWorktree(repository, path.join(folders, `ours-${n}`, String(i), 'repo'), base.commit);
    return performance.now() - started;
  };
  // The baseline: bare worktrees of HEAD.
  const bareOnce = (n: number) => {
    const started = performance.now();
    for (let i = 1; i <= CANDIDATES; i++) git('worktree', 'add', '--detach', '--quiet', path.join(folders, `bare-${n}`, String(i)), 'HEAD');
    return performance.now() - started;
  };
  await clean();
  await oursOnce(0);
  bareOnce(0);
  const objectsKb = diskKb(path.join(repo, '.git', 'objects'));
  const perWorktreeKb = diskKb(path.join(folders, 'ours-0', '1', 'repo'));
  const adminKb = diskKb(path.join(repo, '.git', 'worktrees'));
  const checkedOutKb = diskKb(repo, true);
  await clean();
  const ours: number[] = [];
  const bare: number[] = [];
  for (let n = 1; n <= 3; n++) {
    ours.push(await oursOnce(n));
    await clean();
    bare.push(bareOnce(n));
    await clean();
  }
  deleteRefs(repo, 'refs/codeloops/');
  const ratio = median(ours) / median(bare);
  const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
  const shared = perWorktreeKb <= checkedOutKb * 1.1;
  return {
    name: `creating ${CANDIDATES} candidate worktrees of a ${FILES.toLocaleString('en-US')}-file repository (from the tree with its uncommitted and untracked files)`,
    ours: `${median(ours).toFixed(0)} ms; per worktree ${mb(perWorktreeKb)} of files (its checked-out files: ${mb(checkedOutKb)}) and ${mb(adminKb / (2 * CANDIDATES))} of index; objects shared (${mb(objectsKb)}, not copied)`,
    baseline: `${CANDIDATES} bare \`git worktree add\` of HEAD: ${median(bare).toFixed(0)} ms`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 1.5×; disk per worktree ≈ its files',
    met: ratio <= 1.5 && shared,
  };
});
