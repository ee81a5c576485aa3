import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CheckResult } from '../checks/runCheck.js';
import { DEFAULT_CHECK_TIMEOUT_SECS, type WorktreeSettings } from '../config/runSettings.js';
import { openRepository, type Repository } from '../git/repository.js';
import { readSnapshot, sessionHeadRef } from '../git/snapshots.js';
import { addWorktree } from '../git/worktrees.js';
import { runIsolatedCheck } from '../loop/isolatedCheck.js';
import { oracleEnvironment } from '../loop/oracleEnvironment.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { evalOutcomeOf, type EvalRecordLine, type EvalTask } from '../sessionFormat/evalRecords.js';
import { isCodeloopsError, type FailureCode } from '../sessionFormat/failures.js';
import type { RunSummary } from '../sessionFormat/runEvents.js';
import type { EvalTag } from '../sessionFormat/sessionLines.js';
import { startTestsCommit } from '../verify/startTests.js';
import { loopWorktreePath, removeLeftoverWorktree, removeLoopWorktree } from '../worktreeLoops/loopWorktrees.js';
import { runLoopInWorktree } from '../worktreeLoops/runInWorktree.js';
import { runKeyText, type EvalRecorder, type EvalState, type RunKey } from './evalRecord.js';
import { shareOf, type NumberedRun } from './evalShare.js';

/**
 * Runs an eval's runs that have not finished (all of them, for a new eval): each
 * (task, config, repetition) one loop, a normal session tagged `eval`, in its own
 * worktree checked out at the task's commit, at most `jobs` at a time. When a loop
 * ends, the task's acceptance command runs on the tree it left, in a clean worktree
 * (as an isolated check does): no agent ever sees its command or its output. A run
 * is recorded finished only then; one stopped by an interrupt is run afresh by
 * `--resume`. The user's tree, index, HEAD and branches are never touched; each
 * run's worktree is removed when it is done (its trees stay as its session's snapshots).
 */

export interface EvalRequest {
  state: EvalState;
  recorder: EvalRecorder;
  /** A task's run with a config: its agents, guards and checks as the config sets them over the project's codeloops.toml. */
  prepared: (task: string, config: string) => PreparedRun;
  jobs: number;
  sessionsDirectory: string;
  sidecarDirOf: (sessionId: string) => string;
  worktreesDirectory: string;
  signal: AbortSignal;
  /** Each line the eval records as its runs go (`run_started`, `run_finished`). */
  onRecord?: (line: EvalRecordLine) => void;
}

export type EvalStatus = 'finished' | 'interrupted' | 'failed';

/**
 * A run's folder under the eval's: its number in the eval, which no other run has, then
 * its task and config for a reader, shortened and safe on every file system. Two names
 * that read alike there (the same first 60 characters, or differing only in what is
 * not a letter or digit: `fast/ü`, `fast/é`) are still two folders.
 */
function evalRunFolderName(number: number, key: RunKey): string {
  const slug = `${key.task}-${key.config}`
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 60)
    .replace(/[-.]+$/, '');
  return slug ? `${number}-${slug}` : String(number);
}

/** Runs what is left and records how this process's part ended; resolves when every run has ended or the signal stopped them. */
export async function runEval(request: EvalRequest): Promise<EvalStatus> {
  const pending = shareOf(request.state.started).filter((key) => !request.state.finished.has(runKeyText(key)));
  let status: EvalStatus = 'failed';
  try {
    await new EvalRun(request).runAll(pending);
    status = request.signal.aborted ? 'interrupted' : 'finished';
    return status;
  } finally {
    stopEval(request.recorder, request.signal.aborted ? 'interrupted' : status);
  }
}

/** Records how this process's part of the eval ended, once (also from an exit that cannot wait: it is synchronous). */
const stopped = new WeakSet<EvalRecorder>();
export function stopEval(recorder: EvalRecorder, status: EvalStatus): void {
  if (stopped.has(recorder)) return;
  stopped.add(recorder);
  recorder.record({ type: 'eval_stopped', status });
}

class EvalRun {
  constructor(private readonly request: EvalRequest) {}

