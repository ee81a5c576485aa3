/**
 * What the runner does after each iteration in a repository of 50,000 files: snapshot
 * the working tree, diff it against the snapshot taken before the agent ran, and write
 * the session line; against the bare git commands that do the same.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { openRepository, type Repository } from '../../src/git/repository.js';
import { snapshotRef, takeSnapshot } from '../../src/git/snapshots.js';
import { diffSnapshots } from '../../src/git/treeDiff.js';
import { SessionWriter } from '../../src/sessionWriter/sessionWriter.js';
import { median, runBenchmark, scratch } from './benchmark.js';
import { deleteRefs, generatedRepository, gitEnv } from './fixtures.js';

const FILES = 50_000;

/** The repository (its path, a git runner in it, the runner's view of it), the agent's work in it, and where sessions are written. */
interface Fixture {
  repo: string;
  git: (...args: string[]) => string;
  repository: Repository;
  agentEdits: () => void;
  sessions: string;
}

/** One iteration's worth of agent work, different each call: 100 files edited, 10 created, 5 deleted. */
function agentWork(repo: string): () => void {
  let round = 0;
  return () => {
    round += 1;
    for (let i = 0; i < 100; i++) fs.appendFileSync(path.join(repo, `src/module${i}/file${i * 500}.ts`), `// round ${round}\n`);
    for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(repo, `new-${round}-${i}.ts`), `new ${i}\n`);
    for (let i = 0; i < 5; i++) fs.rmSync(path.join(repo, `src/module${199 - i}/file${(199 - i) * 500 + round}.ts`), { force: true });
  };
}

/** Ours: the runner's own snapshot, diff and session writer; the time from the agent's edits to the line written. */
async function oursOnce({ repo, repository, agentEdits, sessions }: Fixture, n: number): Promise<number> {
  const pre = await takeSnapshot(repository, 'bench pre', snapshotRef('bench', n, 'pre'));
  agentEdits();
  const started = performance.now();
  const post = await takeSnapshot(repository, 'bench post', snapshotRef('bench', n, 'post'));
  const diff = await diffSnapshots(repository, pre.commit, post.commit);
  const writer = SessionWriter.create(
    sessions,
    { prompt: `bench ${n}`, working_dir: repo, actor_agent: 'x', critic_agent: 'x', actor_model: null, critic_model: null, max_iterations: null },
    new Date(),
  );
  writer.writeIteration({
    iteration_number: 1,
    actor_output: '',
    actor_stderr: '',
    actor_exit_code: 0,
    actor_duration_secs: 0,
    git_diff: diff.diff,
    git_files_changed: diff.filesChanged,
    critic_decision: 'DONE',
    feedback: null,
    git_insertions: diff.insertions,
    git_deletions: diff.deletions,
  });
  writer.close();
  return performance.now() - started;
}

/** The baseline: the same with bare git commands (a temporary index, add, write-tree, commit-tree, update-ref; the three diffs). */
function bareOnce({ repo, git, agentEdits }: Fixture, n: number): number {
  const snapshot = (label: string) => {
    const index = path.join(repo, '.git', `bench-index-${label}`);
    fs.copyFileSync(path.join(repo, '.git', 'index'), index);
    const env = { ...gitEnv, GIT_INDEX_FILE: index };
    execFileSync('git', ['add', '--all'], { cwd: repo, env });
    const tree = execFileSync('git', ['write-tree'], { cwd: repo, env, encoding: 'utf8' }).trim();
    const commit = execFileSync('git', ['commit-tree', tree, '-p', 'HEAD', '-m', label], { cwd: repo, env, encoding: 'utf8' }).trim();
    execFileSync('git', ['update-ref', `refs/bench-bare/${n}/${label}`, commit], { cwd: repo, env });
    fs.rmSync(index);
    return commit;
  };
  const pre = snapshot('pre');
  agentEdits();
  const started = performance.now();
  const post = snapshot('post');
  git('diff', '--name-status', '-z', '-M', pre, post);
  git('diff', '--numstat', '-z', '-M', pre, post);
  git('diff', '-M', pre, post);
  return performance.now() - started;
}

runBenchmark(async () => {
  const repo = path.join(scratch('snapshot'), 'repo');
  const fixture: Fixture = {
    repo,
    git: generatedRepository(repo, FILES),
    repository: await openRepository(repo),
    agentEdits: agentWork(repo),
    sessions: path.join(scratch('snapshot'), 'sessions'),
  };
  // Alternate, after a warm-up of each, and take medians.
  await oursOnce(fixture, 0);
  bareOnce(fixture, 0);
  const ours: number[] = [];
  const bare: number[] = [];
  for (let n = 1; n <= 5; n++) {
    ours.push(await oursOnce(fixture, n));
    bare.push(bareOnce(fixture, n));
  }
  deleteRefs(repo, 'refs/codeloops/bench/', 'refs/bench-bare/');
  const ratio = median(ours) / median(bare);
  return {
    name: `post-iteration snapshot + diff + session write, ${FILES.toLocaleString('en-US')} files`,
    ours: `${median(ours).toFixed(0)} ms`,
    baseline: `bare git commands ${median(bare).toFixed(0)} ms`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 1.5× the bare commands',
    met: ratio <= 1.5,
  };
});
