/**
 * `sessions import` of a bundle that unpacks to 1 GiB, and of two bundle bombs refused
 * at the 2048 MB default (4 GiB of zeros in one file; 3 GiB in twelve files of 256 MiB,
 * each under the limit): the peak memory of each, with nothing left on disk after a
 * refusal; against the archive unpacked as the import did before (node-tar reading the
 * file whole and inflating it at once).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { create, extract } from 'tar';
import { importBundle } from '../../src/sessionBundle/sessionBundles.js';
import { failureReportOf } from '../../src/sessionFormat/failures.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { iterationLine, startLine } from '../support/sessionFixtures.js';
import { assertEqual, runBenchmark, scratch } from './benchmark.js';

const MB = 1024 * 1024;
const NORMAL = 1024 * MB;

/** Mostly zeros with a pseudo-random byte every 512: it packs about a few hundred to one, as repetitive agent output does. */
function writeRepetitive(fd: number, bytes: number): void {
  const chunk = Buffer.alloc(MB);
  let seed = 1;
  for (let written = 0; written < bytes; written += chunk.length) {
    for (let at = 0; at < chunk.length; at += 512) chunk[at] = 32 + ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 90);
    fs.writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - written));
  }
}

/** A file of zeros that takes no room on disk. */
function sparse(file: string, bytes: number): void {
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
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
    await create({ gzip: true, file: `${file}.partial`, cwd: staging, portable: true }, ['codeloops-bundle']);
    fs.renameSync(`${file}.partial`, file);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { file, id };
}

/** The three bundles: 1 GiB as a real run's might be (a long session file, and much more raw agent output), and the two bombs. */
async function bundles() {
  const normal = await bundleFixture('normal-1g', (root, id) => {
    const output = fs.openSync(path.join(root, 'sidecars', id, 'iteration-1-actor.stdout'), 'w');
    writeRepetitive(output, NORMAL - 128 * MB);
    fs.closeSync(output);
    const session = fs.openSync(path.join(root, 'sessions', `${id}.jsonl`), 'a');
    for (let n = 1; n <= 128; n++) fs.writeSync(session, JSON.stringify(iterationLine(n, { actor_output: 'x'.repeat(MB - 1024) })) + '\n');
    fs.closeSync(session);
  });
  const zeros = await bundleFixture('bomb-4g-zeros', (root, id) => sparse(path.join(root, 'sidecars', id, 'iteration-1-actor.stdout'), 4096 * MB));
  const many = await bundleFixture('bomb-3g-files', (root, id) => {
    for (let n = 1; n <= 12; n++) sparse(path.join(root, 'sidecars', id, `iteration-${n}-actor.stdout`), 256 * MB);
  });
  return { normal, zeros, many };
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

/** Imports a bundle into a fresh data folder (`work`/data) and repository, with the temporary folder (`work`/tmp) checked empty after. */
async function importInto(bundle: string, work: string) {
  const temporary = path.join(work, 'tmp');
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
}

runBenchmark(async () => {
  const { normal, zeros, many } = await bundles();
  const work = scratch('bundle-import-run');
  process.env.TMPDIR = path.join(work, 'tmp');
  const imported = await importInto(normal.file, work);
  assertEqual(imported.result instanceof Error ? imported.result.message : 'imported', 'imported', 'the 1 GiB bundle imports');
  const copied = fs.statSync(path.join(work, 'data', 'sidecars', normal.id, 'iteration-1-actor.stdout')).size;
  assertEqual(copied, NORMAL - 128 * MB, 'all of the output imported');
  const refusedZeros = await importInto(zeros.file, work);
  const refusedMany = await importInto(many.file, work);
  for (const [what, run] of [
    ['4 GiB of zeros', refusedZeros],
    ['3 GiB in 256 MiB files', refusedMany],
  ] as const) {
    assertEqual(failureReportOf(run.result).code, 'bundle_invalid', `${what}: refused`);
  }
  fs.rmSync(path.join(work, 'data'), { recursive: true, force: true });

  // The baseline, on the 1 GiB bundle.
  const before = scratch('bundle-import-before');
  fs.rmSync(before, { recursive: true, force: true });
  fs.mkdirSync(before, { recursive: true });
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
});
