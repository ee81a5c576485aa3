import fs from 'node:fs';
import path from 'node:path';
import { layerFromSuiteConfig, parseSuiteConfig, readSuite } from '../config/evalSuite.js';
import { evalResultsOf } from '../eval/evalResults.js';
import { planTasks } from '../eval/evalPlan.js';
import { EvalRecorder, readEval, resolveEvalId, runKeyText, type EvalState } from '../eval/evalRecord.js';
import { runEval, stopEval, type EvalStatus } from '../eval/runEval.js';
import { runsOf, shareOf, type EvalPlan } from '../eval/evalShare.js';
import { mergeEvalShards, ShardBundleWriter } from '../eval/evalShards.js';
import { endLoopsInThisProcessNow } from '../loop/loopRunner.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { isProcessAlive } from '../process/processGroup.js';
import { groupsDir, worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { evalsDir, type EvalRecordLine, type EvalRecordLineOf, type EvalResults } from '../sessionFormat/evalRecords.js';
import { shardText, type Shard } from '../sessionFormat/shards.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { sessionsDir, sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { renderEvalHtml } from './evalHtml.js';
import { renderEvalMarkdown } from './evalText.js';
import { EXIT_CODES } from './exitCodes.js';
import { userLayersOf } from './runSetup.js';
import { runFromTerminal, writeStderr } from './terminalRun.js';
import { prepareRunAsking } from './trustPrompt.js';
import { UsageError } from './usageError.js';
import { printAnswer } from './answers.js';
import { openStore } from './openStore.js';
import { parseShardOption, type ShardChoice } from './shardOption.js';

/**
 * `codeloops eval SUITE.toml [--jobs N] [--json] [--html FILE]`, `codeloops eval --resume <eval_id>`:
 * a suite's tasks run with each of its configs, each run a loop in its own worktree
 * whose final tree the task's hidden acceptance command judges; the results as
 * Markdown on stdout (or JSON), and as an HTML report with `--html`; progress on stderr. Ctrl+C stops every loop; the runs
 * that finished stay finished, and `--resume` runs the rest.
 */

export interface EvalOptions {
  resume?: string;
  jobs?: number;
  json?: boolean;
  /** Also write the results as a self-contained HTML report to this file. */
  html?: string;
  /** Run what the task repositories' codeloops.toml adds without asking (`--trust`). */
  trust?: boolean;
  /** `--shard I/N` (or `auto/N`, `auto`): only this share of the runs. */
  shard?: string;
  /** `--export FILE`: when this process's part ends, however it ends, a bundle of its runs for `eval merge`. */
  export?: string;
  /** `--dry-run`: say which runs would run (this shard's), where the shard came from, and the commits; run nothing. */
  dryRun?: boolean;
}

export async function evalCommand(suiteFile: string | undefined, options: EvalOptions): Promise<number> {
  if ((suiteFile === undefined) === (options.resume === undefined))
    throw new UsageError('Give a suite file to start an eval, or --resume <eval_id> to carry one on; not both.');
  if (options.html !== undefined) assertWritableFolder(options.html);
  if (options.export !== undefined) assertWritableFolder(options.export);
  if (options.shard !== undefined && options.resume !== undefined)
    throw new UsageError('--resume carries an eval on with the shard it was started with: leave out --shard.');
  const choice = parseShardOption(options.shard);
  const state = suiteFile === undefined ? await resumableEval(options.resume!) : null;
  const suite = suiteFile === undefined ? null : readSuite(suiteFile, process.cwd());
  const tasks = state ? state.started.tasks : await planTasks(suite!);
  if (options.dryRun)
    return dryRun(
      state?.started ?? { suite: suite!.name, repetitions: suite!.repetitions, tasks, configs: suite!.configs, shard: choice?.shard ?? null },
      choice,
      options,
    );
  const configs = state
    ? state.started.configs.map((config) => parseSuiteConfig(config.table, `${state.started.suite_file} (as eval ${state.id} recorded it)`))
    : suite!.configs;
  const suiteName = state?.started.suite ?? suite!.name;
  // Every agent and every config is checked before the first run starts: a missing agent fails the eval at once.
  const prepared = new Map<string, PreparedRun>();
  for (const task of tasks) {
    for (const config of configs) {
      const run = await prepareRunAsking(
        { workingDir: task.repository, recordedLayer: layerFromSuiteConfig(config, suiteName), userLayers: userLayersOf({}), trust: options.trust },
        !options.json,
      );
      prepared.set(JSON.stringify([task.name, config.name]), run);
    }
  }
  const jobs = options.jobs ?? state?.started.jobs ?? 1;
  const { recorder, evalState } = state ? resumeRecord(state, jobs) : startRecord(suite!, tasks, configs, jobs, choice?.shard ?? null);
  const share = shareOf(evalState.started);
  const done = share.filter((key) => evalState.finished.has(runKeyText(key))).length;
  const shard = evalState.started.shard;
  writeStderr(
    `${state ? 'Carrying on' : 'Started'} eval ${evalState.id} (${sanitizeForTerminal(suiteName)})${shard ? `, shard ${shardText(shard)} (${share.length} of its ${runsOf(evalState.started).length} runs)` : ''}: ${share.length - done} of ${share.length} runs to go, ${jobs} at a time.\n`,
  );
  const progress = new EvalProgress(share.length, done);
  const bundle = options.export === undefined ? null : shardBundle(evalState.id, options.export);
  const status = await runFromTerminal(
    {
      stopping: 'stopping every run of the eval (finished runs stay finished)',
      endNow: (ending, failure) => {
        endLoopsInThisProcessNow(ending, failure);
        stopEval(recorder, ending);
      },
    },
    ({ signal }) =>
      runEval({
        state: evalState,
        recorder,
        prepared: (task, config) => prepared.get(JSON.stringify([task, config]))!,
        jobs,
        sessionsDirectory: sessionsDir(),
        sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
        worktreesDirectory: worktreesDir(),
        signal,
        onRecord: (line) => {
          progress.update(line);
          if (line.type === 'run_finished') bundle?.update();
        },
      }),
  ).finally(async () => {
    progress.end();
    recorder.close();
    // Whatever ended it, the runs that finished travel: a shard that stopped midway says so in its bundle.
    if (bundle) reportExport(await bundle.close());
  });
  return report(evalState.id, status, options);
}

/** `--export`: the shard's bundle, written before the first run (a shard that dies before any run finished still says so) and as each finishes. */
function shardBundle(evalId: string, output: string): ShardBundleWriter {
  const bundle = new ShardBundleWriter(
    evalsDir(),
    evalId,
    output,
    { store: openStore(), sidecarDirOf: (sessionId) => sidecarDirOf(sessionId), groupsDirectory: groupsDir() },
    (message) => writeStderr(`warning: ${sanitizeForTerminal(message)}\n`),
  );
  bundle.update();
  return bundle;
}

function reportExport(exported: Awaited<ReturnType<ShardBundleWriter['close']>>): void {
  const { eval: shard } = exported;
  writeStderr(
    `Wrote ${sanitizeForTerminal(exported.file)}: ${shard.finished} of ${shard.runs} runs${shard.complete ? '' : ' (the shard did not finish: its other runs are missing)'}, ${exported.sessions.length} sessions, ${exported.snapshot_refs} snapshot refs.\n`,
  );
  for (const warning of exported.warnings) writeStderr(`warning: ${sanitizeForTerminal(warning)}\n`);
}

/** `--dry-run`: the runs this shard would run, and where its share came from. */
function dryRun(plan: DryRunPlan, choice: ShardChoice | null, options: EvalOptions): number {
  const runs = shareOf(plan);
  const answer = {
    suite: plan.suite,
    shard: plan.shard ?? null,
    shard_source: plan.shard ? (choice?.source ?? 'the eval record') : null,
    tasks: plan.tasks.map((task) => ({ name: task.name, repository: task.repository, ref: task.ref, commit: task.commit })),
    runs: runs.map(({ number, task, config, repetition }) => ({ number, task, config, repetition })),
    total_runs: runsOf(plan).length,
  };
  if (options.json) return (printAnswer('eval --dry-run', answer), EXIT_CODES.success);
  const lines = [
    `Eval of ${sanitizeForTerminal(plan.suite)}: ${answer.total_runs} runs${plan.shard ? `; shard ${shardText(plan.shard)} (from ${answer.shard_source}) runs ${runs.length} of them` : ''}.`,
    ...answer.tasks.map(
      (task) =>
        `  task ${sanitizeForTerminal(JSON.stringify(task.name))}: ${sanitizeForTerminal(task.ref)} at ${task.commit.slice(0, 12)} in ${sanitizeForTerminal(task.repository)}`,
    ),
    ...runs.map(
      (run) =>
        `  run ${run.number}: task ${sanitizeForTerminal(JSON.stringify(run.task))}, config ${sanitizeForTerminal(JSON.stringify(run.config))}, repetition ${run.repetition}`,
    ),
    'Nothing was run (--dry-run).',
  ];
  process.stdout.write(lines.join('\n') + '\n');
  return EXIT_CODES.success;
}

interface DryRunPlan extends EvalPlan {
  suite: string;
  tasks: EvalState['started']['tasks'];
}

/** Checked before any run starts: an eval of hours must not end unable to write its report. */
function assertWritableFolder(file: string): void {
  const folder = path.dirname(path.resolve(file));
  if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`The report's folder ${folder} does not exist: make it, or name a file in a folder that does.`);
  if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new UsageError(`${file} is a folder: name the report's file.`);
}

