import type { CheckResult, CheckSpec } from '../checks/runCheck.js';
import { detectWorktree } from '../config/detectWorktree.js';
import type { VerifySettings } from '../config/runSettings.js';
import type { Repository } from '../git/repository.js';
import type { Snapshot } from '../git/snapshots.js';
import type { TreeEntryChange } from '../git/treeDiff.js';
import type { GroupRecorder } from '../process/processGroup.js';
import type { NestedRepository, RunEventInput, RunEventOf } from '../sessionFormat/runEvents.js';
import type { NeedsInput } from '../sessionFormat/needsInput.js';
import type { TestFinding, VerifiedBy } from '../sessionFormat/testResults.js';
import {
  TEST_CHANGE_KINDS,
  type AcceptedChange,
  type ProtectedChange,
  type ProtectedChangeKind,
  type ProtectedChangeStatus,
} from '../sessionFormat/verification.js';
import { ProtectedFilesWatch } from '../verify/protectedChanges.js';
import type { IsolationSettings } from './isolatedCheck.js';
import { NO_ORACLE_CHECKS, TestOracle, type OracleJudgement, type TestBaseline } from './testOracle.js';

/** A protected change that stands on an iteration's tree, and whether it refuses DONE. */
export interface StandingChange {
  change: ProtectedChange;
  status: ProtectedChangeStatus;
  /** The user's reason, when they accepted it. */
  reason?: string | null;
}

/** The protected changes that stand on an iteration's tree; `weakened`: those that refuse DONE. */
export interface Protection {
  standing: StandingChange[];
  weakened: ProtectedChange[];
}

export const NO_PROTECTION: Protection = { standing: [], weakened: [] };

/** The oracle's verdict on a DONE, and the question for the user when the same test refuses it again. */
export interface DoneJudgement {
  judgement: OracleJudgement;
  askUser: NeedsInput | null;
}

/** A finding of the oracle that refuses nothing: the user accepted it, or `allow_test_changes` lets every one stand. */
type AcceptedFinding = RunEventOf<'test_oracle'>['accepted'][number];

/** What the start's tests judge by themselves once the oracle runs: the changes that could hide a failing test. */
const JUDGED_BY_TESTS: readonly ProtectedChangeKind[] = [...TEST_CHANGE_KINDS, 'check_command_changed'];

export interface DoneVerificationSetup {
  repository: Repository;
  workingDir: string;
  sessionId: string;
  checks: readonly CheckSpec[];
  verify: VerifySettings;
  isolation: IsolationSettings;
  /** The loop's working directory from the repository's top. */
  workingDirPrefix: string;
  acceptedChanges: () => Promise<Map<string, AcceptedChange>>;
  /** The start's tests the user let fail, by id, with their reasons. */
  acceptedTests: () => Promise<Map<string, string | null>>;
  /** The start's tests as an earlier run of the task found them (`resume`): taken as they are. */
  recordedBaseline?: TestBaseline;
  emit: (event: RunEventInput) => void;
  groups?: GroupRecorder;
}

/**
 * What a DONE rests on besides the critic's word, for one run (`[verify]`): the
 * actor's changes to what the gate rests on, judged against the task's first tree
 * (`ProtectedFilesWatch`), and the start's tests run on the final code (`TestOracle`).
 * While the oracle has a baseline, the changes that could hide a failing test are
 * hints, told to the agents, refusing nothing: the tests decide, so a test renamed or
 * folded into a parametrized one is never refused for its name.
 */
export class DoneVerification {
  private readonly protectedFiles: ProtectedFilesWatch;
  private oracle: TestOracle | null = null;
  /** The start's tests the oracle has refused a DONE for in this run. */
  private readonly refusedTests = new Set<string>();

  constructor(private readonly setup: DoneVerificationSetup) {
    this.protectedFiles = new ProtectedFilesWatch(setup.repository, setup.verify, setup.checks, setup.workingDirPrefix);
  }

  /** Starts the baseline on the task's first tree, beside the first actor run; its record comes when it is done. */
  begin(taskStart: Snapshot, signal: AbortSignal): void {
    if (this.oracle) return;
    const { setup } = this;
    const worktree = setup.isolation.worktree;
    // Without [worktree], the dependencies the tree shows (node_modules, a virtual environment) are copied as they are now, at the start.
    const readiness =
      worktree.copy.length > 0 || worktree.setup ? worktree : { ...worktree, copy: detectWorktree(setup.repository.root).copy.map((each) => each.path) };
    this.oracle = new TestOracle({
      repository: setup.repository,
      workingDir: setup.workingDir,
      sessionId: setup.sessionId,
      startCommit: taskStart.commit,
      checks: setup.checks,
      isolation: { ...setup.isolation, worktree: readiness },
      userProtected: setup.verify.protected,
      groups: setup.groups,
      recorded: setup.recordedBaseline,
    });
    void this.oracle.baseline(signal).then((baseline) => this.recordBaseline(baseline));
  }

  private recordBaseline(baseline: TestBaseline): void {
    // A run without required checks has no tests to speak of; its end says its DONE is unverified.
    if (baseline.unavailable === NO_ORACLE_CHECKS) return;
    this.setup.emit({
      type: 'test_baseline',
      checks: baseline.checks.map((check) => ({
        name: check.check,
        runner: check.runner,
        passing: check.passing,
        failing: check.failing,
        tests: check.counts,
      })),
      unavailable: baseline.unavailable,
    });
  }

