/**
 * `npm run bench`: each benchmark runs in its own process (clean memory figures)
 * and prints its result as a ratio against a baseline measured in the same run.
 *
 *   node out/test/bench/runBenchmarks.js            all benchmarks
 *   node out/test/bench/runBenchmarks.js list       one of them (list | snapshot | stream | viewer | api)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { snapshotRef, takeSnapshot } from '../../src/git/snapshots.js';
import { diffSnapshots } from '../../src/git/treeDiff.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
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

const BENCHMARKS: Record<string, () => Promise<BenchResult>> = { list: benchList, snapshot: benchSnapshot, stream: benchStream, viewer: benchViewer, api: benchApi };

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

// ── sessions list over 10,000 sessions ──────────────────────────────────────────

const LIST_SESSIONS = 10_000;

/** 10,000 sessions, made once and kept between runs (shared by `list` and `api`). */
function listFixture(): string {
  const dir = path.join(scratch('list'), 'sessions');
  const SESSIONS = LIST_SESSIONS;
  // 1 % of sessions carry a 2 MB iteration line: most finished, in the middle of
  // the file; one in ten of them still running, so the big line is the last one.
  if (!fs.existsSync(dir) || fs.readdirSync(dir).length !== SESSIONS) {
    fs.rmSync(dir, { recursive: true, force: true });
    const big = 'x'.repeat(2 * 1024 * 1024);
    for (let i = 0; i < SESSIONS; i++) {
      const timestamp = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const lines = [startLine({ timestamp, prompt: `Task number ${i}: make the thing ${i % 7 === 0 ? 'faster 🚀' : 'better'}`, working_dir: `/work/project-${i % 20}` })];
      const iterations = 1 + (i % 4);
      for (let n = 1; n <= iterations; n++) {
        const bigLine = (i % 100 === 1 || i % 1000 === 0) && n === 1;
        lines.push(iterationLine(n, bigLine ? { actor_output: big, git_diff: big } : {}));
      }
      if (i % 10 !== 0) lines.push(endLine({ iterations, outcome: i % 3 === 0 ? 'failed' : 'success' }));
      writeSession(dir, lines);
    }
  }
  return dir;
}

async function benchList(): Promise<BenchResult> {
  const dir = listFixture();
  const SESSIONS = LIST_SESSIONS;
  const store = new SessionStore(dir);
  await store.list(); // warm the page cache for both contenders alike
  const ours = await peakMemoryDuring(() => time(() => store.list()), () => process.memoryUsage().heapUsed);

  // Baseline: what a reader without the first/last-line trick does.
  const fullParse = async () => {
    const summaries: unknown[] = [];
    for (const name of await fs.promises.readdir(dir)) {
      const text = await fs.promises.readFile(path.join(dir, name), 'utf8');
      const lines = text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
      summaries.push({ start: lines[0], last: lines.at(-1) });
    }
    return summaries;
  };
  const baseline = await peakMemoryDuring(() => time(fullParse), () => process.memoryUsage().heapUsed);
  assertEqual(ours.result.result.length, SESSIONS, 'every session listed');
  const ratio = baseline.result.ms / ours.result.ms;
  return {
    name: `sessions list, ${SESSIONS.toLocaleString('en-US')} sessions (1 % with 4 MB lines)`,
    ours: `${ours.result.ms.toFixed(0)} ms, heap peak ${ours.peakMb.toFixed(0)} MB`,
    baseline: `full parse ${baseline.result.ms.toFixed(0)} ms, heap peak ${baseline.peakMb.toFixed(0)} MB`,
    ratio,
    ratioText: `${ratio.toFixed(1)}× faster`,
    goal: '≥ 5× faster, memory flat',
    met: ratio >= 5 && ours.peakMb < baseline.peakMb,
  };
}

// ── snapshot + diff + session write on 50,000 files ─────────────────────────────

