/**
 * `npm run bench`: each benchmark runs in its own process (clean memory figures)
 * and prints its result as a ratio against a baseline measured in the same run.
 *
 *   node out/test/bench/runBenchmarks.js            all benchmarks
 *   node out/test/bench/runBenchmarks.js list       one of them (list | snapshot | stream | viewer | api | activation | size | decision | processes | checks | checkOutput | slowClient | slowClients | bigLine | worktrees | bundleImport)
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type { ClientRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { runCheck } from '../../src/checks/runCheck.js';
import { openRepository } from '../../src/git/repository.js';
import { importBundle } from '../../src/sessionBundle/sessionBundles.js';
import { failureReportOf } from '../../src/sessionFormat/failures.js';
import { snapshotRef, takeSnapshot } from '../../src/git/snapshots.js';
import { addWorktree, removeWorktree } from '../../src/git/worktrees.js';
import { diffSnapshots } from '../../src/git/treeDiff.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { summaryIndexPath } from '../../src/sessions/summaryIndex.js';
import { SessionWriter } from '../../src/sessionWriter/sessionWriter.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { SCRIPTED_AGENT, type AgentScript } from '../support/scriptedAgent.js';
import { runScriptedLoop } from '../support/scriptedLoop.js';

interface BenchResult {
  name: string;
  ours: string;
  baseline: string;
  ratio: number;
  /** What the ratio means, e.g. "7.8× faster". */
  ratioText: string;
  goal: string;
  met: boolean;
  notes?: string;
}

const BENCHMARKS: Record<string, () => Promise<BenchResult>> = {
  list: benchList,
  snapshot: benchSnapshot,
  stream: benchStream,
  viewer: benchViewer,
  api: benchApi,
  activation: benchActivation,
  size: benchSize,
  decision: benchDecision,
  processes: benchProcesses,
  checks: benchChecks,
  checkOutput: benchCheckOutput,
  slowClient: benchSlowClient,
  slowClients: benchSlowClients,
  bigLine: benchBigLine,
  worktrees: benchWorktrees,
  bundleImport: benchBundleImport,
};

function scratch(name: string): string {
  const dir = path.join(os.tmpdir(), `codeloops-bench-${name}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** Samples the process's memory while `work` runs; returns the peak resident set in MB. */
async function peakMemoryDuring<T>(work: () => Promise<T>, read: () => number = () => process.memoryUsage().rss): Promise<{ result: T; peakMb: number }> {
  let peak = read();
  const timer = setInterval(() => (peak = Math.max(peak, read())), 10);
  try {
    const result = await work();
    peak = Math.max(peak, read());
    return { result, peakMb: peak / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

async function time<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

// ── sessions list over 10,000 sessions, as a whole process ──────────────────────

const LIST_SESSIONS = 10_000;

/**
 * 10,000 sessions in a data home of their own, made once and kept between runs
 * (shared by `list` and `api`). With `bigLines`, 1 % of them carry a 2 MB iteration
 * line: most finished, in the middle of the file; one in ten still running, so the
 * big line is the last one. The files are dated a minute back, as sessions at rest are.
 */
function listFixture(bigLines = true): { dataHome: string; dir: string } {
  const dataHome = path.join(scratch(bigLines ? 'list' : 'list-small'), 'data');
  const dir = path.join(dataHome, 'codeloops', 'sessions');
  if (!fs.existsSync(dir) || fs.readdirSync(dir).length !== LIST_SESSIONS) {
    fs.rmSync(dataHome, { recursive: true, force: true });
    const big = 'x'.repeat(2 * 1024 * 1024);
    const aMinuteAgo = new Date(Date.now() - 60_000);
    for (let i = 0; i < LIST_SESSIONS; i++) {
      const timestamp = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const lines = [
        startLine({ timestamp, prompt: `Task number ${i}: make the thing ${i % 7 === 0 ? 'faster 🚀' : 'better'}`, working_dir: `/work/project-${i % 20}` }),
      ];
      const iterations = 1 + (i % 4);
      for (let n = 1; n <= iterations; n++) {
        const bigLine = bigLines && (i % 100 === 1 || i % 1000 === 0) && n === 1;
        lines.push(iterationLine(n, bigLine ? { actor_output: big, git_diff: big } : {}));
      }
      if (i % 10 !== 0) lines.push(endLine({ iterations, outcome: i % 3 === 0 ? 'failed' : 'success' }));
      const id = writeSession(dir, lines);
      fs.utimesSync(path.join(dir, `${id}.jsonl`), aMinuteAgo, aMinuteAgo);
    }
  }
  return { dataHome, dir };
}

/**
 * Starts the program from a small Node process, as a shell would, and returns its wall
 * time (start-up included) and stdout. Not spawned from here: forking copies the
 * forking process's page tables, and this benchmark's own heap (hundreds of MB after
 * making a fixture) added tens of milliseconds to every start it measured.
 */
const STOPWATCH_SCRIPT = `
const { spawnSync } = require('child_process');
const args = JSON.parse(process.argv[1]);
const started = performance.now();
const child = spawnSync(process.execPath, args, { maxBuffer: 1 << 30 });
const ms = performance.now() - started; // the output decoded after, not timed: a shell would not decode it either
if (child.status !== 0) { process.stderr.write(child.stderr); process.exit(1); }
process.stdout.write(JSON.stringify({ ms, stdout: child.stdout.toString('utf8') }));
`;

function timedProcess(args: string[], env: NodeJS.ProcessEnv = process.env): { ms: number; stdout: string } {
  const stopwatch = spawnSync(process.execPath, ['-e', STOPWATCH_SCRIPT, JSON.stringify(args)], { env, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (stopwatch.status !== 0) throw new Error(`${args.join(' ')} failed: ${stopwatch.stderr}`);
  return JSON.parse(stopwatch.stdout) as { ms: number; stdout: string };
}

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
}

/** What a reader without an index or the first/last-line trick does: parse every file whole. */
const FULL_PARSE_SCRIPT = `
const fs = require('fs'), path = require('path');
const dir = process.argv[1];
const summaries = fs.readdirSync(dir).map((name) => {
  const lines = fs.readFileSync(path.join(dir, name), 'utf8').split('\\n').filter(Boolean).map((line) => JSON.parse(line));
  return { id: name, start: lines[0].prompt, last: lines.at(-1).type };
});
process.stdout.write(JSON.stringify(summaries));
`;

async function benchList(): Promise<BenchResult> {
  const cli = path.join(process.cwd(), 'dist', 'cli.js');
  const list = (fixture: { dataHome: string; dir: string }) =>
    timedProcess([cli, 'sessions', 'list', '--json'], { ...process.env, XDG_DATA_HOME: fixture.dataHome });
  const withBig = listFixture(true);
  const small = listFixture(false);
  for (const fixture of [withBig, small]) fs.rmSync(summaryIndexPath(fixture.dir), { force: true });
  const cold = list(withBig); // reads every file's first and last lines, and writes the index
  assertEqual((JSON.parse(cold.stdout) as unknown[]).length, LIST_SESSIONS, 'every session listed');
  list(small);
  // Taken in turns, so that the machine's speed drifting over these seconds moves both figures alike.
  const runs = { warm: [] as number[], warmSmall: [] as number[], baseline: [] as number[] };
  for (let round = 0; round < 7; round++) {
    runs.warm.push(list(withBig).ms);
    runs.warmSmall.push(list(small).ms);
    runs.baseline.push(timedProcess(['-e', FULL_PARSE_SCRIPT, withBig.dir]).ms);
  }
  const [warm, warmSmall, baseline] = [median(runs.warm), median(runs.warmSmall), median(runs.baseline)];
  const ratio = warm / baseline;
  return {
    name: `\`codeloops sessions list --json\` as a whole process, ${LIST_SESSIONS.toLocaleString('en-US')} sessions (1 % with 4 MB lines)`,
    ours: `${warm.toFixed(0)} ms warm (${warmSmall.toFixed(0)} ms when no session is big); ${cold.ms.toFixed(0)} ms the first time, building the index`,
    baseline: `a process parsing every file: ${baseline.toFixed(0)} ms`,
    ratio,
    // Three places: the goal sits at the second.
    ratioText: `${ratio.toFixed(3)}× the time`,
    goal: '≤ 300 ms warm, ≤ 0.15×, independent of session size',
    met: warm <= 300 && ratio <= 0.15 && Math.abs(warm - warmSmall) / warmSmall < 0.25,
  };
}