/** An eval to carry on: it exists, and no other process runs it now. */
async function resumableEval(typed: string): Promise<EvalState> {
  const state = await readEval(evalsDir(), resolveEvalId(evalsDir(), typed));
  const runner = state.runner;
  if (runner && !runner.stopped && runner.pid !== process.pid && isProcessAlive(runner.pid)) {
    throw new CodeloopsError('loop_running', `Eval ${state.id} is running in process ${runner.pid}; stop it before carrying it on.`, { pid: runner.pid });
  }
  return state;
}

function startRecord(
  suite: NonNullable<ReturnType<typeof readSuite>>,
  tasks: EvalState['started']['tasks'],
  configs: typeof suite.configs,
  jobs: number,
  shard: Shard | null,
) {
  const recorder = EvalRecorder.createNamed(evalsDir(), suite.name);
  const evalId = recorder.evalId;
  const started = recorder.record({
    type: 'eval_started',
    eval_id: evalId,
    suite: suite.name,
    suite_file: suite.file,
    repetitions: suite.repetitions,
    jobs,
    tasks,
    configs: configs.map((table) => ({ name: table.name, table })),
    pid: process.pid,
    ...(shard ? { shard } : {}),
  }) as EvalRecordLineOf<'eval_started'>;
  return { recorder, evalState: { id: evalId, started, finished: new Map(), sessionIds: [], runner: null } satisfies EvalState };
}

