import fs from 'node:fs';
import path from 'node:path';
import { layerFromSuiteConfig, parseSuiteConfig, readSuite } from '../config/evalSuite.js';
import { evalResultsOf } from '../eval/evalResults.js';
import { planTasks } from '../eval/evalPlan.js';
import { EvalRecorder, readEval, resolveEvalId, runKeyText, type EvalState } from '../eval/evalRecord.js';
import { runEval, runsOf, stopEval, type EvalStatus } from '../eval/runEval.js';
import { endLoopsInThisProcessNow } from '../loop/loopRunner.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { isProcessAlive } from '../process/processGroup.js';
import { worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { evalIdFor, evalsDir, type EvalRecordLine, type EvalRecordLineOf } from '../sessionFormat/evalRecords.js';
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
}

export async function evalCommand(suiteFile: string | undefined, options: EvalOptions): Promise<number> {
  if ((suiteFile === undefined) === (options.resume === undefined))
    throw new UsageError('Give a suite file to start an eval, or --resume <eval_id> to carry one on; not both.');
  if (options.html !== undefined) assertWritableFolder(options.html);
  const state = suiteFile === undefined ? await resumableEval(options.resume!) : null;
  const suite = suiteFile === undefined ? null : readSuite(suiteFile, process.cwd());
  const tasks = state ? state.started.tasks : await planTasks(suite!);
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
  const { recorder, evalState } = state ? resumeRecord(state, jobs) : startRecord(suite!, tasks, configs, jobs);
  const total = runsOf(evalState.started).length;
  writeStderr(
    `${state ? 'Carrying on' : 'Started'} eval ${evalState.id} (${sanitizeForTerminal(suiteName)}): ${total - evalState.finished.size} of ${total} runs to go, ${jobs} at a time.\n`,
  );
  const progress = new EvalProgress(total, evalState.finished.size);
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
        onRecord: (line) => progress.update(line),
      }),
  ).finally(() => {
    progress.end();
    recorder.close();
  });
  return report(evalState.id, status, options);
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

function startRecord(suite: NonNullable<ReturnType<typeof readSuite>>, tasks: EvalState['started']['tasks'], configs: typeof suite.configs, jobs: number) {
  const recorder = createRecorder(suite.name);
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
  }) as EvalRecordLineOf<'eval_started'>;
  return { recorder, evalState: { id: evalId, started, finished: new Map(), sessionIds: [], runner: null } satisfies EvalState };
}

/** The eval's record, named by the start second or, when another eval of the same suite took it, the next free one. */
function createRecorder(suiteName: string): EvalRecorder {
  const now = Date.now();
  for (let offsetSecs = 0; ; offsetSecs++) {
    try {
      return EvalRecorder.create(evalsDir(), evalIdFor(new Date(now + offsetSecs * 1000), suiteName));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || offsetSecs >= 3600) throw error;
    }
  }
}

function resumeRecord(state: EvalState, jobs: number) {
  const recorder = EvalRecorder.open(evalsDir(), state.id);
  recorder.record({ type: 'eval_resumed', jobs, pid: process.pid });
  return { recorder, evalState: state };
}

async function report(evalId: string, status: EvalStatus, options: EvalOptions): Promise<number> {
  const state = await readEval(evalsDir(), evalId);
  const complete = runsOf(state.started).every((key) => state.finished.has(runKeyText(key)));
  if (status !== 'finished' || !complete) {
    writeStderr(
      `Eval ${evalId} stopped with ${state.finished.size} of ${runsOf(state.started).length} runs finished. Carry it on: codeloops eval --resume ${evalId}\n`,
    );
    return status === 'interrupted' ? EXIT_CODES.interrupted : EXIT_CODES.failed;
  }
  const results = evalResultsOf(state);
  if (options.json) printAnswer('eval', results);
  else process.stdout.write(renderEvalMarkdown(results));
  if (options.html !== undefined) {
    fs.writeFileSync(options.html, renderEvalHtml(results));
    writeStderr(`Wrote the report to ${sanitizeForTerminal(options.html)}.\n`);
  }
  return EXIT_CODES.success;
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
