import { checkDirectory, commandRunRecord, timingOf, type CheckResult, type CheckSpec, type CheckTiming } from '../checks/runCheck.js';
import type { Snapshot } from '../git/snapshots.js';
import type { GroupRecorder } from '../process/processGroup.js';
import type { DoneVerification } from './doneVerification.js';
import { runCheckInLoopTree, runIsolatedCheck } from './isolatedCheck.js';
import type { IterationSnapshots } from './iterationSnapshots.js';
import { inPhase, type EmitEvent } from './iterationWork.js';
import { defaultIsolation, traitsOf, type LoopRequest } from './loopRequest.js';
import { captureUserGitState } from './treeGuard.js';

export interface ChecksPhaseSetup {
  request: Pick<LoopRequest, 'checks' | 'repository' | 'workingDir' | 'isolation'>;
  sessionId: string;
  /** The start's tests and dependencies an acceptance check runs with; null when the run is not verified. */
  verification: DoneVerification | null;
  snapshots: IterationSnapshots;
  /** The run's signal (the user's interrupt, a guard's stop). */
  signal: AbortSignal;
  groups: GroupRecorder;
  emit: EmitEvent;
}

/**
 * The project's checks due now (`timing`), one after the other, on the tree the
 * actor left, or an isolated one in a clean worktree of it. What they change is put
 * back (a check judges the tree, it does not fix it), so their results hold for the
 * tree that ends the iteration.
 */
export class ChecksPhase {
  constructor(private readonly setup: ChecksPhaseSetup) {}

  /** The results of the checks due at `timing`, in the `checks` phase; null when the run was stopped meanwhile. */
  async run(iteration: number, post: Snapshot, timing: CheckTiming): Promise<CheckResult[] | null> {
    const { request, emit } = this.setup;
    const due = request.checks.filter((check) => timingOf(check) === timing);
    if (due.length === 0) return [];
    const { gitBefore, results } = await inPhase(emit, iteration, 'checks', async () => {
      const gitBefore = await captureUserGitState(request.repository);
      const results: CheckResult[] = [];
      for (const check of due) {
        const result = await this.runCheck(iteration, check, post);
        if (result.interrupted) break;
        results.push(result);
        emit({
          type: 'check_finished',
          iteration,
          name: result.name,
          required: result.required,
          ...commandRunRecord(result),
          tree: post.tree,
          ...traitsOf(check),
          ...(result.tests ? { tests: result.tests } : {}),
        });
      }
      return { gitBefore, results };
    });
    await this.setup.snapshots.putBack(iteration, 'checks', post, gitBefore);
    return this.setup.signal.aborted ? null : results;
  }

  private async runCheck(iteration: number, check: CheckSpec, post: Snapshot): Promise<CheckResult> {
    const { verification, signal } = this.setup;
    // An acceptance check judges the final code with the start's tests and dependencies, in a clean environment.
    const accepted = check.hidden && verification ? await verification.runAcceptance(check, post, signal) : null;
    return accepted ?? this.runCheckAsConfigured(iteration, check, post);
  }

  private runCheckAsConfigured(iteration: number, check: CheckSpec, post: Snapshot): Promise<CheckResult> {
    const { request } = this.setup;
    const options = { signal: this.setup.signal, groups: this.setup.groups };
    const cwd = checkDirectory(check, { root: request.repository.root, workingDir: request.workingDir });
    if (!check.isolated) return runCheckInLoopTree(check, { root: request.repository.root, isolation: request.isolation }, { ...options, cwd });
    const at = {
      repository: request.repository,
      workingDir: request.workingDir,
      commit: post.commit,
      name: `${this.setup.sessionId}-${iteration}-${request.checks.indexOf(check) + 1}`,
    };
    return runIsolatedCheck(check, at, request.isolation ?? defaultIsolation(), options);
  }
}
