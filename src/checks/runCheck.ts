import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { superviseGroup, type GroupRecorder } from '../process/processGroup.js';
import { GIT_LOCATION_VARIABLES } from '../process/gitLocationVariables.js';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { HeadTailBuffer } from '../text/headTailBuffer.js';
import { testCountsOf, type TestCounts, type TestReport, type TestRunner } from '../sessionFormat/testResults.js';
import { openReportRun, type ReportRun } from '../testRunners/checkReportRun.js';

/** When a check runs: every iteration, or only on a DONE the `each` checks let through (slow suites, acceptance tests). */
export const CHECK_TIMINGS = ['each', 'done'] as const;
export type CheckTiming = (typeof CHECK_TIMINGS)[number];

/** One of the project's own commands that tells whether the work is right (`[[checks]]`). */
export interface CheckSpec {
  name: string;
  /** A shell command, run as a task runner would (`sh -c`, `cmd /c` on Windows). */
  run: string;
  timeoutSecs: number;
  /** A required check that fails refuses DONE; an advisory one is only shown to the critic. */
  required: boolean;
  /**
   * Where it runs, from the repository's top ('' is the top): the folder of the
   * `codeloops.toml` that declares it, whose relative paths it uses. Absent: the
   * loop's working directory (`--check`, the global config's `[defaults]`).
   */
  folder?: string;
  /** Absent: `done` for a hidden check, `each` otherwise (see `timingOf`). */
  when?: CheckTiming;
  /**
   * An acceptance check: its command, its output and what they name never reach the
   * agents' prompts; they learn its name and whether it passed. The user sees it all.
   */
  hidden?: boolean;
  /** Runs in a clean worktree of the iteration's snapshot, where nothing the actor left outside git can make it pass. */
  isolated?: boolean;
  /**
   * The test runner it runs, when its command does not show it (`make test`), or `none`
   * to count it by its exit code alone; absent: recognised from the command.
   */
  runner?: TestRunner | 'none';
}

/**
 * When a check runs. A hidden check runs at DONE unless it says otherwise: its
 * verdict on every iteration would be an oracle the actor could probe, one try at a time.
 */
export function timingOf(check: Pick<CheckSpec, 'when' | 'hidden'>): CheckTiming {
  return check.when ?? (check.hidden ? 'done' : 'each');
}

/** The folder a check runs in, in this tree (a candidate's worktree has the project's folders too). */
export function checkDirectory(check: CheckSpec, tree: { root: string; workingDir: string }): string {
  return check.folder === undefined ? tree.workingDir : path.join(tree.root, check.folder);
}

export interface CheckResult {
  name: string;
  command: string;
  required: boolean;
  /** An acceptance check: the agents are told only its name and whether it passed. */
  hidden: boolean;
  passed: boolean;
  /** null when a signal ended it (a timeout, an interrupt). */
  exitCode: number | null;
  durationSecs: number;
  timedOut: boolean;
  interrupted: boolean;
  /** Stdout and stderr as they came, head and tail kept. */
  output: string;
  outputChars: number;
  /** Its runner's counts; null when it counts by its exit code alone (no runner known, or one whose report cannot be asked for). */
  tests: TestCounts | null;
  /** Its tests one by one, from its runner's own report, as this run found them; null in a result read back from the record. */
  report: TestReport | null;
}

/** A command's run as the sidecar records it (`check_finished`, a worktree's `setup`). */
export function commandRunRecord(result: CheckResult) {
  return {
    command: result.command,
    passed: result.passed,
    exit_code: result.exitCode,
    duration_secs: result.durationSecs,
    timed_out: result.timedOut,
    output: result.output,
    output_chars: result.outputChars,
  };
}

/** A check's result back from its `check_finished` record (a recorded check was never interrupted: an interrupted one is not recorded). */
export function checkResultOf(record: Extract<RunEvent, { type: 'check_finished' }>): CheckResult {
  return {
    name: record.name,
    command: record.command,
    required: record.required,
    // A resumed actor is told of an acceptance check by its name alone, as the running loop told it.
    hidden: record.hidden === true,
    passed: record.passed,
    exitCode: record.exit_code,
    durationSecs: record.duration_secs,
    timedOut: record.timed_out,
    interrupted: false,
    output: record.output,
    outputChars: record.output_chars,
    tests: record.tests ?? null,
    report: null,
  };
}