// ── snapshot + diff + session write on 50,000 files ─────────────────────────────

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };

/**
 * A repository of `files` small files in folders of 500, committed and packed, made once
 * and kept in the scratch folder (built aside and moved in whole, so a run stopped halfway
 * leaves nothing half made); returns a git runner in it. Automatic gc is off: none may
 * start in the background in the middle of a measurement.
 */
function generatedRepository(repo: string, files: number): (...args: string[]) => string {
  const gitIn = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, env: gitEnv, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (!fs.existsSync(path.join(repo, '.git'))) {
    const building = `${repo}.building`;
    fs.rmSync(building, { recursive: true, force: true });
    fs.mkdirSync(building, { recursive: true });
    gitIn(building, 'init', '-q');
    gitIn(building, 'config', 'gc.auto', '0');
    for (let i = 0; i < files; i++) {
      const file = path.join(building, `src/module${Math.floor(i / 500)}/file${i}.ts`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `export const value${i} = ${i};\n`.repeat(10));
    }
    gitIn(building, 'add', '-A');
    gitIn(building, 'commit', '-q', '-m', 'generated');
    gitIn(building, 'gc', '-q');
    fs.rmSync(repo, { recursive: true, force: true });
    fs.renameSync(building, repo);
  }
  return (...args: string[]) => gitIn(repo, ...args);
}

/** Removes every ref under the prefixes (a benchmark's snapshots), so runs do not pile them up. */
function deleteRefs(repo: string, ...prefixes: string[]): void {
  const refs = execFileSync('git', ['for-each-ref', '--format=delete %(refname)', ...prefixes], { cwd: repo, encoding: 'utf8' });
  if (refs !== '') execFileSync('git', ['update-ref', '--stdin'], { cwd: repo, input: refs });
}

async function benchSnapshot(): Promise<BenchResult> {
  const repo = path.join(scratch('snapshot'), 'repo');
  const FILES = 50_000;
  const git = generatedRepository(repo, FILES);
  // One iteration's worth of agent work: 100 files edited, 10 created, 5 deleted.
  let round = 0;
  const agentEdits = () => {
    round += 1;
    for (let i = 0; i < 100; i++) fs.appendFileSync(path.join(repo, `src/module${i}/file${i * 500}.ts`), `// round ${round}\n`);
    for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(repo, `new-${round}-${i}.ts`), `new ${i}\n`);
    for (let i = 0; i < 5; i++) fs.rmSync(path.join(repo, `src/module${199 - i}/file${(199 - i) * 500 + round}.ts`), { force: true });
  };
  const repository = await openRepository(repo);
  const sessions = path.join(scratch('snapshot'), 'sessions');

  const oursOnce = async (n: number) => {
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
  };
  const bareOnce = (n: number) => {
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
  };
  // Alternate, after a warm-up of each, and take medians.
  await oursOnce(0);
  bareOnce(0);
  const ours: number[] = [];
  const bare: number[] = [];
  for (let n = 1; n <= 5; n++) {
    ours.push(await oursOnce(n));
    bare.push(bareOnce(n));
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
}

// ── a candidate group's 4 worktrees of a 50,000-file repository ─────────────────

/** Kilobytes a folder takes on disk (du), optionally leaving out its `.git`. */
function diskKb(folder: string, withoutGit = false): number {
  return Number(execFileSync('du', ['-sk', ...(withoutGit ? ['--exclude=.git'] : []), folder], { encoding: 'utf8' }).split('\t')[0]);
}

async function benchWorktrees(): Promise<BenchResult> {
  const root = scratch('worktrees');
  const repo = path.join(root, 'repo');
  const FILES = 50_000;
  const CANDIDATES = 4;
  const git = generatedRepository(repo, FILES);
  // A user mid-work: 100 uncommitted edits and 10 untracked files, which the candidates start from too.
  for (let i = 0; i < 100; i++) fs.appendFileSync(path.join(repo, `src/module${i}/file${i * 500}.ts`), '// edited, not committed\n');
  for (let i = 0; i < 10; i++) fs.writeFileSync(path.join(repo, `untracked-${i}.ts`), `untracked ${i}\n`);
  const repository = await openRepository(repo);
  const folders = path.join(root, 'worktrees');
  const clean = async () => {
    for (const line of git('worktree', 'list', '--porcelain').split('\n')) {
      const worktree = line.startsWith('worktree ') ? line.slice('worktree '.length) : '';
      if (worktree && worktree !== repository.root) await removeWorktree(repository, worktree);
    }
    fs.rmSync(folders, { recursive: true, force: true });
  };
  // What a group does before its loops start: one snapshot of the user's tree, then a worktree of it per candidate.
  const oursOnce = async (n: number) => {
    const started = performance.now();
    const base = await takeSnapshot(repository, 'bench base', [`refs/codeloops/bench-group-${n}/base`]);
    for (let i = 1; i <= CANDIDATES; i++) await addWorktree(repository, path.join(folders, `ours-${n}`, String(i), 'repo'), base.commit);
    return performance.now() - started;
  };
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
}