function resumeRecord(state: EvalState, jobs: number) {
  const recorder = EvalRecorder.open(evalsDir(), state.id);
  recorder.record({ type: 'eval_resumed', jobs, pid: process.pid });
  return { recorder, evalState: state };
}

async function report(evalId: string, status: EvalStatus, options: EvalOptions): Promise<number> {
  const state = await readEval(evalsDir(), evalId);
  const results = evalResultsOf(state);
  if (status !== 'finished' || !results.complete) {
    const share = shareOf(state.started).length;
    writeStderr(
      `Eval ${evalId} stopped with ${share - results.missing_runs.length} of ${share} runs finished. Carry it on: codeloops eval --resume ${evalId}\n`,
    );
    return status === 'interrupted' ? EXIT_CODES.interrupted : EXIT_CODES.failed;
  }
  writeResults(results, options);
  return EXIT_CODES.success;
}

/** The results on stdout (Markdown, or JSON with `--json`), and as an HTML report with `--html`. */
function writeResults(results: EvalResults, options: { json?: boolean; html?: string }, answer?: () => void): void {
  if (options.json) (answer ?? (() => printAnswer('eval', results)))();
  else process.stdout.write(renderEvalMarkdown(results));
  if (options.html !== undefined) {
    fs.writeFileSync(options.html, renderEvalHtml(results));
    writeStderr(`Wrote the report to ${sanitizeForTerminal(options.html)}.\n`);
  }
}