/**
 * Why a check whose runner is known fails whatever its exit code: it ran no test (it
 * wrote no report, or one with none), or its report says a test failed (a runner
 * made to exit 0 does not hide it). Null when the report holds nothing against it.
 */
function reportRefusal(runner: TestRunner, report: TestReport | null): string | null {
  if (report === null) return `${runner} ran no test (it wrote no report)`;
  const counts = testCountsOf(report);
  if (counts.collected === 0 && report.errors.length === 0) return `${runner} ran no test`;
  if (counts.failed > 0) return `${runner}'s report says ${counts.failed} failed`;
  return null;
}

/** What a check's output keeps: its start and, more, its end (where the failures are summed up). */
const OUTPUT_HEAD_CHARS = 4_000;
const OUTPUT_TAIL_CHARS = 12_000;

/**
 * Runs a check in its own process group in the repository, keeping the head and
 * tail of its output (flat memory however much it prints), and stops the whole
 * group at its timeout or on an interrupt. Like an agent, a check has ended when its
 * process exits: what it left running in its group is ended then. Never throws: a
 * command that cannot start is a failed check.
 */
export function runCheck(
  check: CheckSpec,
  options: { cwd: string; signal?: AbortSignal; env?: NodeJS.ProcessEnv; groups?: GroupRecorder },
): Promise<CheckResult> {
  const output = new HeadTailBuffer(OUTPUT_HEAD_CHARS, OUTPUT_TAIL_CHARS);
  const decoder = new StringDecoder('utf8');
  const baseEnv: NodeJS.ProcessEnv = { ...(options.env ?? process.env), NO_COLOR: '1', CODELOOPS_CHECK: check.name };
  for (const name of GIT_LOCATION_VARIABLES) delete baseEnv[name];
  const report: ReportRun | null = openReportRun(check, options.cwd, baseEnv);
  const env = { ...baseEnv, ...report?.variables };
  const [shell, flag] = process.platform === 'win32' ? ['cmd.exe', '/c'] : ['sh', '-c'];
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(shell, [flag, report?.command ?? check.run], {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    const group = superviseGroup(child, { timeoutSecs: check.timeoutSecs, signal: options.signal, groups: options.groups });
    const take = (chunk: Buffer): void => void output.append(decoder.write(chunk));
    child.stdout.on('data', report ? (chunk: Buffer) => report.takeStdout(chunk, (text) => output.append(text)) : take);
    child.stderr.on('data', take);
    let finished = false;
    const finish = (exitCode: number | null, error?: Error): void => {
      // A program that cannot start reports an error and may close too: one result.
      if (finished) return;
      finished = true;
      group.release();
      const stopped = group.stoppedFor;
      report?.endStdout((text) => output.append(text));
      output.append(decoder.end());
      // Node says "spawn sh ENOENT" for a folder that is not there: say which is missing.
      if (error)
        output.append(`\n[codeloops: the check could not start: ${fs.existsSync(options.cwd) ? error.message : `its folder ${options.cwd} does not exist`}]`);
      if (stopped === 'timeout') output.append(`\n[codeloops: stopped after ${check.timeoutSecs} s]`);
      const tests = report && stopped === null && !error ? report.read() : null;
      report?.close();
      const refusal = report && stopped === null && !error ? reportRefusal(report.runner, tests) : null;
      if (refusal) output.append(`\n[codeloops: ${refusal}: the check fails]`);
      resolve({
        name: check.name,
        command: check.run,
        required: check.required,
        hidden: check.hidden === true,
        passed: exitCode === 0 && stopped === null && !refusal,
        exitCode,
        durationSecs: (performance.now() - started) / 1000,
        timedOut: stopped === 'timeout',
        interrupted: stopped === 'interrupt',
        output: output.toString(),
        outputChars: output.totalChars,
        tests: tests && testCountsOf(tests),
        report: tests,
      });
    };
    child.on('error', (error) => finish(null, error));
    child.on('close', (exitCode) => finish(exitCode));
  });
}
