import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { missingCommits, openRepository, type Repository } from '../git/repository.js';
import { evalFileOf, evalRecordLineSchema, type EvalRecordLine, type EvalRecordLineOf } from '../sessionFormat/evalRecords.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { fileTimestamp } from '../sessionFormat/sessionFiles.js';
import { BUNDLE_EVAL_RECORD, type BundleEval, type ExportResult } from '../sessionFormat/sessionBundle.js';
import { shardText, type Shard } from '../sessionFormat/shards.js';
import { exportSessions } from '../sessionBundle/sessionExport.js';
import {
  idsInUse,
  importStaged,
  MAX_RECORD_BYTES,
  readBundledText,
  stageBundle,
  type BundlePaths,
  type BundleSelection,
  type StagedBundle,
} from '../sessionBundle/sessionBundles.js';
import { readFirstLine } from '../sessions/lineReader.js';
import { EvalRecorder, readEval, runKeyText, type RunKey } from './evalRecord.js';
import { runsOf, shareOf } from './evalShare.js';

/**
 * An eval split across machines: each runs its shard (`--shard I/N`) and exports its
 * runs as a bundle (`--export`): their sessions and snapshots, as `sessions export`
 * writes them, and the eval's record. `eval merge` takes the bundles home and makes
 * one eval of them here, as if one machine had run it: every run once, the runs no
 * bundle has said missing (`--resume` runs them here). Bundles of two plans are never
 * mixed: their results would compare setups on different code.
 */

/** Writes the bundle of an eval's record and the sessions of its finished runs (a shard that stopped midway: those that finished). */
export async function exportEvalShard(
  evalsDirectory: string,
  evalId: string,
  output: string,
  paths: BundlePaths,
): Promise<ExportResult & { eval: BundleEval }> {
  const state = await readEval(evalsDirectory, evalId);
  const share = shareOf(state.started);
  const finished = share.flatMap((key) => state.finished.get(runKeyText(key)) ?? []);
  const repositories = new Set(state.started.tasks.map((task) => task.repository));
  if (repositories.size > 1) {
    throw new CodeloopsError(
      'usage',
      `Eval ${evalId} runs tasks in ${repositories.size} repositories (${[...repositories].join(', ')}): an eval's shards are exported and merged in one repository; split the suite by repository.`,
    );
  }
  const bundleEval: BundleEval = {
    eval_id: evalId,
    shard: state.started.shard ?? null,
    complete: finished.length === share.length,
    runs: share.length,
    finished: finished.length,
  };
  const result = await exportSessions(
    finished.flatMap((line) => line.session_id ?? []),
    output,
    paths,
    // The runs' worktrees are gone by now: their snapshots are in the task's repository, at its top.
    { manifest: { eval: bundleEval }, files: [{ name: BUNDLE_EVAL_RECORD, source: evalFileOf(evalId) }], repository: [...repositories][0] },
  );
  return { ...result, eval: bundleEval };
}

type ShardExport = Awaited<ReturnType<typeof exportEvalShard>>;

/**
 * A shard's bundle kept current while it runs: written when it starts and again as
 * each run finishes, each time whole in place of the last (`exportSessions` renames it into place), so that a shard
 * killed at any moment (kill -9, a node reclaimed) leaves the bundle of the runs that
 * had finished, which says it is not complete. Writes never overlap; one asked for
 * while another is under way is made once it ends.
 */
export class ShardBundleWriter {
  private pending = false;
  private writing: Promise<void> = Promise.resolve();
  private last: ShardExport | undefined;

  constructor(
    private readonly evalsDirectory: string,
    private readonly evalId: string,
    private readonly output: string,
    private readonly paths: BundlePaths,
    /** A write while the eval runs that failed: said, and the next one tries again. */
    private readonly warn: (message: string) => void,
  ) {}

  /** Asks for the bundle to be written anew (a run finished). */
  update(): void {
    if (this.pending) return;
    this.pending = true;
    this.writing = this.writing.then(async () => {
      this.pending = false;
      await this.write().catch((error: unknown) => this.warn(`the shard's bundle could not be written: ${(error as Error).message}`));
    });
  }

  /** The last write, once every run has ended: its failure is the command's. */
  async close(): Promise<ShardExport> {
    await this.writing;
    await this.write();
    return this.last!;
  }

