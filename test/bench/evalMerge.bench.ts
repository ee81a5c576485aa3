/**
 * `codeloops eval merge` of 4 shards' bundles of 50 runs each (200 sessions with their
 * files, sidecar records and snapshot refs, and each shard's eval record), against
 * importing the same sessions, as 4 plain bundles, with `sessions import` one bundle
 * at a time: the time, and the peak memory of each (merge's kept flat: 4 shards
 * against 2).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { exportEvalShard, mergeEvalShards } from '../../src/eval/evalShards.js';
import { importBundle, type BundlePaths } from '../../src/sessionBundle/sessionBundles.js';
import { exportSessions } from '../../src/sessionBundle/sessionExport.js';
import { evalIdFor, evalRecordLineSchema, evalsDir, type EvalRecordLine, type EvalRecordLineOf } from '../../src/sessionFormat/evalRecords.js';
import { EVENTS_FILE, fileTimestamp, promptHash } from '../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { runsOf } from '../../src/eval/evalShare.js';
import { endLine, iterationLine, startLine } from '../support/sessionFixtures.js';
import { assertEqual, median, runBenchmark, scratch } from './benchmark.js';
import { gitEnv } from './fixtures.js';

const TASKS = 10;
const CONFIGS = 5;
const REPETITIONS = 4;
const SHARDS = 4;
const RUNS = TASKS * CONFIGS * REPETITIONS;
const ITERATIONS = 3;
const ROUNDS = 5;
const MB = 1024 * 1024;

/** Text as an agent's output or a diff is: lines of words, different in every run and iteration, about `bytes` long. */
function prose(seed: number, bytes: number): string {
  const words = ['const', 'value', 'return', 'await', 'function', 'test', 'error', 'path', 'file', 'result', 'if', 'else', 'import', 'from', 'the', 'loop'];
  let state = seed * 2654435761;
  const lines: string[] = [];
  let length = 0;
  while (length < bytes) {
    const line: string[] = [];
    for (let word = 0; word < 9; word++) {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      line.push(words[state % words.length]! + (state % 97));
    }
    const text = line.join(' ');
    lines.push(text);
    length += text.length + 1;
  }
  return lines.join('\n') + '\n';
}

function dataPaths(data: string): BundlePaths {
  return {
    store: new SessionStore(path.join(data, 'codeloops', 'sessions')),
    sidecarDirOf: (id) => path.join(data, 'codeloops', 'sidecars', id),
    groupsDirectory: path.join(data, 'codeloops', 'sidecars', '_groups'),
  };
}

interface Fixture {
  repo: string;
  shardBundles: string[];
  plainBundles: string[];
  sessionIds: string[];
  refsPerSession: number;
}

/**
 * Made once and kept: the repository with every session's snapshots, the 200 sessions in
 * a data folder with their 4 shards' eval records, and the bundles (4 shards, 4 plain).
 */
