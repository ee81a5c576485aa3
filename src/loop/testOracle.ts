import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { checkDirectory, runCheck, type CheckResult, type CheckSpec } from '../checks/runCheck.js';
import { openRepository, type Repository } from '../git/repository.js';
import { restoreChangedPaths } from '../git/restore.js';
import { addWorktree, listWorktrees, removeEmptyFolders, removeWorktree } from '../git/worktrees.js';
import type { GroupRecorder } from '../process/processGroup.js';
import type { TestFinding, TestReport, TestRunner } from '../sessionFormat/testResults.js';
import { testCountsOf, type TestCounts } from '../sessionFormat/testResults.js';
import { startTestsCommit } from '../verify/startTests.js';
import type { IsolationSettings } from './isolatedCheck.js';
import { oracleEnvironment } from './oracleEnvironment.js';
import { readyWorktree } from './worktreeSetup.js';

/**
 * The start's tests, run on the final code: the judge of a DONE that no rename, skip or
 * stand-in of the actor's can fool (see `verify/startTests.ts` for what is put back).
 *
 * When the loop starts, the required checks whose runner is known run once on the
 * start tree, in a worktree of their own readied with the dependencies as they are
 * then (`[worktree]`), beside the first actor run: the tests that pass are the
 * **baseline**. At a DONE, that same worktree is moved to the oracle's tree (the final
 * code with the start's tests) and the checks run again in a clean environment. Every
 * baseline test must pass; one that fails is `test_regressed`, one that is missing,
 * skipped or xfailed is `test_missing`. A test that fails again on the start tree is
 * flaky: left out, and said so.
 */

/** One check's tests on the start tree. */
export interface BaselineCheck {
  check: string;
  runner: TestRunner;
  /** The ids of the tests that passed: each must pass on the final code, or it regressed. */
  passing: string[];
  /** The ids of the tests that failed: the task's to fix, as a required check's; each must pass on the final code too. */
  failing: string[];
  counts: TestCounts;
}

/** The baseline, or why there is none (no required check with a known runner, the worktree could not be readied…). */
export type TestBaseline = { checks: BaselineCheck[]; unavailable: null } | { checks: []; unavailable: string };

/** A baseline test the final code does not pass (see `TestFinding`). */
export type OracleFinding = TestFinding;

export interface OracleJudgement {
  /** The oracle's tree (the final code, the start's tests), a commit. */
  commit: string;
  /** The paths put back as at the start, or left out. */
  restored: string[];
  findings: OracleFinding[];
  /** Baseline tests that failed on the start tree too when run again: left out. */
  flaky: { check: string; id: string }[];
  /** Baseline tests that passed on the final code. */
  passed: number;
  baseline: number;
  /** The oracle's runs of the checks, for the record. */
  results: CheckResult[];
}

export interface OracleSetup {
  repository: Repository;
  workingDir: string;
  sessionId: string;
  /** The task's first snapshot's commit. */
  startCommit: string;
  checks: readonly CheckSpec[];
  isolation: IsolationSettings;
  /** `[verify] protected`: the user's own test patterns. */
  userProtected: readonly string[];
  groups?: GroupRecorder;
  /** A baseline an earlier run of the task took on the same start tree (`resume`): taken instead of running the tests again. */
  recorded?: TestBaseline;
}

/** Why there is no baseline when no required check is seen by the agents: nothing to say of a run without checks. */
export const NO_ORACLE_CHECKS = 'no required check';

/** The shell's "command not found". */
const COMMAND_NOT_FOUND = 127;

export class TestOracle {
  private readonly worktree: string;
  private readonly home: string;
  private baselineRun: Promise<TestBaseline> | null = null;
  /** The worktree at the start tree, readied with the dependencies as they are then; why not, when it could not be. */
  private prepared: Promise<string | null> | null = null;
  /** The commit the worktree's files are at now. */
  private current: string;
  private worktreeRepository: Repository | null = null;
  /**
   * The worktree as the oracle last left it (after its own moves and runs), as
   * `worktreeFingerprint` gives it; null before it is made. The worktree sits under the
   * user's home and `git worktree list` names it: the actor, running as the user, can
   * edit a test file there or plant a runner configuration between the baseline and the
   * DONE, and a move only rewrites the paths that differ between two commits.
   */
  private leftAs: string | null = null;
  /** The files runners find above the worktree (`foundAbove`), as they were when it was made. */
  private aboveAs: string | null = null;