  private async write(): Promise<void> {
    this.last = await exportEvalShard(this.evalsDirectory, this.evalId, this.output, this.paths);
  }
}

export interface MergeRequest extends BundlePaths {
  bundleFiles: readonly string[];
  /** A clone of the repository the eval ran in: the sessions are imported into it, and `--resume` runs the missing runs in it. */
  targetDir: string;
  evalsDirectory: string;
  maxUnpackedBytes?: number;
  /** Take what a shard that stopped midway finished (its other runs missing here), rather than refuse it (`shard_incomplete`). */
  partial?: boolean;
}

export interface MergedShard {
  file: string;
  eval_id: string;
  shard: Shard | null;
  complete: boolean;
  /** The runs taken from it (a run another bundle had first is not). */
  runs: number;
}

export interface MergeOutcome {
  evalId: string;
  shards: MergedShard[];
  missing: RunKey[];
  warnings: string[];
}

/** A shard's bundle, staged, with the eval record it carries read and checked. */
interface ShardBundle {
  staged: StagedBundle;
  started: EvalRecordLineOf<'eval_started'>;
  finished: Map<string, EvalRecordLineOf<'run_finished'>>;
}

export async function mergeEvalShards(request: MergeRequest): Promise<MergeOutcome> {
  if (request.bundleFiles.length === 0) throw new CodeloopsError('usage', 'Give the bundles to merge: codeloops eval merge shard-1.tar.gz shard-2.tar.gz …');
  const repository = await openRepository(request.targetDir);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-eval-merge-'));
  try {
    const warnings: string[] = [];
    const bundles: ShardBundle[] = [];
    const seen = new Map<string, string>();
    for (const file of request.bundleFiles) {
      const resolved = path.resolve(file);
      const staged = await stageBundle(resolved, staging, request.maxUnpackedBytes);
      const bundle = readShardBundle(staged);
      // The same shard's bundle twice (the same file, or a copy): taken once.
      const identity = JSON.stringify([bundle.started.eval_id, bundle.started.shard ?? null]);
      const first = seen.get(identity);
      if (first !== undefined) {
        warnings.push(`${resolved} is ${path.basename(first)} again (eval ${bundle.started.eval_id}, shard ${shardName(bundle.started.shard)}): taken once`);
        continue;
      }
      seen.set(identity, resolved);
      bundles.push(bundle);
    }
    refuseMismatches(bundles);
    if (!request.partial) refuseUnfinished(bundles);
    const plan = bundles[0]!.started;
    await refuseMissingCommits(repository, plan, bundles[0]!.staged);

    // Every run once: the first bundle given that finished it.
    const taken = new Map<string, { bundle: ShardBundle; line: EvalRecordLineOf<'run_finished'> }>();
    const shards: MergedShard[] = [];
    for (const bundle of bundles) {
      let runs = 0;
      for (const [key, line] of bundle.finished) {
        if (taken.has(key)) continue;
        taken.set(key, { bundle, line });
        runs += 1;
      }
      const manifestEval = bundle.staged.manifest.eval!;
      shards.push({ file: bundle.staged.file, eval_id: bundle.started.eval_id, shard: bundle.started.shard ?? null, complete: manifestEval.complete, runs });
    }
    const missing = runsOf(plan).filter((key) => !taken.has(runKeyText(key)));
    const present = new Set(bundles.flatMap((bundle) => (bundle.started.shard ? [bundle.started.shard.index] : [])));
    const total = plan.shard?.total ?? 1;
    const absent = Array.from({ length: total }, (_, index) => index + 1).filter((index) => !present.has(index));
    if (plan.shard && absent.length > 0)
      warnings.push(`no bundle of shard${absent.length === 1 ? '' : 's'} ${absent.map((index) => `${index}/${total}`).join(', ')}`);

    const selections = whatToImport(bundles, taken.values(), await idsInUse(request, repository.root), request.store);
    await importStaged({ ...request, targetDir: repository.root }, selections);
    const evalId = writeMergedRecord(
      request.evalsDirectory,
      plan,
      repository.root,
      shards,
      missing,
      [...taken.values()].map((entry) => entry.line),
    );
    return { evalId, shards, missing, warnings };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Which of each bundle's sessions to import, and under which id here. Machines that
 * started the same task in the same second named its sessions alike: the later ones get
 * the next free id. A merge killed after its import, before its record, imported them
 * already: those copies are taken again, not made twice. Each run's line is given the
 * id its session has here.
 */
function whatToImport(
  bundles: readonly ShardBundle[],
  taken: Iterable<{ bundle: ShardBundle; line: EvalRecordLineOf<'run_finished'> }>,
  used: Set<string>,
  store: BundlePaths['store'],
): BundleSelection[] {
  const runs = [...taken];
  const claimed = new Set<string>();
  const selections = bundles.map((bundle) => {
    const sessions = new Set<string>();
    const rename = new Map<string, string>();
    for (const entry of runs) {
      const id = entry.bundle === bundle ? entry.line.session_id : null;
      if (!id) continue;
      let target = id;
      while (used.has(target) && (claimed.has(target) || !isImportedCopy(bundle.staged, id, store.filePathOf(target)))) target = laterSessionId(target);
      claimed.add(target);
      if (used.has(target)) {
        if (target !== id) entry.line = { ...entry.line, session_id: target };
        continue;
      }
      sessions.add(id);
      used.add(target);
      if (target !== id) {
        rename.set(id, target);
        entry.line = { ...entry.line, session_id: target };
      }
    }
    return { bundle: bundle.staged, sessions, rename };
  });
  return selections;
}

/** The eval record a shard's bundle carries, read strictly: a bundle whose record is torn or is not its manifest's eval is refused. */
function readShardBundle(staged: StagedBundle): ShardBundle {
  const { manifest, invalid } = staged;
  if (!manifest.eval) throw invalid('it is a sessions bundle, not an eval shard\'s (import it with "codeloops sessions import")');
  const text = readBundledText(path.join(staged.root, ...BUNDLE_EVAL_RECORD.split('/')), invalid);
  const lines: EvalRecordLine[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    if (raw.trim() === '') continue;
    let parsed: ReturnType<typeof evalRecordLineSchema.safeParse>;
    try {
      parsed = evalRecordLineSchema.safeParse(JSON.parse(raw));
    } catch {
      throw invalid(`line ${index + 1} of its ${BUNDLE_EVAL_RECORD} is not JSON (the bundle is torn or was edited)`);
    }
    if (!parsed.success) throw invalid(`line ${index + 1} of its ${BUNDLE_EVAL_RECORD} is not an eval record line`);
    lines.push(parsed.data);
  }
  const starts = lines.filter((line): line is EvalRecordLineOf<'eval_started'> => line.type === 'eval_started');
  const started = starts[0];
  if (!started) throw invalid(`its ${BUNDLE_EVAL_RECORD} does not start an eval`);
  if (starts.length > 1) throw invalid(`its ${BUNDLE_EVAL_RECORD} has ${starts.length} eval_started lines: an eval starts once`);
  if (started.eval_id !== manifest.eval.eval_id || JSON.stringify(started.shard ?? null) !== JSON.stringify(manifest.eval.shard))
    throw invalid(
      `its manifest says eval ${manifest.eval.eval_id}, shard ${shardName(manifest.eval.shard)}, but its record is of ${started.eval_id}, shard ${shardName(started.shard)}`,
    );
  const share = new Set(shareOf(started).map(runKeyText));
  const bundled = new Set(manifest.sessions.map((entry) => entry.id));
  const finished = new Map<string, EvalRecordLineOf<'run_finished'>>();
  for (const line of lines) {
    if (line.type !== 'run_finished') continue;
    const key = runKeyText(line);
    if (!share.has(key)) throw invalid(`its record finishes ${describeRun(line)}, which is not a run of shard ${shardName(started.shard)}`);
    if (line.session_id && !bundled.has(line.session_id))
      throw invalid(`its record finishes ${describeRun(line)} in session ${line.session_id}, which is not in it (a partial bundle)`);
    finished.set(key, line);
  }
  // A session is one run's: two runs said to have finished in one would leave one of them pointing at nothing once renamed here.
  const owners = new Map<string, EvalRecordLineOf<'run_finished'>>();
  for (const line of finished.values()) {
    if (!line.session_id) continue;
    const other = owners.get(line.session_id);
    if (other) throw invalid(`its record finishes both ${describeRun(other)} and ${describeRun(line)} in session ${line.session_id}`);
    owners.set(line.session_id, line);
  }
  return { staged, started, finished };
}

/** Bundles of one eval only: the same plan (suite, tasks at their commits, configs) and the same number of shards. */
function refuseMismatches(bundles: readonly ShardBundle[]): void {
  const [first, ...others] = bundles;
  for (const other of others) {
    const differences = planDifferences(first!.started, other.started);
    const [a, b] = [first!.started.shard?.total ?? 1, other.started.shard?.total ?? 1];
    if (a !== b) differences.push(`the number of shards: ${a} against ${b}`);
    if (differences.length === 0) continue;
    throw new CodeloopsError(
      'eval_mismatch',
      `${other.staged.file} is not a shard of the same eval as ${first!.staged.file}: ${differences.join('; ')}. Nothing was imported.`,
      { files: [first!.staged.file, other.staged.file], differences },
    );
  }
}

/**
 * A shard whose process stopped before its share finished (interrupted, crashed, a run
 * that could not be set up) is not merged as if it were whole: run it again (`--resume`
 * carries it on, `--export` writes it anew), or take what it finished with `--partial`.
 */
function refuseUnfinished(bundles: readonly ShardBundle[]): void {
  const stopped = bundles.filter((bundle) => !bundle.staged.manifest.eval!.complete);
  if (stopped.length === 0) return;
  const unfinished = stopped.flatMap((bundle) =>
    shareOf(bundle.started)
      .filter((key) => !bundle.finished.has(runKeyText(key)))
      .map(({ task, config, repetition }) => ({ task, config, repetition })),
  );
  const which = stopped.map((bundle) => `${path.basename(bundle.staged.file)} (shard ${shardName(bundle.started.shard)})`).join(', ');
  throw new CodeloopsError(
    'shard_incomplete',
    `${which} stopped before ${stopped.length === 1 ? 'its' : 'their'} share finished: ${unfinished.length} run${unfinished.length === 1 ? '' : 's'} did not finish there (${unfinished.slice(0, 3).map(describeRun).join('; ')}${unfinished.length > 3 ? '; …' : ''}). Nothing was imported.`,
    { unfinished, bundles: stopped.map((bundle) => bundle.staged.file) },
  );
}

/** What makes two shards' plans differ, each said for a reader; none: one eval. Where a task's repository is on each machine does not count. */
function planDifferences(a: EvalRecordLineOf<'eval_started'>, b: EvalRecordLineOf<'eval_started'>): string[] {
  const differences: string[] = [];
  const differ = (what: string, x: unknown, y: unknown) => {
    if (JSON.stringify(x) !== JSON.stringify(y)) differences.push(`${what}: ${JSON.stringify(x)} against ${JSON.stringify(y)}`);
  };
  differ('the suite', a.suite, b.suite);
  differ('repetitions', a.repetitions, b.repetitions);
  differ(
    'the tasks',
    a.tasks.map((task) => task.name),
    b.tasks.map((task) => task.name),
  );
  for (const task of a.tasks) {
    const other = b.tasks.find((candidate) => candidate.name === task.name);
    if (!other) continue;
    for (const field of ['commit', 'prompt', 'ref', 'setup', 'acceptance'] as const) differ(`task "${task.name}"'s ${field}`, task[field], other[field]);
  }
  differ(
    'the configs',
    a.configs.map((config) => config.name),
    b.configs.map((config) => config.name),
  );
  for (const config of a.configs) {
    const other = b.configs.find((candidate) => candidate.name === config.name);
    if (other && canonical(config.table) !== canonical(other.table)) differences.push(`config "${config.name}" is set differently`);
  }
  return differences;
}

/** The tasks' commits must be here: the runs are re-homed to this clone, and `--resume` starts from them. */
async function refuseMissingCommits(repository: Repository, plan: EvalRecordLineOf<'eval_started'>, staged: StagedBundle): Promise<void> {
  const missing = await missingCommits(
    repository,
    plan.tasks.map((task) => task.commit),
  );
  if (missing.length === 0) return;
  throw staged.invalid(
    `its eval's tasks start from commits ${repository.root} does not have (${missing.slice(0, 3).join(', ')}): it comes from another repository, or this clone needs "git fetch"`,
    { missing_commits: missing },
  );
}

/** The merged eval's record, here: its plan with every task in this clone, where the runs came from, each run taken, and what is missing. */
function writeMergedRecord(
  evalsDirectory: string,
  plan: EvalRecordLineOf<'eval_started'>,
  repositoryRoot: string,
  shards: readonly MergedShard[],
  missing: readonly RunKey[],
  runs: ReadonlyArray<EvalRecordLineOf<'run_finished'>>,
): string {
  const recorder = EvalRecorder.createNamed(evalsDirectory, plan.suite);
  try {
    const timestamp = new Date().toISOString();
    recorder.copy({
      ...plan,
      timestamp,
      eval_id: recorder.evalId,
      tasks: plan.tasks.map((task) => ({ ...task, repository: repositoryRoot })),
      jobs: 1,
      pid: process.pid,
      shard: null,
    });
    recorder.copy({
      type: 'eval_merged',
      timestamp,
      bundles: shards.map((shard) => ({ file: path.basename(shard.file), eval_id: shard.eval_id, shard: shard.shard, complete: shard.complete })),
      missing: missing.map(({ task, config, repetition }) => ({ task, config, repetition })),
    });
    for (const run of runs) {
      if (run.session_id)
        recorder.copy({
          type: 'run_started',
          timestamp: run.timestamp,
          task: run.task,
          config: run.config,
          repetition: run.repetition,
          session_id: run.session_id,
        });
      recorder.copy(run);
    }
    // Nothing runs it here until `--resume` does.
    recorder.copy({ type: 'eval_stopped', timestamp, status: missing.length === 0 ? 'finished' : 'interrupted' });
  } finally {
    recorder.close();
  }
  return recorder.evalId;
}

/**
 * Whether the session file here is the bundle's session as an import wrote it: the same
 * start line but for where it was re-homed, then the same bytes. Compared a megabyte
 * at a time: a session may be large.
 */
function isImportedCopy(staged: StagedBundle, bundledId: string, here: string): boolean {
  let bundledFd: number | undefined;
  let hereFd: number | undefined;
  try {
    bundledFd = fs.openSync(path.join(staged.root, 'sessions', `${bundledId}.jsonl`), 'r');
    hereFd = fs.openSync(here, 'r');
    const [bundledSize, hereSize] = [fs.fstatSync(bundledFd).size, fs.fstatSync(hereFd).size];
    const bundledFirst = readFirstLine(bundledFd, Math.min(bundledSize, MAX_RECORD_BYTES));
    const hereFirst = readFirstLine(hereFd, Math.min(hereSize, MAX_RECORD_BYTES));
    if (!bundledFirst?.terminated || !hereFirst?.terminated) return false;
    const withoutPlace = (text: string) => canonical({ ...(JSON.parse(text) as object), working_dir: null });
    if (withoutPlace(bundledFirst.text) !== withoutPlace(hereFirst.text)) return false;
    if (bundledSize - bundledFirst.end !== hereSize - hereFirst.end) return false;
    const [a, b] = [Buffer.alloc(1024 * 1024), Buffer.alloc(1024 * 1024)];
    for (let [x, y] = [bundledFirst.end + 1, hereFirst.end + 1]; ;) {
      const read = fs.readSync(bundledFd, a, 0, a.length, x);
      if (read === 0) return true;
      if (fs.readSync(hereFd, b, 0, read, y) !== read || !a.subarray(0, read).equals(b.subarray(0, read))) return false;
      x += read;
      y += read;
    }
  } catch {
    return false;
  } finally {
    if (bundledFd !== undefined) fs.closeSync(bundledFd);
    if (hereFd !== undefined) fs.closeSync(hereFd);
  }
}

/** A session id one second later (`2025-01-27T15-30-45Z_a3f2c1` → `…-46Z_a3f2c1`): as a session started a second later would be named. */
function laterSessionId(id: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2})-(\d{2})-(\d{2})Z_(.+)$/.exec(id);
  if (!match) return `${id}-2`;
  const date = new Date(`${match[1]}T${match[2]}:${match[3]}:${match[4]}Z`);
  return `${fileTimestamp(new Date(date.getTime() + 1000))}_${match[5]}`;
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : inner,
  );
}

function shardName(shard: Shard | null | undefined): string {
  return shard ? shardText(shard) : 'all';
}

function describeRun(key: RunKey): string {
  return `task "${key.task}", config "${key.config}", repetition ${key.repetition}`;
}