async function fixture(): Promise<Fixture> {
  const root = scratch('eval-merge');
  const repo = path.join(root, 'repo');
  const bundles = path.join(root, 'bundles');
  const data = path.join(root, 'data');
  const shardBundles = Array.from({ length: SHARDS }, (_, index) => path.join(bundles, `shard-${index + 1}.tar.gz`));
  const plainBundles = Array.from({ length: SHARDS }, (_, index) => path.join(bundles, `sessions-${index + 1}.tar.gz`));
  const refsPerSession = ITERATIONS * 2 + 1;
  const done = path.join(root, 'done.json');
  if (fs.existsSync(done)) return { repo, shardBundles, plainBundles, refsPerSession, sessionIds: JSON.parse(fs.readFileSync(done, 'utf8')) as string[] };

  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(repo, { recursive: true });
  const git = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo, env: gitEnv, input, maxBuffer: 1 << 30, encoding: 'utf8' });
  git(['init', '-q', '-b', 'main']);
  git(['config', 'gc.auto', '0']);
  fs.mkdirSync(path.join(repo, 'src'));
  for (let file = 0; file < 200; file++) fs.writeFileSync(path.join(repo, 'src', `module-${file}.ts`), prose(file, 2000));
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'initial']);
  const commit = git(['rev-parse', 'HEAD']).trim();

  // The plan: every machine read the same suite at the same commit.
  const tasks = Array.from({ length: TASKS }, (_, index) => ({
    name: `task-${index + 1}`,
    prompt: `Task ${index + 1}: make module ${index} handle the empty input`,
    repository: repo,
    ref: 'HEAD',
    commit,
    setup: null,
    acceptance: 'npm test',
  }));
  const configs = Array.from({ length: CONFIGS }, (_, index) => ({ name: `config-${index + 1}`, table: { max_iterations: 5 + index } }));
  const plan: EvalRecordLineOf<'eval_started'> = {
    type: 'eval_started',
    timestamp: new Date(Date.UTC(2025, 5, 1, 9)).toISOString(),
    eval_id: '',
    suite: 'bench',
    suite_file: path.join(root, 'suite.toml'),
    repetitions: REPETITIONS,
    jobs: 2,
    tasks,
    configs,
    pid: 0,
  };
  const keys = runsOf(plan);
  assertEqual(keys.length, RUNS, 'runs in the plan');

  // Each run: a session with its snapshots (each iteration's pre and post, and head), made by fast-import, each tree its own.
  const paths = dataPaths(data);
  fs.mkdirSync(paths.store.directory, { recursive: true });
  const started = Date.UTC(2025, 5, 1, 9);
  let stream = '';
  let mark = 0;
  const sessionIds: string[] = [];
  for (const [index, key] of keys.entries()) {
    const task = tasks.find((candidate) => candidate.name === key.task)!;
    const shardIndex = (index % SHARDS) + 1;
    const when = new Date(started + Math.floor(index / SHARDS) * 60_000);
    const id = `${fileTimestamp(when)}_${promptHash(task.prompt + key.config)}`;
    sessionIds.push(id);
    const evalId = evalIdFor(new Date(started), `bench-shard-${shardIndex}`);
    const lines: Array<Record<string, unknown>> = [
      startLine({
        timestamp: when.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        prompt: task.prompt,
        working_dir: path.join(root, 'gone-worktrees', String(index + 1)),
        eval: { id: evalId, task: key.task, config: key.config, repetition: key.repetition },
      }),
    ];
    // As takeSnapshot makes them: each snapshot a commit of its own on top of HEAD, its tree the work tree's at the time.
    const file = `src/module-${index % 200}.ts`;
    let before: string | null = null;
    const snapshot = (ref: string, content: string | null) => {
      mark += 1;
      const message = `codeloops snapshot ${ref}`;
      stream += `commit ${ref}\nmark :${mark}\ncommitter b <b@b> ${1748768400 + index} +0000\ndata ${Buffer.byteLength(message)}\n${message}\nfrom ${commit}\n`;
      if (content !== null) stream += `M 100644 inline ${file}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
      stream += '\n';
      return `:${mark}`;
    };
    let last = '';
    for (let iteration = 1; iteration <= ITERATIONS; iteration++) {
      const content = prose(index * 10 + iteration, 4000);
      snapshot(`refs/codeloops/${id}/${iteration}/pre`, before);
      last = snapshot(`refs/codeloops/${id}/${iteration}/post`, content);
      before = content;
      lines.push(
        iterationLine(iteration, {
          actor_output: prose(index * 100 + iteration, 3000),
          git_diff: `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n` + content.replace(/^/gm, '+').slice(0, 2500),
          critic_decision: iteration === ITERATIONS ? 'DONE' : 'CONTINUE',
          feedback: prose(index * 1000 + iteration, 400),
        }),
      );
    }
    stream += `reset refs/codeloops/${id}/head\nfrom ${last}\n\n`;
    lines.push(endLine({ iterations: ITERATIONS }));
    fs.writeFileSync(paths.store.filePathOf(id), lines.map((line) => JSON.stringify(line) + '\n').join(''));
    const sidecar = paths.sidecarDirOf(id);
    fs.mkdirSync(sidecar, { recursive: true });
    fs.writeFileSync(path.join(sidecar, EVENTS_FILE), JSON.stringify({ type: 'run_started', timestamp: when.toISOString() }) + '\n');
    for (let iteration = 1; iteration <= ITERATIONS; iteration++)
      fs.writeFileSync(path.join(sidecar, `iteration-${iteration}-actor.stdout`), prose(index * 7 + iteration, 8000));
  }
  git(['fast-import', '--quiet'], stream);
  const refs = git(['for-each-ref', '--format=%(refname)', 'refs/codeloops/']).split('\n').filter(Boolean);
  assertEqual(refs.length, RUNS * refsPerSession, 'snapshot refs made');

  // Each machine's eval record: its shard of the plan, each run started and finished (in XDG_DATA_HOME, where exportEvalShard reads it).
  process.env.XDG_DATA_HOME = data;
  const evals = evalsDir();
  fs.mkdirSync(evals, { recursive: true });
  fs.mkdirSync(bundles, { recursive: true });
  for (let shard = 1; shard <= SHARDS; shard++) {
    const evalId = evalIdFor(new Date(started), `bench-shard-${shard}`);
    const timestamp = new Date(started).toISOString();
    const record: EvalRecordLine[] = [{ ...plan, timestamp, eval_id: evalId, pid: 4242 + shard, shard: { index: shard, total: SHARDS } }];
    const ids: string[] = [];
    for (const [index, key] of keys.entries()) {
      if (index % SHARDS !== shard - 1) continue;
      const sessionId = sessionIds[index]!;
      ids.push(sessionId);
      record.push({ type: 'run_started', timestamp, ...key, session_id: sessionId });
      record.push({
        type: 'run_finished',
        timestamp,
        ...key,
        session_id: sessionId,
        outcome: index % 5 === 0 ? 'false_done' : 'accepted',
        acceptance_passed: index % 5 !== 0,
        iterations: ITERATIONS,
        cost_usd: 0.12,
        duration_secs: 95.5,
        loop_outcome: 'success',
        error: null,
        error_code: null,
        acceptance_exit_code: index % 5 === 0 ? 1 : 0,
        acceptance_output: prose(index, 600),
      });
    }
    record.push({ type: 'eval_stopped', timestamp, status: 'finished' });
    fs.writeFileSync(path.join(evals, `${evalId}.jsonl`), record.map((line) => JSON.stringify(evalRecordLineSchema.parse(line)) + '\n').join(''));
    const exported = await exportEvalShard(evals, evalId, shardBundles[shard - 1]!, paths);
    assertEqual(exported.sessions.length, RUNS / SHARDS, `sessions in shard ${shard}'s bundle`);
    assertEqual(exported.snapshot_refs, (RUNS / SHARDS) * refsPerSession, `snapshot refs in shard ${shard}'s bundle`);
    // The same sessions as `sessions export` writes them (their snapshots in the same repository): the baseline's bundle.
    const plain = await exportSessions(ids, plainBundles[shard - 1]!, paths, { repository: repo });
    assertEqual(plain.snapshot_refs, exported.snapshot_refs, `snapshot refs in plain bundle ${shard}`);
  }
  fs.writeFileSync(done, JSON.stringify(sessionIds));
  return { repo, shardBundles, plainBundles, sessionIds, refsPerSession };
}