// ── 100 MB of agent output ──────────────────────────────────────────────────────

async function benchStream(): Promise<BenchResult> {
  const BYTES = 100 * 1024 * 1024;
  const repo = path.join(scratch('stream'), 'repo');
  fs.rmSync(repo, { recursive: true, force: true });
  fs.mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const script = {
    actor: [[{ print: 'start' }, { flood: BYTES }, { print: 'end' }]],
    critic: [[{ print: '<decision>{"type":"done","summary":"ok","confidence":1}</decision>' }]],
  };
  const before = process.memoryUsage().rss / 1024 / 1024;
  // The whole runner: the actor's events go to the sidecar record and its raw
  // stdout to disk, the transcript into the session line, the critic runs after.
  const ours = await peakMemoryDuring(() => time(() => runScriptedLoop(repo, script as AgentScript, { maxIterations: 1, keepEvents: false })));
  const { summary, sidecarDir } = ours.result.result;
  assertEqual(summary.status, 'success', 'the loop succeeded');
  assertEqual(fs.statSync(path.join(sidecarDir, 'iteration-1-actor.stdout')).size >= BYTES, true, 'all raw output kept on disk');

  // Baseline: the same output collected whole, as a runner that buffers does.
  const dir = scratch('stream-baseline');
  fs.writeFileSync(path.join(dir, 'script.json'), JSON.stringify(script));
  fs.rmSync(path.join(dir, 'actor.count'), { force: true });
  global.gc?.();
  const { execa } = await import('execa');
  const baseline = await peakMemoryDuring(() =>
    time(() => execa(process.execPath, [SCRIPTED_AGENT()], { env: { SCRIPTED_AGENT_DIR: dir, CODELOOPS_ROLE: 'actor' }, input: 'x', maxBuffer: 1 << 30 })),
  );
  const ratio = ours.peakMb / baseline.peakMb;
  return {
    name: '100 MB of agent output streamed through the runner (one whole iteration)',
    ours: `peak RSS ${ours.peakMb.toFixed(0)} MB (${before.toFixed(0)} MB at rest), ${(ours.result.ms / 1000).toFixed(1)} s`,
    baseline: `buffering runner peak RSS ${baseline.peakMb.toFixed(0)} MB`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the memory`,
    goal: 'peak < 150 MB',
    met: ours.peakMb < 150,
  };
}

// ── opening a big session in the viewer ────────────────────────────────────────

async function benchViewer(): Promise<BenchResult> {
  const ITERATIONS = 100;
  const dir = path.join(scratch('viewer'), 'sessions');
  fs.rmSync(dir, { recursive: true, force: true });
  const diffLines = Array.from({ length: 4000 }, (_, i) => (i % 3 === 0 ? `-old line ${i}` : `+new line ${i} 🎉`)).join('\n');
  const diff = `diff --git a/src/big.ts b/src/big.ts\n--- a/src/big.ts\n+++ b/src/big.ts\n@@ -1,4000 +1,4000 @@\n${diffLines}\n`;
  const output = 'The actor explains what it did. '.repeat(6000);
  const id = writeSession(dir, [
    startLine({ prompt: 'A long session' }),
    ...Array.from({ length: ITERATIONS }, (_, i) => iterationLine(i + 1, { git_diff: diff, actor_output: output, git_files_changed: 1 })),
    endLine({ iterations: ITERATIONS }),
  ]);
  const megabytes = fs.statSync(path.join(dir, `${id}.jsonl`)).size / 1024 / 1024;
  const { installDom } = await import('../support/dom.js');
  const { ViewerApp } = await import('../../webview-ui/viewerApp.js');
  const { renderDiff, renderText } = await import('../../webview-ui/diffView.js');
  const { SessionLibrary } = await import('../../src/sessionView/sessionLibrary.js');
  const dom = installDom();
  try {
    const open = async (eager: boolean): Promise<number> => {
      const library = new SessionLibrary(new SessionStore(dir), () => path.join(dir, 'no-sidecar'));
      const started = performance.now();
      const view = await library.view(id);
      const root = document.createElement('div');
      const transport = {
        send() {},
        onMessage: (listener: (message: unknown) => void) => listener({ type: 'session', view, running: false, capabilities: { openDiff: true } }),
        loadState: () => undefined,
        saveState() {},
      };
      new ViewerApp(root, transport as never);
      if (eager) {
        // What a viewer without lazy rendering does: every output and every diff at once.
        for (let n = 1; n <= ITERATIONS; n++) {
          const detail = (await library.detail(id, n))!;
          root.appendChild(renderDiff(detail.diff, Number.MAX_SAFE_INTEGER));
          root.appendChild(renderText(detail.actor_output, Number.MAX_SAFE_INTEGER));
        }
      }
      return performance.now() - started;
    };
    await open(false); // warm the page cache and the JIT for both
    const ours = await open(false);
    const eager = await open(true);
    const ratio = eager / ours;
    return {
      name: `opening a session of ${ITERATIONS} iterations (${megabytes.toFixed(0)} MB) in the viewer`,
      ours: `${ours.toFixed(0)} ms to the timeline`,
      baseline: `rendering every diff and output: ${eager.toFixed(0)} ms`,
      ratio,
      ratioText: `${ratio.toFixed(1)}× faster`,
      goal: 'timeline under 2 s; diffs rendered on demand',
      met: ours < 2000,
    };
  } finally {
    dom.remove();
  }
}

// ── the API listing 10,000 sessions ─────────────────────────────────────────────

async function benchApi(): Promise<BenchResult> {
  const { dir } = listFixture();
  const { startUiServer } = await import('../../src/server/uiServer.js');
  const http = await import('node:http');
  const server = await startUiServer({
    port: 0,
    sessionsDirectory: dir,
    sidecarDirOf: (id) => path.join(dir, '..', 'sidecars', id),
    assetsDirectory: path.join(process.cwd(), 'dist', 'webview'),
  });
  const fetchList = () =>
    new Promise<unknown[]>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: server.port, path: '/api/sessions', headers: { host: `127.0.0.1:${server.port}` } }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]));
          response.on('error', reject);
        })
        .on('error', reject);
    });
  // Both keep the summary index in memory, as the server does.
  const store = new SessionStore(dir, () => {}, { indexFile: null });
  const medianOf = async (work: () => Promise<unknown>): Promise<number> => {
    const times: number[] = [];
    for (let run = 0; run < 3; run++) times.push((await time(work)).ms);
    return median(times);
  };
  try {
    assertEqual((await fetchList()).length, LIST_SESSIONS, 'every session served'); // warms the page cache
    const ours = await medianOf(fetchList);
    // Baseline: the engine alone, listing and serializing, with no HTTP in between.
    await store.list();
    const baseline = await medianOf(async () => JSON.stringify(await store.list()));
    const ratio = ours / baseline;
    return {
      name: `GET /api/sessions, ${LIST_SESSIONS.toLocaleString('en-US')} sessions (codeloops ui)`,
      ours: `${ours.toFixed(0)} ms, parsed by the client`,
      baseline: `listing and JSON in-process: ${baseline.toFixed(0)} ms`,
      ratio,
      ratioText: `${ratio.toFixed(2)}× the time`,
      goal: '≤ 1.5× (HTTP and streaming cost little)',
      met: ratio <= 1.5,
    };
  } finally {
    await server.close();
  }
}

// ── the extension: activation and size ──────────────────────────────────────────

/**
 * `require('dist/extension.js')` and `activate()` in a fresh Node process, with a
 * stand-in for the `vscode` module that answers every call at once (so what is timed
 * is the extension, not the editor). The baseline is a one-command extension loaded
 * and activated the same way: the floor any extension pays.
 */
/**
 * Node's built-in modules that VS Code's extension host has loaded before it activates
 * any extension (its process.moduleLoadList, read in code-server's extension host:
 * these and http, https, tls, http2, dns, worker_threads, cluster…), of those the
 * extension requires; zlib, not seen there for sure, is left to be timed. Loaded before
 * the clock starts, as they are in the host: in a bare Node, loading them cost about a
 * third of the figure, and none of it falls to the extension in the editor.
 */
const LOADED_BY_THE_EXTENSION_HOST = ['child_process', 'crypto', 'net', 'stream', 'os', 'url', 'fs/promises', 'string_decoder', 'events', 'buffer'];

const ACTIVATION_SCRIPT = `
const Module = require('module');
const path = require('path');
const handler = {
  get: (target, key) => (key === 'then' || typeof key === 'symbol' ? undefined : key === 'subscriptions' ? [] : stub),
  apply: () => stub,
  construct: () => stub,
};
const stub = new Proxy(function () {}, handler);
// The API's namespaces and classes the extension names, each answering anything (a bundle copies the module's own properties).
const api = {};
for (const name of JSON.parse(process.argv[2])) api[name] = stub;
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) { return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest); };
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: api };
const file = process.argv[1];
for (const builtin of JSON.parse(process.argv[3])) require(builtin);
const context = { subscriptions: [], extensionPath: path.dirname(path.dirname(file)), extensionUri: stub, globalState: stub, workspaceState: stub };
const started = performance.now();
const extension = require(file);
const required = performance.now();
extension.activate(context);
const activated = performance.now();
process.stdout.write(JSON.stringify({ require: required - started, activate: activated - required }));
`;

async function benchActivation(): Promise<BenchResult> {
  const bundle = path.join(process.cwd(), 'dist', 'extension.js');
  const floor = path.join(scratch('activation'), 'dist', 'extension.js');
  fs.mkdirSync(path.dirname(floor), { recursive: true });
  fs.writeFileSync(floor, "exports.activate = (context) => { context.subscriptions.push(require('vscode').commands.registerCommand('x', () => {})); };\n");
  // Every name the extension's sources take from `vscode` (types too: a stub more does no harm), so a new API in use needs no change here.
  const apiNames = new Set<string>();
  for (const source of fs.readdirSync(path.join(process.cwd(), 'src', 'extension'), { recursive: true, encoding: 'utf8' })) {
    if (!source.endsWith('.ts')) continue;
    const text = fs.readFileSync(path.join(process.cwd(), 'src', 'extension', source), 'utf8');
    for (const match of text.matchAll(/\bvscode\.([A-Za-z]+)/g)) apiNames.add(match[1]!);
  }
  const measure = (file: string) => {
    const runs = [1, 2, 3, 4, 5].map(
      () =>
        JSON.parse(timedProcess(['-e', ACTIVATION_SCRIPT, file, JSON.stringify([...apiNames]), JSON.stringify(LOADED_BY_THE_EXTENSION_HOST)]).stdout) as {
          require: number;
          activate: number;
        },
    );
    return { require: median(runs.map((run) => run.require)), activate: median(runs.map((run) => run.activate)) };
  };
  const ours = measure(bundle);
  const baseline = measure(floor);
  const total = ours.require + ours.activate;
  const kb = fs.statSync(bundle).size / 1024;
  return {
    name: 'extension activation: require dist/extension.js + activate() (a stub vscode)',
    ours: `${total.toFixed(1)} ms (require ${ours.require.toFixed(1)}, activate ${ours.activate.toFixed(1)}); bundle ${kb.toFixed(0)} KB`,
    baseline: `a one-command extension: ${(baseline.require + baseline.activate).toFixed(1)} ms`,
    ratio: total / (baseline.require + baseline.activate),
    ratioText: `+${(total - baseline.require - baseline.activate).toFixed(1)} ms over the floor`,
    goal: '≤ 30 ms, bundle ≤ 250 KB',
    met: total <= 30 && kb <= 250,
  };
}

/** The VSIX as `npm run package` makes it, against the files it holds uncompressed, and the bundles against what they are built from. */
async function benchSize(): Promise<BenchResult> {
  execFileSync(
    'npx',
    [
      '--no-install',
      'vsce',
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--no-rewrite-relative-links',
      '--out',
      path.join(scratch('size'), 'codeloops.vsix'),
    ],
    {
      stdio: 'ignore',
    },
  );
  const vsix = fs.statSync(path.join(scratch('size'), 'codeloops.vsix')).size;
  const listed = execFileSync('npx', ['--no-install', 'vsce', 'ls', '--no-dependencies'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .reduce((sum, file) => sum + (fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0), 0);
  const bundles = ['runner', 'extension', 'webview'].map((name) => {
    const meta = JSON.parse(fs.readFileSync(path.join('out', 'meta', `${name}.json`), 'utf8')) as {
      inputs: Record<string, { bytes: number }>;
      outputs: Record<string, { bytes: number }>;
    };
    const output = Object.entries(meta.outputs).reduce((sum, [file, info]) => sum + (file.endsWith('.map') ? 0 : info.bytes), 0);
    const input = Object.values(meta.inputs).reduce((sum, info) => sum + info.bytes, 0);
    return `${name} ${(output / 1024).toFixed(0)} KB of ${(input / 1024).toFixed(0)} KB of sources`;
  });
  return {
    name: 'size: the VSIX, and each bundle against the sources it is built from',
    ours: `VSIX ${(vsix / 1024).toFixed(0)} KB; ${bundles.join(', ')}`,
    baseline: `the VSIX's files uncompressed: ${(listed / 1024).toFixed(0)} KB`,
    ratio: vsix / listed,
    ratioText: `${(vsix / listed).toFixed(2)}× its files`,
    goal: 'VSIX ≤ 1 MB',
    met: vsix <= 1024 * 1024,
  };
}