  constructor(private readonly setup: OracleSetup) {
    this.worktree = path.join(setup.isolation.directory, 'oracle', setup.sessionId, path.basename(setup.repository.root));
    this.home = path.join(setup.isolation.directory, 'oracle', setup.sessionId, 'home');
    this.current = setup.startCommit;
  }

  /** The checks the oracle judges by: required, seen by the agents, run each iteration or at DONE. */
  private get oracleChecks(): CheckSpec[] {
    return this.setup.checks.filter((check) => check.required && !check.hidden && check.runner !== 'none');
  }

  /** Starts the baseline (once); it runs while the first actor works. */
  baseline(signal: AbortSignal): Promise<TestBaseline> {
    const recorded = this.setup.recorded;
    this.baselineRun ??= (recorded ? Promise.resolve(recorded) : this.runBaseline(signal)).catch((error: unknown) => ({
      checks: [],
      unavailable: `the start tree's worktree could not be made: ${(error as Error).message}`,
    }));
    return this.baselineRun;
  }

  /** Makes the start tree's worktree once (the baseline and the acceptance checks share it); null when ready, else why not. */
  private prepare(signal: AbortSignal): Promise<string | null> {
    this.prepared ??= (async () => {
      await removeLeftovers(this.setup.repository, path.dirname(path.dirname(this.worktree)), this.worktree);
      if (fs.existsSync(this.worktree)) await removeWorktree(this.setup.repository, this.worktree);
      // Before the worktree: whoever finds it finds whose it is.
      fs.mkdirSync(path.dirname(this.worktree), { recursive: true, mode: 0o700 });
      fs.writeFileSync(ownerFile(this.worktree), `${process.pid}\n`);
      // No hook of the repository's runs: the actor can write them (see `addWorktree`).
      await addWorktree(this.setup.repository, this.worktree, this.setup.startCommit, { hooks: false });
      this.worktreeRepository = await openRepository(this.worktree);
      const readied = await readyWorktree(
        { sourceRoot: this.setup.repository.root, worktree: this.worktree, workingDir: this.workingDir },
        this.setup.isolation.worktree,
        signal,
      );
      this.leftAs = worktreeFingerprint(this.worktree);
      this.aboveAs ??= foundAbove(this.worktree);
      return readied.setup && !readied.setup.passed ? `the worktree setup \`${readied.setup.command}\` failed` : null;
    })();
    return this.prepared;
  }

  /**
   * Makes the worktree again when anything in it changed since the oracle last left it:
   * what another process wrote there is never what the start's tests run on. The
   * dependencies are then readied again from the user's tree as it is now (as for a
   * recorded baseline). Null when ready, else why not.
   */
  private async untouched(signal: AbortSignal): Promise<string | null> {
    const unready = await this.prepare(signal);
    if (unready || this.leftAs === null || worktreeFingerprint(this.worktree) === this.leftAs) return unready;
    this.prepared = null;
    this.worktreeRepository = null;
    this.current = this.setup.startCommit;
    this.leftAs = null;
    return this.prepare(signal);
  }

  private async runBaseline(signal: AbortSignal): Promise<TestBaseline> {
    if (this.oracleChecks.length === 0) return { checks: [], unavailable: NO_ORACLE_CHECKS };
    const unready = await this.prepare(signal);
    if (unready) return { checks: [], unavailable: unready };
    const checks: BaselineCheck[] = [];
    const reasons: string[] = [];
    for (const check of this.oracleChecks) {
      const result = await this.run(check, signal);
      if (result.report) {
        const idsOf = (outcome: string) => result.report!.tests.filter((test) => test.outcome === outcome).map((test) => test.id);
        checks.push({
          check: check.name,
          runner: result.report.runner,
          passing: idsOf('passed'),
          failing: idsOf('failed'),
          counts: testCountsOf(result.report),
        });
      } else if (result.timedOut) {
        // Its runner is read: saying none is would send the user looking for the wrong thing.
        reasons.push(`${check.name} did not finish on the start tree within its ${check.timeoutSecs} s (its timeout)`);
      } else if (result.tests === null && result.exitCode === COMMAND_NOT_FOUND) {
        reasons.push(`${check.name} could not run in a clean worktree of the start (a command was not found: set [worktree] copy or setup)`);
      }
    }
    if (checks.length > 0) return { checks, unavailable: null };
    return { checks: [], unavailable: reasons[0] ?? 'no required check runs a test runner Codeloops reads: DONE rests on exit codes' };
  }