/** A fresh clone of the repository and a fresh data folder, for one import. */
function freshTarget(fixtureRepo: string, name: string): { clone: string; data: string } {
  const folder = path.join(scratch('eval-merge-run'), name);
  fs.rmSync(folder, { recursive: true, force: true });
  fs.mkdirSync(folder, { recursive: true });
  const clone = path.join(folder, 'clone');
  execFileSync('git', ['clone', '-q', fixtureRepo, clone], { env: gitEnv });
  return { clone, data: path.join(folder, 'data') };
}

/** This process's memory while `work` runs: the peak resident set (the kernel's high-water mark, reset first) above where it started, and the peak heap. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; rssMb: number; heapMb: number }> {
  global.gc?.();
  fs.writeFileSync('/proc/self/clear_refs', '5');
  const before = process.memoryUsage();
  let heap = before.heapUsed;
  const timer = setInterval(() => (heap = Math.max(heap, process.memoryUsage().heapUsed)), 5);
  const started = performance.now();
  try {
    const result = await work();
    const ms = performance.now() - started;
    heap = Math.max(heap, process.memoryUsage().heapUsed);
    const peak = Number(/^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;
    return { result, ms, rssMb: (peak - before.rss) / MB, heapMb: (heap - before.heapUsed) / MB };
  } finally {
    clearInterval(timer);
  }
}

function snapshotRefsIn(clone: string): number {
  return execFileSync('git', ['for-each-ref', '--format=%(refname)', 'refs/codeloops/'], { cwd: clone, encoding: 'utf8' }).split('\n').filter(Boolean).length;
}

/** `sessions import` of each plain bundle, one after another, into a fresh clone and data folder. */
async function importOneByOne(bench: Fixture) {
  const { clone, data } = freshTarget(bench.repo, 'import');
  const paths = dataPaths(data);
  const run = await measured(async () => {
    let sessions = 0;
    for (const bundleFile of bench.plainBundles) sessions += (await importBundle({ ...paths, bundleFile, targetDir: clone })).sessions.length;
    return sessions;
  });
  assertEqual(run.result, RUNS, 'sessions imported one bundle at a time');
  assertEqual(fs.readdirSync(paths.store.directory).filter((name) => name.endsWith('.jsonl')).length, RUNS, 'session files after the imports');
  assertEqual(snapshotRefsIn(clone), RUNS * bench.refsPerSession, 'snapshot refs after the imports');
  return run;
}