// ── reading a critic's decision at the end of a 5 MB answer ─────────────────────

async function benchDecision(): Promise<BenchResult> {
  const { parseCriticDecision } = await import('../../src/critic/criticDecision.js');
  const answer = 'The critic thinks aloud. '.repeat(200_000) + '<decision>{"type":"done","summary":"ok","confidence":1}</decision>';
  const oursMs = median([1, 2, 3, 4, 5].map(() => timeSync(() => assertEqual(parseCriticDecision(answer)?.decision.kind, 'DONE', 'read'))));
  // Baseline: the one scan any reader needs, finding the block's tags.
  const scanMs = median([1, 2, 3, 4, 5].map(() => timeSync(() => [...answer.matchAll(/<decision>([\s\S]*?)<\/decision>/gi)].at(-1))));
  const ratio = oursMs / scanMs;
  return {
    name: `the critic's decision at the end of a ${(answer.length / 1_000_000).toFixed(0)} MB answer`,
    ours: `${oursMs.toFixed(1)} ms`,
    baseline: `one regular-expression scan for the block: ${scanMs.toFixed(1)} ms`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 3× one scan',
    met: ratio <= 3,
  };
}

function timeSync(work: () => unknown): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

// ── start-up and Ctrl+C, as a user sees them ─────────────────────────────────────