/** Exit code of `eval merge` when the merged eval has runs missing (a shard not given, or one that stopped midway). */
export const MERGE_INCOMPLETE_EXIT = 3;

export interface EvalMergeOptions {
  workingDir?: string;
  json?: boolean;
  html?: string;
  maxUnpackedMb?: number;
  /** `--partial`: take what a shard that stopped midway finished. */
  partial?: boolean;
}

/** `codeloops eval merge BUNDLE…`: the shards' bundles made one eval here; its results as one machine's would be. */
export async function evalMergeCommand(bundles: string[], options: EvalMergeOptions): Promise<number> {
  if (options.html !== undefined) assertWritableFolder(options.html);
  const merged = await mergeEvalShards({
    bundleFiles: bundles,
    targetDir: path.resolve(options.workingDir ?? process.cwd()),
    evalsDirectory: evalsDir(),
    store: openStore(),
    sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
    groupsDirectory: groupsDir(),
    partial: options.partial === true,
    ...(options.maxUnpackedMb === undefined ? {} : { maxUnpackedBytes: options.maxUnpackedMb * 1024 * 1024 }),
  });
  for (const warning of merged.warnings) writeStderr(`warning: ${sanitizeForTerminal(warning)}\n`);
  const results = evalResultsOf(await readEval(evalsDir(), merged.evalId));
  writeStderr(
    `Merged ${merged.shards.length} bundle${merged.shards.length === 1 ? '' : 's'} into eval ${merged.evalId}: ${results.runs.length} runs${results.complete ? '' : `, ${results.missing_runs.length} missing (run them here: codeloops eval --resume ${merged.evalId})`}.\n`,
  );
  writeResults(results, options, () =>
    printAnswer('eval merge', {
      ...results,
      shards: merged.shards,
      warnings: merged.warnings,
    }),
  );
  return results.complete ? EXIT_CODES.success : MERGE_INCOMPLETE_EXIT;
}

/** On a terminal, one line that counts the runs as they finish; otherwise a line per finished run. */
class EvalProgress {
  private running = 0;
  private readonly counts = new Map<string, number>();
  private readonly terminal = Boolean(process.stderr.isTTY);

  constructor(
    private readonly total: number,
    private finished: number,
  ) {}

  update(line: EvalRecordLine): void {
    if (line.type === 'run_started') this.running += 1;
    if (line.type !== 'run_finished') return this.draw();
    this.running = Math.max(0, this.running - 1);
    this.finished += 1;
    this.counts.set(line.outcome, (this.counts.get(line.outcome) ?? 0) + 1);
    if (!this.terminal) {
      const what = `task ${JSON.stringify(line.task)}, config ${JSON.stringify(line.config)}, repetition ${line.repetition}`;
      writeStderr(
        `[${this.finished}/${this.total}] ${sanitizeForTerminal(what)}: ${line.outcome} (${line.iterations} iteration${line.iterations === 1 ? '' : 's'})\n`,
      );
    }
    this.draw();
  }

  private draw(): void {
    if (!this.terminal) return;
    const width = Math.max(20, (process.stderr.columns ?? 80) - 1);
    const done = Math.round((this.finished / Math.max(1, this.total)) * 20);
    const outcomes = [...this.counts].map(([outcome, count]) => `${outcome} ${count}`).join(', ');
    const text = `[${'#'.repeat(done)}${'.'.repeat(20 - done)}] ${this.finished}/${this.total} runs, ${this.running} running${outcomes ? ` · ${outcomes}` : ''}`;
    writeStderr(`\r${text.slice(0, width).padEnd(width)}`);
  }

  end(): void {
    if (this.terminal) writeStderr('\n');
  }
}