  /**
   * An acceptance check (hidden) on `finalCommit` as the start's tests run: in the
   * start tree's worktree (the dependencies as they were), the final code with the
   * start's tests, runner configuration and what the checks run put back (the acceptance
   * check's own script too), in a clean environment. The actor's `test` script never
   * decides it. Null when the worktree could not be made (the caller runs it as before).
   */
  async runAcceptance(check: CheckSpec, finalCommit: string, signal: AbortSignal): Promise<CheckResult | null> {
    try {
      if (await this.untouched(signal)) return null;
      await this.moveTo((await this.startTestsOn(finalCommit)).commit);
      return await this.run(check, signal);
    } catch {
      return null;
    }
  }

  /** The oracle's tree for `finalCommit`: what every check that judges runs put back as at the start, the acceptance checks' too. */
  private startTestsOn(finalCommit: string): Promise<{ commit: string; restored: string[] }> {
    const judging = this.setup.checks.filter((check) => check.hidden || this.oracleChecks.includes(check));
    const follow = judging.map((check) => ({ name: check.name, run: check.run, folder: check.folder ?? this.workingDirPrefix }));
    return startTestsCommit(this.setup.repository, this.setup.startCommit, finalCommit, follow, this.setup.userProtected);
  }

  /** The start's tests on `finalCommit`. Null when there is no baseline to judge by. */
  async judge(finalCommit: string, signal: AbortSignal): Promise<OracleJudgement | null> {
    const baseline = await this.baseline(signal);
    if (baseline.unavailable !== null) return null;
    // A recorded baseline made no worktree yet, and one changed since is made again. One that cannot be readied now
    // fails every baseline test: the caller took the actor's changes to the tests as hints, since the oracle judges.
    const unready = await this.untouched(signal).catch((error: unknown) => `the worktree could not be made: ${(error as Error).message}`);
    if (unready) return unjudged(baseline.checks, finalCommit, `the start's tests could not run: ${unready}`);
    if (foundAbove(this.worktree) !== this.aboveAs)
      return unjudged(
        baseline.checks,
        finalCommit,
        `the start's tests could not run as at the start: a file runners read above their tree (${FOUND_ABOVE.join(', ')}) appeared or changed in a folder above ${this.worktree}`,
      );
    const oracle = await this.startTestsOn(finalCommit);
    await this.moveTo(oracle.commit);
    const results: CheckResult[] = [];
    const findings: OracleFinding[] = [];
    let passed = 0;
    for (const held of baseline.checks) {
      const check = this.oracleChecks.find((candidate) => candidate.name === held.check)!;
      const result = await this.run(check, signal);
      results.push(result);
      const judged = judgeAgainst(held, result.report);
      passed += judged.passed;
      findings.push(...judged.findings);
    }
    // Only a test that passed on the start tree can be flaky there: one that failed is the task's to fix.
    const regressions = findings.filter((finding) => baseline.checks.some((held) => held.check === finding.check && held.passing.includes(finding.id)));
    const flaky = regressions.length > 0 && !signal.aborted ? await this.flakyAmong(regressions, baseline.checks, signal) : [];
    const isFlaky = (finding: OracleFinding) => flaky.some((test) => test.check === finding.check && test.id === finding.id);
    const baselineSize = baseline.checks.reduce((sum, check) => sum + check.passing.length + check.failing.length, 0);
    return {
      commit: oracle.commit,
      restored: oracle.restored,
      findings: findings.filter((finding) => !isFlaky(finding)),
      flaky,
      passed,
      baseline: baselineSize - flaky.length,
      results,
    };
  }

