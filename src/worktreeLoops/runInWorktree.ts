import { commandRunRecord } from '../checks/runCheck.js';
import { configFilesOf, type WorktreeSettings } from '../config/runSettings.js';
import type { Repository } from '../git/repository.js';
import type { IsolationSettings } from '../loop/isolatedCheck.js';
import type { LoopRequest, RoleLaunch } from '../loop/loopRequest.js';
import { runLoop } from '../loop/loopRunner.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { readyWorktree } from '../loop/worktreeSetup.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { RunEventInput, RunSummary } from '../sessionFormat/runEvents.js';

/**
 * One loop in a worktree made for it (a candidate's, an eval run's, a queued task's):
 * the user's prepared run with both agents starting in the worktree, its isolated
 * checks readied as the worktree is, and the worktree readied (`[worktree]` copy and
 * setup) before the first iteration of a fresh start. A continued loop's worktree was
 * readied by its first run.
 */

export interface WorktreeLoopRequest extends Pick<
  LoopRequest,
  'prompt' | 'repository' | 'sessionsDirectory' | 'sidecarDirOf' | 'signal' | 'onEvent' | 'candidate' | 'eval' | 'continuation'
> {
  prepared: PreparedRun;
  /** The user's repository the worktree was made from: `[worktree] copy` copies from its tree. */
  source: Repository;
  /** The worktree's top folder, and the folder the loop works in (the user's folder's place in it). */
  place: { worktree: string; workingDir: string };
  worktreesDirectory: string;
  /** How the worktree is readied; absent: the run's `[worktree]` (an eval task's setup replaces its setup). */
  readiness?: WorktreeSettings;
}

export function runLoopInWorktree(request: WorktreeLoopRequest): Promise<RunSummary> {
  const { prepared, source, place, worktreesDirectory, readiness: given, ...loop } = request;
  const readiness = given ?? prepared.settings.worktree;
  return runLoop({
    ...loop,
    ...loopInWorktree(prepared, place.workingDir, { directory: worktreesDirectory, worktree: readiness }),
    ...(loop.continuation ? {} : { beforeFirstIteration: ({ report, signal }) => prepareWorktree(source, place, readiness, report, signal) }),
  });
}

/** A prepared run's agents, guards and checks as a loop in a worktree takes them: both agents start in its working folder. */
function loopInWorktree(prepared: PreparedRun, workingDir: string, isolation: IsolationSettings) {
  const rebase = (role: RoleLaunch): RoleLaunch => ({ ...role, launch: { ...role.launch, workingDir } });
  return {
    workingDir,
    actor: rebase(prepared.actor),
    critic: rebase(prepared.critic),
    maxIterations: prepared.settings.maxIterations,
    checks: prepared.settings.checks,
    isolation,
    budget: prepared.settings.budget,
    stall: prepared.settings.stall,
    limits: prepared.settings.limits,
    prices: prepared.settings.prices,
    verify: prepared.settings.verify ?? undefined,
    configFiles: configFilesOf(prepared.settings),
  } satisfies Partial<LoopRequest>;
}

/**
 * Readies a loop's worktree before its first iteration (`readyWorktree`), its setup's
 * output recorded. A failed setup fails that loop.
 */
async function prepareWorktree(
  source: Repository,
  place: { worktree: string; workingDir: string },
  settings: WorktreeSettings,
  report: (event: RunEventInput) => void,
  signal: AbortSignal,
): Promise<void> {
  const readied = await readyWorktree({ sourceRoot: source.root, worktree: place.worktree, workingDir: place.workingDir }, settings, signal);
  const result = readied.setup;
  report({
    type: 'worktree_prepared',
    worktree: place.worktree,
    copied: readied.copied,
    not_found: readied.notFound,
    setup: result && commandRunRecord(result),
  });
  if (result && !result.passed && !result.interrupted) {
    throw new CodeloopsError(
      'setup_failed',
      `The worktree setup \`${settings.setup}\` ${result.timedOut ? `timed out after ${settings.setupTimeoutSecs} s` : `failed (exit ${result.exitCode ?? 'by a signal'})`} in ${place.workingDir}; its loop did not start.`,
      { command: settings.setup, exit_code: result.exitCode },
    );
  }
}