  /** Whether the start's tests judge DONE in this run (there is a baseline); waits for the baseline. */
  async oracleJudges(signal: AbortSignal): Promise<boolean> {
    return this.oracle !== null && (await this.oracle.baseline(signal)).unavailable === null;
  }

  /**
   * The actor's changes to what the gate rests on, against the task's first tree: each
   * that stands is reported, and those nobody accepted or allowed, and that the start's
   * tests do not judge, refuse DONE.
   */
  async protection(
    iteration: number,
    on: { startTree: string; tree: string; changes: readonly TreeEntryChange[]; nested: readonly NestedRepository[] },
    signal: AbortSignal,
  ): Promise<Protection> {
    const found = await this.protectedFiles.weakenings(on.startTree, on.tree, on.changes, on.nested);
    const accepted = found.length > 0 ? await this.setup.acceptedChanges() : new Map<string, AcceptedChange>();
    const tested = found.length > 0 && (await this.oracleJudges(signal));
    const standing = found.map((change): StandingChange => {
      const acceptance = accepted.get(change.file);
      if (acceptance?.kinds.includes(change.kind)) return { change, status: 'accepted', reason: acceptance.reason };
      if (this.setup.verify.allowTestChanges && TEST_CHANGE_KINDS.includes(change.kind)) return { change, status: 'allowed' };
      if (tested && JUDGED_BY_TESTS.includes(change.kind)) return { change, status: 'hint' };
      return { change, status: 'weakening' };
    });
    for (const each of standing) this.setup.emit({ type: 'protected_change', iteration, ...each });
    return { standing, weakened: standing.filter((each) => each.status === 'weakening').map((each) => each.change) };
  }

  /**
   * The start's tests on the DONE's tree, recorded; null when there is no baseline to
   * judge by. A finding the user accepted, or any with `allow_test_changes`, refuses
   * nothing. A test the oracle refuses a second time is a question for the user
   * (`askUser`): the task may change what it expects, which only they can say.
   */
  async judgeDone(iteration: number, final: Snapshot, signal: AbortSignal): Promise<DoneJudgement | null> {
    if (!(await this.oracleJudges(signal))) return null;
    const found = await this.oracle!.judge(final.commit, signal);
    if (!found || signal.aborted) return null;
    const acceptedByUser = await this.setup.acceptedTests();
    const allowAll = this.setup.verify.allowTestChanges;
    const accepted: AcceptedFinding[] = found.findings.flatMap((finding): AcceptedFinding[] => {
      if (acceptedByUser.has(finding.id)) return [{ finding, reason: acceptedByUser.get(finding.id) ?? null, by: 'user' }];
      return allowAll ? [{ finding, reason: null, by: 'allow_test_changes' }] : [];
    });
    const findings = found.findings.filter((finding) => !accepted.some((each) => each.finding === finding));
    const judgement = { ...found, findings };
    this.setup.emit({
      type: 'test_oracle',
      iteration,
      tree: judgement.commit,
      restored: judgement.restored,
      passed: judgement.passed,
      baseline: judgement.baseline,
      findings,
      accepted,
      flaky: judgement.flaky,
    });
    return { judgement, askUser: this.askAfterSecondRefusal(findings) };
  }

  /** The tests refused before: a second refusal of one asks the user whether the task changes what it expects. */
  private askAfterSecondRefusal(findings: readonly TestFinding[]): NeedsInput | null {
    const again = findings.filter((finding) => this.refusedTests.has(finding.id));
    for (const finding of findings) this.refusedTests.add(finding.id);
    if (again.length === 0) return null;
    const ids = again.slice(0, 5).map((finding) => finding.id);
    return {
      from: 'gate',
      question:
        `The project's tests from the start of the loop still refuse DONE after the actor's second try: ${ids.join(', ')}${again.length > 5 ? `, and ${again.length - 5} more` : ''}. ` +
        'If the task changes what they expect, accept them (codeloops accept <session> --test <id> --reason "…"); otherwise say what the actor should do.',
    };
  }

  /** An acceptance check on the DONE's tree with the start's tests (see `TestOracle.runAcceptance`); null: run it as before. */
  runAcceptance(check: CheckSpec, final: Snapshot, signal: AbortSignal): Promise<CheckResult | null> {
    return this.oracle ? this.oracle.runAcceptance(check, final.commit, signal) : Promise.resolve(null);
  }

  /** What stood behind a DONE that stood: the start's tests, the actor's new ones, the checks by exit code, the critic's commands. */
  verifiedBy(checks: readonly CheckResult[], done: DoneJudgement | null, criticCommands: number): VerifiedBy {
    const judgement = done?.judgement ?? null;
    const baselineIds = new Set(judgement?.results.flatMap((result) => result.report?.tests.map((test) => test.id) ?? []) ?? []);
    const newTests = checks.flatMap((check) => check.report?.tests.filter((test) => test.outcome === 'passed' && !baselineIds.has(test.id)) ?? []).length;
    return {
      start_tests: judgement ? { passed: judgement.passed, flaky: judgement.flaky.length } : null,
      new_tests: judgement ? newTests : 0,
      exit_code_checks: checks.filter((check) => check.required && check.passed && check.tests === null).map((check) => check.name),
      critic_commands: criticCommands,
    };
  }

  async dispose(): Promise<void> {
    await this.oracle?.dispose();
  }
}