  /** Of the tests the oracle found wanting, those that do not pass on the start tree either, run again. */
  private async flakyAmong(
    findings: readonly OracleFinding[],
    baseline: readonly BaselineCheck[],
    signal: AbortSignal,
  ): Promise<{ check: string; id: string }[]> {
    await this.moveTo(this.setup.startCommit);
    const flaky: { check: string; id: string }[] = [];
    for (const held of baseline) {
      const wanting = findings.filter((finding) => finding.check === held.check);
      if (wanting.length === 0) continue;
      const check = this.oracleChecks.find((candidate) => candidate.name === held.check)!;
      const again = await this.run(check, signal);
      const outcomes = new Map((again.report?.tests ?? []).map((test) => [test.id, test.outcome]));
      for (const finding of wanting) if (outcomes.get(finding.id) !== 'passed') flaky.push({ check: held.check, id: finding.id });
    }
    return flaky;
  }

  private async moveTo(commit: string): Promise<void> {
    if (commit === this.current) return;
    await restoreChangedPaths(this.worktreeRepository ?? (await openRepository(this.worktree)), this.current, commit);
    this.current = commit;
    this.leftAs = worktreeFingerprint(this.worktree);
  }

  /** Runs a check in the worktree, in a clean environment with an empty home. */
  private async run(check: CheckSpec, signal: AbortSignal): Promise<CheckResult> {
    fs.mkdirSync(this.home, { recursive: true, mode: 0o700 });
    const env = oracleEnvironment(process.env, { home: this.home, repositoryRoot: this.setup.repository.root });
    try {
      return await runCheck(check, {
        cwd: checkDirectory(check, { root: this.worktree, workingDir: this.workingDir }),
        signal,
        env,
        groups: this.setup.groups,
      });
    } finally {
      // What the tests wrote in their tree (a cache, a report) is theirs: the next look starts from here.
      this.leftAs = worktreeFingerprint(this.worktree);
    }
  }

  private get workingDir(): string {
    return path.join(this.worktree, this.workingDirPrefix);
  }

  private get workingDirPrefix(): string {
    return path.relative(this.setup.repository.root, this.setup.workingDir);
  }

  /** Removes the worktree and its home; the oracle's commits stay unreferenced in git's store until its next cleanup. */
  async dispose(): Promise<void> {
    await this.baselineRun?.catch(() => undefined);
    await this.prepared?.catch(() => undefined);
    await removeWorktree(this.setup.repository, this.worktree).catch(() => fs.rmSync(this.worktree, { recursive: true, force: true }));
    fs.rmSync(this.home, { recursive: true, force: true });
    fs.rmSync(ownerFile(this.worktree), { force: true });
    removeEmptyFolders(path.dirname(this.worktree), this.setup.isolation.directory);
  }
}

/**
 * Every entry under `folder` (symbolic links not followed) with its type, size, mode,
 * inode and change time, hashed: a write, a rename or a new file changes the change
 * time, which no one but the clock sets. Empty when the folder is gone.
 */
export function worktreeFingerprint(folder: string): string {
  const hash = createHash('sha256');
  const visit = (relative: string): void => {
    const absolute = path.join(folder, relative);
    const stat = fs.lstatSync(absolute, { throwIfNoEntry: false, bigint: true });
    if (!stat) return;
    hash.update(`${relative}\0${stat.mode}\0${stat.size}\0${stat.ino}\0${stat.ctimeNs}\0${stat.mtimeNs}\n`);
    if (!stat.isDirectory()) return;
    let names: string[];
    try {
      names = fs.readdirSync(absolute).sort();
    } catch {
      return;
    }
    for (const name of names) visit(path.join(relative, name));
  };
  visit('');
  return hash.digest('hex');
}

/**
 * Files runners look for in the folders above the one they run in, when the tree has
 * none: mocha's and pytest's configuration, node's `node_modules` and `package.json`,
 * go's `go.work`, cargo's `.cargo` (read in every folder up). Those are outside the
 * worktree, where the fingerprint does not look, and a `.mocharc.yml` that requires a
 * patch, put in the oracle's folder or the home, would load in the oracle's run.
 */