async function benchSnapshot(): Promise<BenchResult> {
  const repo = path.join(scratch('snapshot'), 'repo');
  const FILES = 50_000;
  const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (!fs.existsSync(path.join(repo, '.git'))) {
    fs.mkdirSync(repo, { recursive: true });
    git('init', '-q');
    for (let i = 0; i < FILES; i++) {
      const file = path.join(repo, `src/module${Math.floor(i / 500)}/file${i}.ts`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `export const value${i} = ${i};\n`.repeat(10));
    }
    git('add', '-A');
    git('commit', '-q', '-m', 'generated');
  }
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
    const writer = SessionWriter.create(sessions, { prompt: `bench ${n}`, workingDir: repo, actorAgent: 'x', criticAgent: 'x', actorModel: null, criticModel: null, maxIterations: null }, new Date());
    writer.writeIteration({ iterationNumber: 1, actorOutput: '', actorStderr: '', actorExitCode: 0, actorDurationSecs: 0, gitDiff: diff.diff, gitFilesChanged: diff.filesChanged, gitInsertions: diff.insertions, gitDeletions: diff.deletions, criticDecision: 'DONE', feedback: null, remainingIssues: [], criticRevertedFiles: [] });
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
  git('for-each-ref', '--format=delete %(refname)', 'refs/codeloops/bench', 'refs/bench-bare');
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
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

// ── 100 MB of agent output ──────────────────────────────────────────────────────

async function benchStream(): Promise<BenchResult> {
  const BYTES = 100 * 1024 * 1024;
  const repo = path.join(scratch('stream'), 'repo');
  fs.rmSync(repo, { recursive: true, force: true });
  fs.mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const script = { actor: [[{ print: 'start' }, { flood: BYTES }, { print: 'end' }]], critic: [[{ print: '<decision>{"type":"done","summary":"ok","confidence":1}</decision>' }]] };
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
  const baseline = await peakMemoryDuring(() => time(() => execa(process.execPath, [SCRIPTED_AGENT()], { env: { SCRIPTED_AGENT_DIR: dir, CODELOOPS_ROLE: 'actor' }, input: 'x', maxBuffer: 1 << 30 })));
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
          root.appendChild(renderText(detail.actorOutput, Number.MAX_SAFE_INTEGER));
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
  const dir = listFixture();
  const { startUiServer } = await import('../../src/server/uiServer.js');
  const http = await import('node:http');
  const server = await startUiServer({ port: 0, sessionsDirectory: dir, sidecarDirOf: (id) => path.join(dir, '..', 'sidecars', id), assetsDirectory: path.join(process.cwd(), 'dist', 'webview') });
  const fetchList = () =>
    new Promise<unknown[]>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port: server.port, path: '/api/sessions', headers: { host: `127.0.0.1:${server.port}` } }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown[]));
        response.on('error', reject);
      }).on('error', reject);
    });
  const store = new SessionStore(dir);
  const median = async (work: () => Promise<unknown>): Promise<number> => {
    const times: number[] = [];
    for (let run = 0; run < 3; run++) times.push((await time(work)).ms);
    return times.sort((a, b) => a - b)[1]!;
  };
  try {
    assertEqual((await fetchList()).length, LIST_SESSIONS, 'every session served'); // warms the page cache
    const ours = await median(fetchList);
    // Baseline: the engine alone, listing and serializing, with no HTTP in between.
    const baseline = await median(async () => JSON.stringify(await store.list()));
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
    const child = spawnSync(process.execPath, ['--expose-gc', '--enable-source-maps', __filename, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (child.status !== 0) throw new Error(`benchmark ${name} failed`);
    results.push(JSON.parse(child.stdout.trim().split('\n').at(-1)!) as BenchResult);
  }
  const lines = results.map(
    (result) =>
      `| ${result.name} | ${result.ours} | ${result.baseline} | ${result.ratioText} | ${result.goal} | ${result.met ? 'met' : 'NOT MET'} |`,
  );
  process.stdout.write(['| benchmark | codeloops | baseline | ratio | goal | |', '|---|---|---|---|---|---|', ...lines].join('\n') + '\n');
  if (results.some((result) => !result.met)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