async function benchProcesses(): Promise<BenchResult> {
  const cli = path.join(process.cwd(), 'dist', 'cli.js');
  const home = scratch('processes');
  const env = { ...process.env, XDG_DATA_HOME: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), NO_COLOR: '1' };
  const version = median([1, 2, 3, 4, 5].map(() => timedProcess([cli, '--version'], env).ms));
  const { spawn } = await import('node:child_process');
  const uiStarts: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, 'ui', '--no-open', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()));
    uiStarts.push(performance.now() - started);
    child.kill('SIGINT');
    await new Promise((resolve) => child.on('exit', resolve));
  }
  const uiStart = median(uiStarts);
  // Ctrl+C with an agent that ignores SIGINT and SIGTERM: the runner escalates to SIGKILL and ends the session.
  const repo = path.join(home, 'repo');
  fs.rmSync(repo, { recursive: true, force: true });
  fs.mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const agentDir = path.join(home, 'agent');
  fs.mkdirSync(agentDir, { recursive: true });
  fs.writeFileSync(path.join(agentDir, 'script.json'), JSON.stringify({ actor: [[{ print: 'working' }, { hang: true }]], critic: [[{ print: 'x' }]] }));
  fs.mkdirSync(path.join(home, 'config', 'codeloops'), { recursive: true });
  fs.writeFileSync(
    path.join(home, 'config', 'codeloops', 'config.toml'),
    `[defaults]\nagent = "command"\n[agents.command]\ncommand = [${JSON.stringify(process.execPath)}, ${JSON.stringify(SCRIPTED_AGENT())}]\nenv = { SCRIPTED_AGENT_DIR = ${JSON.stringify(agentDir)} }\n`,
  );
  const interrupts: number[] = [];
  for (let run = 0; run < 3; run++) {
    fs.rmSync(path.join(agentDir, 'actor.count'), { force: true });
    const child = spawn(process.execPath, [cli, '-p', 'hang'], { cwd: repo, env, stdio: ['ignore', 'ignore', 'pipe'] });
    await new Promise<void>((resolve) => child.stderr.on('data', (chunk: Buffer) => chunk.toString().includes('working') && resolve()));
    const sent = performance.now();
    child.kill('SIGINT');
    await new Promise((resolve) => child.on('exit', resolve));
    interrupts.push(performance.now() - sent);
  }
  const interrupt = median(interrupts);
  return {
    name: 'start-up of `codeloops ui`, and Ctrl+C to exit with an agent that ignores signals',
    ours: `ui serving after ${uiStart.toFixed(0)} ms; Ctrl+C to exit ${interrupt.toFixed(0)} ms`,
    baseline: `\`codeloops --version\`: ${version.toFixed(0)} ms`,
    ratio: uiStart / version,
    ratioText: `ui ${(uiStart / version).toFixed(2)}× --version`,
    goal: 'ui ≤ 2× --version; exit ≤ 3 s',
    met: uiStart <= 2 * version && interrupt <= 3000,
  };
}

// ── the verification gate: a check's own cost, and a check that prints 100 MB ────

async function benchChecks(): Promise<BenchResult> {
  const RUNS = 30;
  const cwd = scratch('checks');
  const check = { name: 'noop', run: 'true', timeoutSecs: 60, required: true };
  // Baseline: the same command spawned bare and awaited, as any task runner would.
  const bare = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', 'true'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      child.on('error', reject);
      child.on('close', () => resolve());
    });
  const baselineTimes: number[] = [];
  const ourTimes: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    baselineTimes.push((await time(bare)).ms);
    const ours = await time(() => runCheck(check, { cwd }));
    assertEqual(ours.result.passed, true, 'the check passed');
    ourTimes.push(ours.ms);
  }
  const ours = median(ourTimes);
  const baseline = median(baselineTimes);
  const overhead = Math.max(0, ours - baseline);
  return {
    name: "a check's own overhead in the gate (`true`, median of 30)",
    ours: `${ours.toFixed(1)} ms a check`,
    baseline: `the command spawned bare ${baseline.toFixed(1)} ms`,
    ratio: ours / baseline,
    ratioText: `+${overhead.toFixed(1)} ms (${(ours / baseline).toFixed(2)}×)`,
    goal: 'overhead ≤ 50 ms',
    met: overhead <= 50,
  };
}