/** `eval merge` of the first `shards` shards' bundles into a fresh clone and data folder. */
async function merge(bench: Fixture, shards: number) {
  const { clone, data } = freshTarget(bench.repo, `merge-${shards}`);
  const paths = dataPaths(data);
  const evalsDirectory = path.join(data, 'codeloops', 'evals');
  const run = await measured(() => mergeEvalShards({ ...paths, bundleFiles: bench.shardBundles.slice(0, shards), targetDir: clone, evalsDirectory }));
  const runs = (RUNS / SHARDS) * shards;
  assertEqual(run.result.missing.length, RUNS - runs, 'runs missing from the merged eval');
  const record = fs
    .readFileSync(path.join(evalsDirectory, `${run.result.evalId}.jsonl`), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => evalRecordLineSchema.parse(JSON.parse(line)));
  assertEqual(record.filter((line) => line.type === 'run_finished').length, runs, 'runs finished in the merged eval');
  assertEqual(fs.readdirSync(paths.store.directory).filter((name) => name.endsWith('.jsonl')).length, runs, 'session files after the merge');
  assertEqual(snapshotRefsIn(clone), runs * bench.refsPerSession, 'snapshot refs after the merge');
  return run;
}

runBenchmark(async () => {
  const building = performance.now();
  const bench = await fixture();
  const fixtureMs = performance.now() - building;
  process.env.TMPDIR = scratch('eval-merge-tmp');
  // In turns, so that the machine's speed drifting moves both; the first round warms the code and the page cache.
  const imports: Array<Awaited<ReturnType<typeof importOneByOne>>> = [];
  const merges: Array<Awaited<ReturnType<typeof merge>>> = [];
  const halves: Array<Awaited<ReturnType<typeof merge>>> = [];
  await importOneByOne(bench);
  await merge(bench, SHARDS);
  for (let round = 0; round < ROUNDS; round++) {
    imports.push(await importOneByOne(bench));
    merges.push(await merge(bench, SHARDS));
    halves.push(await merge(bench, SHARDS / 2));
  }
  fs.rmSync(scratch('eval-merge-run'), { recursive: true, force: true });

  const importMs = median(imports.map((run) => run.ms));
  const mergeMs = median(merges.map((run) => run.ms));
  const ratio = mergeMs / importMs;
  const peak = (runs: ReadonlyArray<{ rssMb: number; heapMb: number }>, what: 'rssMb' | 'heapMb') => Math.max(...runs.map((run) => run[what]));
  const [mergeRss, halfRss, importRss] = [peak(merges, 'rssMb'), peak(halves, 'rssMb'), peak(imports, 'rssMb')];
  const [mergeHeap, halfHeap, importHeap] = [peak(merges, 'heapMb'), peak(halves, 'heapMb'), peak(imports, 'heapMb')];
  const packed = bench.shardBundles.reduce((sum, file) => sum + fs.statSync(file).size, 0) / MB;
  // Flat: twice the runs must not cost more than a few MB more at the peak.
  const flat = mergeRss <= halfRss + 16 && mergeHeap <= halfHeap + 8;
  return {
    name: `\`eval merge\` of ${SHARDS} shards' bundles of ${RUNS / SHARDS} runs each (${RUNS} sessions of ${ITERATIONS} iterations, ${bench.refsPerSession} snapshot refs each, sidecar records; ${packed.toFixed(1)} MB packed), median of ${ROUNDS}`,
    ours:
      `${mergeMs.toFixed(0)} ms; peak +${mergeRss.toFixed(0)} MB RSS, +${mergeHeap.toFixed(0)} MB heap ` +
      `(${SHARDS / 2} shards, ${RUNS / 2} runs: +${halfRss.toFixed(0)} MB RSS, +${halfHeap.toFixed(0)} MB heap, ${median(halves.map((run) => run.ms)).toFixed(0)} ms)`,
    baseline: `\`sessions import\` of the same sessions as ${SHARDS} plain bundles, one at a time: ${importMs.toFixed(0)} ms; peak +${importRss.toFixed(0)} MB RSS, +${importHeap.toFixed(0)} MB heap`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 1.2× the time; memory flat (4 shards: peak RSS within 16 MB, heap within 8 MB of 2 shards)',
    met: ratio <= 1.2 && flat,
    notes: `fixture ${fixtureMs < 1000 ? 'kept' : `made in ${(fixtureMs / 1000).toFixed(1)} s`}; rounds (merge/import ms): ${merges.map((run, index) => `${run.ms.toFixed(0)}/${imports[index]!.ms.toFixed(0)}`).join(', ')}`,
  };
});