const FOUND_ABOVE = [
  '.mocharc.js',
  '.mocharc.cjs',
  '.mocharc.yaml',
  '.mocharc.yml',
  '.mocharc.jsonc',
  '.mocharc.json',
  'package.json',
  'node_modules',
  'babel.config.js',
  'babel.config.json',
  'pytest.ini',
  '.pytest.ini',
  'pyproject.toml',
  'tox.ini',
  'setup.cfg',
  'conftest.py',
  'go.work',
  '.cargo',
];

/** Which of `FOUND_ABOVE` are in the folders above `folder`, each with its change time: one added, removed or written changes it. */
function foundAbove(folder: string): string {
  const found: string[] = [];
  for (let current = path.dirname(folder); ; current = path.dirname(current)) {
    for (const name of FOUND_ABOVE) {
      const stat = fs.lstatSync(path.join(current, name), { throwIfNoEntry: false, bigint: true });
      if (stat) found.push(`${path.join(current, name)}\0${stat.ino}\0${stat.ctimeNs}`);
    }
    if (path.dirname(current) === current) return found.join('\n');
  }
}

/** The file beside an oracle's worktree that holds the pid of the runner it is for. */
function ownerFile(worktree: string): string {
  return path.join(path.dirname(worktree), 'owner');
}

/**
 * The oracle worktrees of this repository whose runner is gone (killed, crashed: its
 * `dispose` never ran), removed with their folders: each session has a folder of its
 * own, so nothing else would ever remove them, and each stays in the repository's
 * `git worktree list` with its copy of the dependencies. One whose runner still runs
 * (another loop, a candidate, an eval run) or that holds no owner is left alone.
 */
async function removeLeftovers(repository: Repository, oracleFolder: string, own: string): Promise<void> {
  const real = (folder: string) => {
    try {
      return fs.realpathSync(folder);
    } catch {
      return folder;
    }
  };
  const folder = real(oracleFolder);
  for (const entry of await listWorktrees(repository).catch(() => [])) {
    if (path.dirname(path.dirname(real(entry.path))) !== folder || real(entry.path) === real(own)) continue;
    if (ownerRuns(ownerFile(entry.path))) continue;
    await removeWorktree(repository, entry.path).catch(() => undefined);
    fs.rmSync(path.dirname(entry.path), { recursive: true, force: true });
  }
}

function ownerRuns(file: string): boolean {
  let pid: number;
  try {
    pid = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
  } catch {
    return true; // not an owner this code wrote: not ours to judge
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Every baseline test missing, for `reason`: a verdict that refuses the DONE rather than none. */
function unjudged(checks: readonly BaselineCheck[], commit: string, reason: string): OracleJudgement {
  const findings = checks.flatMap((held) =>
    [...held.passing, ...held.failing].map((id): OracleFinding => ({ check: held.check, id, kind: 'test_missing', outcome: 'not_collected', message: reason })),
  );
  return { commit, restored: [], findings, flaky: [], passed: 0, baseline: findings.length, results: [] };
}

/** How the final code's report stands against one check's baseline. */
function judgeAgainst(held: BaselineCheck, report: TestReport | null): { passed: number; findings: OracleFinding[] } {
  const outcomes = new Map((report?.tests ?? []).map((test) => [test.id, test]));
  const findings: OracleFinding[] = [];
  let passed = 0;
  const failedAtStart = new Set(held.failing);
  for (const id of [...held.passing, ...held.failing]) {
    const test = outcomes.get(id);
    if (test?.outcome === 'passed') passed += 1;
    else if (test?.outcome === 'failed')
      findings.push({ check: held.check, id, kind: failedAtStart.has(id) ? 'test_failing' : 'test_regressed', outcome: 'failed', message: test.message });
    else {
      const message = test ? '' : report === null ? `${held.runner} wrote no report` : (report.errors[0] ?? '');
      findings.push({ check: held.check, id, kind: 'test_missing', outcome: test?.outcome ?? 'not_collected', message });
    }
  }
  return { passed, findings };
}