async function benchCheckOutput(): Promise<BenchResult> {
  const BYTES = 100 * 1024 * 1024;
  const cwd = scratch('check-output');
  const flood = `head -c ${BYTES} /dev/zero | tr '\\0' 'x' | fold -w 100`;
  global.gc?.();
  const ours = await peakMemoryDuring(() => time(() => runCheck({ name: 'flood', run: flood, timeoutSecs: 600, required: true }, { cwd })));
  assertEqual(ours.result.result.outputChars >= BYTES, true, 'all the output was read');
  global.gc?.();
  const { execa } = await import('execa');
  const baseline = await peakMemoryDuring(() => time(() => execa('sh', ['-c', flood], { cwd, maxBuffer: 1 << 30 })));
  const ratio = ours.peakMb / baseline.peakMb;
  return {
    name: 'a check printing 100 MB (head and tail kept)',
    ours: `peak RSS ${ours.peakMb.toFixed(0)} MB, ${(ours.result.ms / 1000).toFixed(1)} s`,
    baseline: `buffering the output whole: peak RSS ${baseline.peakMb.toFixed(0)} MB`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the memory`,
    goal: 'peak < 150 MB',
    met: ours.peakMb < 150,
  };
}

// ── clients that stop reading (codeloops ui) ────────────────────────────────────

/** A session of 200 MB: 100 iterations of 2 MB (agent output and diff), made once and kept. */
function slowClientFixture(): { dataHome: string; id: string; bytes: number } {
  const dataHome = path.join(scratch('slow-clients'), 'data');
  const dir = path.join(dataHome, 'codeloops', 'sessions');
  const id = '2025-05-01T10-00-00Z_200mb0';
  const file = path.join(dir, `${id}.jsonl`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const fd = fs.openSync(`${file}.tmp`, 'w');
    fs.writeSync(fd, JSON.stringify(startLine({ prompt: 'A session of 200 MB', timestamp: '2025-05-01T10:00:00Z', max_iterations: 100 })) + '\n');
    const output = 'agent output line\n'.repeat(1_500_000 / 18);
    const diff = `diff --git a/f b/f\n${'+a changed line\n'.repeat(500_000 / 16)}`;
    for (let n = 1; n <= 100; n++) fs.writeSync(fd, JSON.stringify(iterationLine(n, { actor_output: output, git_diff: diff })) + '\n');
    fs.writeSync(fd, JSON.stringify(endLine({ iterations: 100 })) + '\n');
    fs.closeSync(fd);
    fs.renameSync(`${file}.tmp`, file);
  }
  return { dataHome, id, bytes: fs.statSync(file).size };
}

/** What a server that reads a session whole for each request does (what `codeloops ui` did before it streamed). */
const WHOLE_FILE_SERVER = `
const fs = require('fs'), http = require('http');
const file = process.argv[1];
http.createServer((request, response) => fs.readFile(file, (error, data) => response.end(data))).listen(0, '127.0.0.1', function () {
  process.stdout.write('http://127.0.0.1:' + this.address().port + '/\\n');
});
`;

interface ServerProcess {
  pid: number;
  port: number;
  rssMb(): number;
  stop(): void;
}

async function startServerProcess(args: string[], env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const match = /(http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.on('exit', () => reject(new Error(`the server exited: ${output}`)));
  });
  const pid = child.pid!;
  return {
    pid,
    port: Number(new URL(url).port),
    rssMb: () => Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024,
    stop: () => child.kill('SIGKILL'),
  };
}

/**
 * Opens clients that read the first piece of a session and then stop reading, and
 * waits until the server's memory stops growing (it has filled their buffers and
 * waits, or has read the whole file for each). Returns the server's RSS then.
 */
async function withSlowClients(server: ServerProcess, route: string, count: number): Promise<{ rssMb: number; close(): void }> {
  const http = await import('node:http');
  const requests: ClientRequest[] = [];
  for (let index = 0; index < count; index++) {
    await new Promise<void>((resolve, reject) => {
      const request = http.get(
        { host: '127.0.0.1', port: server.port, path: route, headers: { host: `127.0.0.1:${server.port}` }, agent: false },
        (response) => {
          response.once('data', () => {
            response.pause();
            resolve();
          });
        },
      );
      request.on('error', reject);
      requests.push(request);
    });
  }
  let previous = -1;
  for (let steady = 0; steady < 10;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = server.rssMb();
    steady = Math.abs(now - previous) < 1 ? steady + 1 : 0;
    previous = now;
  }
  return { rssMb: server.rssMb(), close: () => requests.forEach((request) => request.destroy()) };
}

async function idleRss(server: ServerProcess): Promise<number> {
  const http = await import('node:http');
  // Once warmed up by a listing, as a server that has shown its page is.
  await new Promise<void>((resolve, reject) =>
    http
      .get({ host: '127.0.0.1', port: server.port, path: '/api/sessions', headers: { host: `127.0.0.1:${server.port}` }, agent: false }, (response) => {
        response.resume();
        response.on('end', resolve);
      })
      .on('error', reject),
  );
  return server.rssMb();
}

const SLOW_CLIENTS_EACH = 8;

async function benchSlowClient(): Promise<BenchResult> {
  const fixture = slowClientFixture();
  const env = { ...process.env, XDG_DATA_HOME: fixture.dataHome, XDG_CONFIG_HOME: path.join(fixture.dataHome, '..', 'config') };
  const route = `/api/sessions/${fixture.id}`;
  const ours = await startServerProcess([path.join(process.cwd(), 'dist', 'cli.js'), 'ui', '--no-open', '--port', '0'], env);
  let perClient: number;
  try {
    const idle = await idleRss(ours);
    const clients = await withSlowClients(ours, route, SLOW_CLIENTS_EACH);
    perClient = (clients.rssMb - idle) / SLOW_CLIENTS_EACH;
    clients.close();
  } finally {
    ours.stop();
  }
  // Baseline: the whole file per request, fewer clients (each costs the file).
  const whole = await startServerProcess(['-e', WHOLE_FILE_SERVER, path.join(fixture.dataHome, 'codeloops', 'sessions', `${fixture.id}.jsonl`)], env);
  let baselinePerClient: number;
  try {
    const idle = whole.rssMb();
    const clients = await withSlowClients(whole, '/', 3);
    baselinePerClient = (clients.rssMb - idle) / 3;
    clients.close();
  } finally {
    whole.stop();
  }
  const ratio = perClient / baselinePerClient;
  return {
    name: `a client that stops reading a ${(fixture.bytes / 1024 / 1024).toFixed(0)} MB session (\`GET /api/sessions/:id\`, codeloops ui), ${SLOW_CLIENTS_EACH} of them`,
    ours: `${perClient.toFixed(1)} MB of server RSS a client`,
    baseline: `a server reading the file whole per request: ${baselinePerClient.toFixed(0)} MB a client`,
    ratio,
    ratioText: `${ratio.toFixed(3)}× the memory`,
    goal: '≤ 16 MB a client',
    met: perClient <= 16,
  };
}

async function benchSlowClients(): Promise<BenchResult> {
  const fixture = slowClientFixture();
  const env = { ...process.env, XDG_DATA_HOME: fixture.dataHome, XDG_CONFIG_HOME: path.join(fixture.dataHome, '..', 'config') };
  const server = await startServerProcess([path.join(process.cwd(), 'dist', 'cli.js'), 'ui', '--no-open', '--port', '0'], env);
  try {
    const idle = await idleRss(server);
    const clients = await withSlowClients(server, `/api/sessions/${fixture.id}`, 50);
    clients.close();
    const ratio = clients.rssMb / idle;
    return {
      name: `50 clients that stop reading a ${(fixture.bytes / 1024 / 1024).toFixed(0)} MB session, one \`codeloops ui\``,
      ours: `server RSS ${clients.rssMb.toFixed(0)} MB`,
      baseline: `the same server idle: ${idle.toFixed(0)} MB`,
      ratio,
      ratioText: `${ratio.toFixed(1)}× idle (+${(clients.rssMb - idle).toFixed(0)} MB)`,
      goal: '< 1 GB',
      met: clients.rssMb < 1024,
    };
  } finally {
    server.stop();
  }
}

/** A session whose one iteration line is 50 MB, made once and kept. */
function bigLineFixture(): { dataHome: string; id: string; file: string } {
  const dataHome = path.join(scratch('big-line'), 'data');
  const dir = path.join(dataHome, 'codeloops', 'sessions');
  const id = '2025-05-02T10-00-00Z_50mbln';
  const file = path.join(dir, `${id}.jsonl`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const lines = [
      startLine({ prompt: 'One line of 50 MB', timestamp: '2025-05-02T10:00:00Z' }),
      iterationLine(1, { actor_output: 'x'.repeat(50 * 1024 * 1024) }),
      endLine(),
    ];
    fs.writeFileSync(file, lines.map((line) => JSON.stringify(line) + '\n').join(''));
  }
  return { dataHome, id, file };
}

/** The peak of a server's RSS above where it was, while one client fetches a route whole. */
async function peakWhileServing(server: ServerProcess, route: string): Promise<number> {
  const http = await import('node:http');
  const before = server.rssMb();
  fs.writeFileSync(`/proc/${server.pid}/clear_refs`, '5');
  await new Promise<void>((resolve, reject) =>
    http
      .get({ host: '127.0.0.1', port: server.port, path: route, headers: { host: `127.0.0.1:${server.port}` }, agent: false }, (response) => {
        response.resume();
        response.on('end', resolve);
      })
      .on('error', reject),
  );
  const peak = Number(/^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
  return peak - before;
}

async function benchBigLine(): Promise<BenchResult> {
  const fixture = bigLineFixture();
  const env = { ...process.env, XDG_DATA_HOME: fixture.dataHome, XDG_CONFIG_HOME: path.join(fixture.dataHome, '..', 'config') };
  const lineMb = 50;
  const ours = await startServerProcess([path.join(process.cwd(), 'dist', 'cli.js'), 'ui', '--no-open', '--port', '0'], env);
  let worst = 0;
  let after: number;
  let idle: number;
  try {
    idle = await idleRss(ours);
    for (const route of ['', '/view', '/iterations/1', '/diff']) worst = Math.max(worst, await peakWhileServing(ours, `/api/sessions/${fixture.id}${route}`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    after = ours.rssMb();
  } finally {
    ours.stop();
  }
  const whole = await startServerProcess(['-e', WHOLE_FILE_SERVER, fixture.file], env);
  let baseline: number;
  try {
    baseline = await peakWhileServing(whole, '/');
  } finally {
    whole.stop();
  }
  const ratio = worst / lineMb;
  return {
    name: 'a session line of 50 MB served by `codeloops ui` (the whole session, its view, the iteration, its diff)',
    ours: `peak +${worst.toFixed(0)} MB on the worst route; ${(after - idle).toFixed(0)} MB above idle afterwards`,
    baseline: `a server sending the file as one buffer: peak +${baseline.toFixed(0)} MB`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the line`,
    goal: '≤ 2× the line while serving, back to idle after',
    met: ratio <= 2 && after - idle < 16,
  };
}

// ── sessions import: a big bundle, and bundle bombs ─────────────────────────────

const MB = 1024 * 1024;

/** Mostly zeros with a pseudo-random byte every 512: it packs about a few hundred to one, as repetitive agent output does. */
function writeRepetitive(fd: number, bytes: number): void {
  const chunk = Buffer.alloc(MB);
  let seed = 1;
  for (let written = 0; written < bytes; written += chunk.length) {
    for (let at = 0; at < chunk.length; at += 512) chunk[at] = 32 + ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 90);
    fs.writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - written));
  }
}

/**
 * A bundle as `sessions export` writes it (no snapshots: they are not what is measured),
 * its files made by `fill` in the folder being packed; made once and kept.
 */
async function bundleFixture(name: string, fill: (root: string, id: string) => void): Promise<{ file: string; id: string }> {
  const id = '2025-06-01T10-00-00Z_bundle';
  const file = path.join(scratch('bundle-import'), `${name}.tar.gz`);
  if (fs.existsSync(file)) return { file, id };
  const staging = fs.mkdtempSync(path.join(scratch('bundle-import'), 'staging-'));
  try {
    const root = path.join(staging, 'codeloops-bundle');
    fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
    fs.mkdirSync(path.join(root, 'sidecars', id), { recursive: true });
    const manifest = { format: 'codeloops-sessions', version: 1, created_at: '2025-06-01T10:00:00Z', groups: [] };
    fs.writeFileSync(
      path.join(root, 'manifest.json'),
      JSON.stringify({ ...manifest, sessions: [{ id, working_dir: '/ci/project', relative_dir: '', snapshot_refs: 0 }] }),
    );
    fs.writeFileSync(path.join(root, 'sessions', `${id}.jsonl`), JSON.stringify(startLine({ working_dir: '/ci/project' })) + '\n');
    fill(root, id);
    const { create } = await import('tar');
    await create({ gzip: true, file: `${file}.partial`, cwd: staging, portable: true }, ['codeloops-bundle']);
    fs.renameSync(`${file}.partial`, file);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { file, id };
}

/** A file of zeros that takes no room on disk. */
function sparse(file: string, bytes: number): void {
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
}

/** This process's peak resident memory while `work` runs (MB), from the kernel's high-water mark, reset first. */
async function peakRssOf<T>(work: () => Promise<T>): Promise<{ result: T | Error; peakMb: number; ms: number }> {
  global.gc?.();
  fs.writeFileSync('/proc/self/clear_refs', '5');
  const started = performance.now();
  const result = await work().catch((error: Error) => error);
  const ms = performance.now() - started;
  const peakMb = Number(/^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
  return { result, peakMb, ms };
}

async function benchBundleImport(): Promise<BenchResult> {
  const NORMAL = 1024 * MB;
  // 1 GiB as a real run's might be: a long session file, and much more raw agent output.
  const normal = await bundleFixture('normal-1g', (root, id) => {
    const output = fs.openSync(path.join(root, 'sidecars', id, 'iteration-1-actor.stdout'), 'w');
    writeRepetitive(output, NORMAL - 128 * MB);
    fs.closeSync(output);
    const session = fs.openSync(path.join(root, 'sessions', `${id}.jsonl`), 'a');
    for (let n = 1; n <= 128; n++) fs.writeSync(session, JSON.stringify(iterationLine(n, { actor_output: 'x'.repeat(MB - 1024) })) + '\n');
    fs.closeSync(session);
  });
  // The two bombs: 4 GiB of zeros in one file (a few MB packed), and 3 GiB in files of 256 MiB, each under the limit.
  const zeros = await bundleFixture('bomb-4g-zeros', (root, id) => sparse(path.join(root, 'sidecars', id, 'iteration-1-actor.stdout'), 4096 * MB));
  const many = await bundleFixture('bomb-3g-files', (root, id) => {
    for (let n = 1; n <= 12; n++) sparse(path.join(root, 'sidecars', id, `iteration-${n}-actor.stdout`), 256 * MB);
  });

  const work = scratch('bundle-import-run');
  const temporary = path.join(work, 'tmp');
  process.env.TMPDIR = temporary;
  const importInto = async (bundle: string) => {
    fs.rmSync(path.join(work, 'data'), { recursive: true, force: true });
    fs.rmSync(temporary, { recursive: true, force: true });
    fs.mkdirSync(temporary, { recursive: true });
    const repo = path.join(work, 'repo');
    if (!fs.existsSync(repo)) {
      fs.mkdirSync(repo, { recursive: true });
      execFileSync('git', ['init', '-q'], { cwd: repo });
    }
    const data = path.join(work, 'data');
    const run = await peakRssOf(() =>
      importBundle({
        bundleFile: bundle,
        targetDir: repo,
        store: new SessionStore(path.join(data, 'sessions')),
        sidecarDirOf: (id) => path.join(data, 'sidecars', id),
        groupsDirectory: path.join(data, 'sidecars', '_groups'),
      }),
    );
    assertEqual(fs.readdirSync(temporary).length, 0, 'nothing left in the temporary folder');
    return run;
  };
  const imported = await importInto(normal.file);
  assertEqual(imported.result instanceof Error ? imported.result.message : 'imported', 'imported', 'the 1 GiB bundle imports');
  const copied = fs.statSync(path.join(work, 'data', 'sidecars', normal.id, 'iteration-1-actor.stdout')).size;
  assertEqual(copied, NORMAL - 128 * MB, 'all of the output imported');
  const refusedZeros = await importInto(zeros.file);
  const refusedMany = await importInto(many.file);
  for (const [what, run] of [
    ['4 GiB of zeros', refusedZeros],
    ['3 GiB in 256 MiB files', refusedMany],
  ] as const) {
    assertEqual(failureReportOf(run.result).code, 'bundle_invalid', `${what}: refused`);
  }
  fs.rmSync(path.join(work, 'data'), { recursive: true, force: true });

  // Baseline: the archive unpacked as the import did before, node-tar reading the file whole and inflating it at once.
  const before = scratch('bundle-import-before');
  fs.rmSync(before, { recursive: true, force: true });
  fs.mkdirSync(before, { recursive: true });
  const { extract } = await import('tar');
  const baseline = await peakRssOf(() => extract({ file: normal.file, cwd: before, strict: true }));
  fs.rmSync(before, { recursive: true, force: true });

  const worst = Math.max(imported.peakMb, refusedZeros.peakMb, refusedMany.peakMb);
  const ratio = worst / baseline.peakMb;
  const size = (file: string) => `${(fs.statSync(file).size / MB).toFixed(1)} MB`;
  return {
    name: '`sessions import`: a bundle unpacking to 1 GiB; bombs of 4 GiB of zeros (one file) and 3 GiB (twelve files of 256 MiB) refused at the 2048 MB default',
    ours:
      `1 GiB (${size(normal.file)} packed) imported in ${(imported.ms / 1000).toFixed(1)} s at peak RSS ${imported.peakMb.toFixed(0)} MB; ` +
      `4 GiB bomb (${size(zeros.file)}) refused in ${refusedZeros.ms.toFixed(0)} ms at ${refusedZeros.peakMb.toFixed(0)} MB; ` +
      `3 GiB bomb (${size(many.file)}) refused at the limit in ${(refusedMany.ms / 1000).toFixed(1)} s at ${refusedMany.peakMb.toFixed(0)} MB`,
    baseline: `unpacking as before (node-tar inflating the file whole): peak RSS ${baseline.peakMb.toFixed(0)} MB for the 1 GiB bundle, ${(baseline.ms / 1000).toFixed(1)} s`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the memory`,
    goal: 'peak < 150 MB whatever the bundle unpacks to; bombs refused, nothing left on disk',
    met: worst < 150,
  };
}

function assertEqual<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${String(expected)}, got ${String(actual)}`);
}

async function main(): Promise<void> {
  const only = process.argv[2];
  if (only) {
    const bench = BENCHMARKS[only];
    if (!bench) throw new Error(`unknown benchmark ${only}: one of ${Object.keys(BENCHMARKS).join(', ')}`);
    process.stdout.write(JSON.stringify(await bench()) + '\n');
    return;
  }
  const results: BenchResult[] = [];
  for (const name of Object.keys(BENCHMARKS)) {
    process.stderr.write(`running ${name}…\n`);
    const child = spawnSync(process.execPath, ['--expose-gc', '--enable-source-maps', __filename, name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    if (child.status !== 0) {
      // One broken benchmark must not cost the figures of the others: it is reported, and the run fails at the end.
      results.push({ name, ours: 'failed (see above)', baseline: '', ratio: NaN, ratioText: '', goal: '', met: false });
      continue;
    }
    const result = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as BenchResult;
    process.stderr.write(`  ${result.ours} | ${result.baseline} | ${result.ratioText} | ${result.met ? 'met' : 'NOT MET'}\n`);
    results.push(result);
  }
  const lines = results.map(
    (result) => `| ${result.name} | ${result.ours} | ${result.baseline} | ${result.ratioText} | ${result.goal} | ${result.met ? 'met' : 'NOT MET'} |`,
  );
  process.stdout.write(['| benchmark | codeloops | baseline | ratio | goal | |', '|---|---|---|---|---|---|', ...lines].join('\n') + '\n');
  if (results.some((result) => !result.met)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