  /** At most `jobs` runs at once. A run that cannot be set up (its worktree cannot be made) stops the eval: the others end first. */
  async runAll(pending: NumberedRun[]): Promise<void> {
    const queue = [...pending];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined && !this.request.signal.aborted; next = queue.shift()) {
        try {
          await this.runOne(next);
        } catch (error) {
          queue.length = 0;
          throw error;
        }
      }
    };
    const ended = await Promise.allSettled(Array.from({ length: Math.min(this.request.jobs, queue.length) }, worker));
    const failure = ended.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  }

  private record(line: Parameters<EvalRecorder['record']>[0]): void {
    this.request.onRecord?.(this.request.recorder.record(line));
  }

  private async runOne({ number, ...key }: NumberedRun): Promise<void> {
    const { request } = this;
    const task = request.state.started.tasks.find((candidate) => candidate.name === key.task)!;
    const prepared = request.prepared(key.task, key.config);
    const repository = await openRepository(task.repository);
    const folder = evalRunFolderName(number, key);
    const worktree = loopWorktreePath(request.worktreesDirectory, request.state.id, folder, repository.root);
    // The task's setup readies the worktree in place of the project's [worktree] setup; the project's copies stay.
    const readiness: WorktreeSettings = { ...prepared.settings.worktree, setup: task.setup ?? prepared.settings.worktree.setup };
    try {
      await removeLeftoverWorktree(repository, worktree);
      await addWorktree(repository, worktree, task.commit);
      const loop = await this.runLoopIn(worktree, repository, prepared, readiness, { id: request.state.id, ...key });
      if (request.signal.aborted) return;
      const head = loop.sessionId ? await readSnapshot(repository, sessionHeadRef(loop.sessionId)) : undefined;
      const acceptance = await this.accept(task, repository, head?.commit ?? task.commit, readiness, folder);
      if (request.signal.aborted || acceptance.interrupted) return;
      const succeeded = loop.summary?.status === 'success';
      this.record({
        type: 'run_finished',
        ...key,
        session_id: loop.sessionId,
        outcome: evalOutcomeOf(succeeded, acceptance.passed),
        acceptance_passed: acceptance.passed,
        iterations: loop.summary?.iterations ?? 0,
        cost_usd: loop.summary?.total_cost_usd ?? null,
        duration_secs: loop.summary?.total_duration_secs ?? 0,
        verified_by: loop.summary?.verified_by ?? null,
        loop_outcome: loop.summary?.status ?? 'failed',
        error: loop.summary ? loop.summary.error : loop.error,
        error_code: loop.summary ? loop.summary.error_code : loop.errorCode,
        acceptance_exit_code: acceptance.exitCode,
        acceptance_output: acceptance.output.slice(-4000),
      });
    } finally {
      await removeLoopWorktree(repository, worktree, request.worktreesDirectory);
    }
  }

  /** The run's loop; a failure before its session exists is returned, not thrown: the run still gets its acceptance and its outcome. */
  private async runLoopIn(worktree: string, repository: Repository, prepared: PreparedRun, readiness: WorktreeSettings, tag: EvalTag) {
    const { request } = this;
    let sessionId: string | null = null;
    try {
      const summary: RunSummary = await runLoopInWorktree({
        prompt: request.state.started.tasks.find((task) => task.name === tag.task)!.prompt,
        prepared,
        source: repository,
        place: { worktree, workingDir: worktree },
        worktreesDirectory: request.worktreesDirectory,
        readiness,
        repository: await openRepository(worktree),
        sessionsDirectory: request.sessionsDirectory,
        sidecarDirOf: request.sidecarDirOf,
        signal: request.signal,
        eval: tag,
        onEvent: (event) => {
          if (event.type !== 'run_started') return;
          sessionId = event.session_id;
          this.record({ type: 'run_started', task: tag.task, config: tag.config, repetition: tag.repetition, session_id: event.session_id });
        },
      });
      return { sessionId: summary.session_id, summary, error: null, errorCode: null };
    } catch (error) {
      const errorCode: FailureCode = isCodeloopsError(error) ? error.code : 'internal';
      return { sessionId, summary: null, error: (error as Error).message, errorCode };
    }
  }

  /**
   * The task's acceptance on the code the loop left, in a clean worktree readied as the
   * run's was, with the task's own tests, test runner configuration and package scripts
   * put back as its commit has them, in a clean environment: the actor's own `test`
   * script, a skip or a stand-in for the runner never decides it.
   */
  private async accept(task: EvalTask, repository: Repository, commit: string, readiness: WorktreeSettings, folder: string): Promise<CheckResult> {
    const { request } = this;
    const acceptance = { name: 'acceptance', run: task.acceptance, timeoutSecs: DEFAULT_CHECK_TIMEOUT_SECS, required: true, hidden: true };
    const judged = await startTestsCommit(repository, task.commit, commit, [{ name: acceptance.name, run: acceptance.run, folder: '' }], []);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-acceptance-home-'));
    try {
      return await runIsolatedCheck(
        acceptance,
        { repository, workingDir: repository.root, commit: judged.commit, name: `${request.state.id}-${folder}` },
        { directory: request.worktreesDirectory, worktree: readiness },
        { signal: request.signal, env: oracleEnvironment(process.env, { home, repositoryRoot: repository.root }) },
      );
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  }
}
