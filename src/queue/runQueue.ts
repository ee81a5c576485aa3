import fs from 'node:fs';
import path from 'node:path';
import { loopInWorktree, prepareWorktree } from '../candidates/runCandidates.js';
import { branchCommit, commitTreeOnBranch, createBranch, userIdentity, type GitIdentity } from '../git/branches.js';
import { openRepository, headCommit, type Repository } from '../git/repository.js';
import { readSnapshot, sessionHeadRef } from '../git/snapshots.js';
import { gitText } from '../git/gitProcess.js';
import { addWorktree, removeEmptyFolders, removeWorktree } from '../git/worktrees.js';
import { runLoop, type Continuation } from '../loop/loopRunner.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { answerQuestion, assertIterationsLeft, planResume } from '../resume/resumePlan.js';
import { CodeloopsError, isCodeloopsError } from '../sessionFormat/failures.js';
import type { QueueFile, QueueNotice, QueueTask, TaskOutcome, TaskResult } from '../sessionFormat/queueRecords.js';
import type { RunEvent, RunSummary } from '../sessionFormat/runEvents.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { QueueStore } from './queueStore.js';
import { taskResultOf } from './taskResult.js';

/**
 * `queue run`: the queue's tasks, in order, at most `jobs` at once, each a loop with the
 * project's guards and checks in its own worktree on its own branch
 * `codeloops/<id>-<slug>`, made from the commit HEAD was at when the queue first ran
 * (`stack`: from the last successful task's branch). A branch of that name that exists
 * already is never overwritten: the task is refused (`branch_exists`). A success is
 * committed on its branch with the critic's summary as its message; a failure does not
 * stop the queue. A loop that needs an answer waits (its worktree kept) while the
 * others go on; `queue answer` carries it on. The user's branch, HEAD, index, working
 * tree and stash are never touched. Nothing is lost to a crash: the queue's file says
 * where each task is, and the next run resumes an unfinished task from its session when
 * it can be, else starts it again; a finished task is never run again.
 */

export interface QueueRunRequest {
  store: QueueStore;
  /** The repository the queue belongs to (the user's). */
  repository: Repository;
  /** A task's agents, guards and checks (its flags over the user's config), for a loop in the user's repository; a task added while the queue runs too. */
  prepared: (task: QueueTask) => Promise<PreparedRun>;
  jobs: number;
  /** Each task from the last successful task's branch, one at a time. */
  stack: boolean;
  /** Only these tasks (`queue answer` carrying one on when no run is running). */
  only?: readonly number[];
  /** `[queue] author`: who commits a success, over the user's git identity. */
  author: GitIdentity | null;
  sessionStore: SessionStore;
  sessionsDirectory: string;
  sidecarDirOf: (sessionId: string) => string;
  worktreesDirectory: string;
  signal: AbortSignal;
  onNotice?: (notice: QueueNotice) => void;
  onEvent?: (task: number, event: RunEvent) => void;
}

/** `codeloops <codeloops@localhost>`: the author of a success when the user has no git identity and no `[queue] author`. */
export const QUEUE_AUTHOR_FALLBACK: GitIdentity = { name: 'codeloops', email: 'codeloops@localhost' };

/** How often a running queue looks for an answer given to one of its tasks while the others run. */
const ANSWER_POLL_MS = 500;

export type QueueRunStatus = 'finished' | 'interrupted';

/** Runs what is left of the queue; resolves when no task can go on (each finished or waiting for an answer) or the signal stopped them. */
export async function runQueue(request: QueueRunRequest): Promise<QueueRunStatus> {
  const lock = request.store.takeRunLock();
  let released = false;
  try {
    const head = await headCommit(request.repository);
    await request.store.change((queue) => {
      if (!queue.tasks.some((task) => runnable(task, request.only))) {
        const waiting = queue.tasks.filter((task) => task.state === 'needs_input').map((task) => task.id);
        const why = waiting.length > 0 ? ` (waiting for your answer: task ${waiting.join(', ')})` : '';
        throw new CodeloopsError('queue_empty', `The queue has no task to run${why}.`, { waiting: waiting.length, tasks: queue.tasks.length });
      }
      if (queue.base_commit === null && head === null)
        throw new CodeloopsError('usage', `The repository ${request.repository.root} has no commit yet: a task's branch needs one to start from.`, {});
      queue.base_commit ??= head;
      // A task a dead runner left running carries on from its session.
      for (const task of queue.tasks) if (task.state === 'running') task.state = 'queued';
    });
    const author = request.author ?? (await userIdentity(request.repository)) ?? QUEUE_AUTHOR_FALLBACK;
    const run = new QueueRun(request, author);
    await run.runAll(() => {
      released = true;
      lock.release();
    });
    const status: QueueRunStatus = request.signal.aborted ? 'interrupted' : 'finished';
    request.onNotice?.({ type: 'queue_finished', ...countsOf(request.store.read()), interrupted: status === 'interrupted' });
    return status;
  } finally {
    if (!released) lock.release();
  }
}

function runnable(task: QueueTask, only: readonly number[] | undefined): boolean {
  return (task.state === 'queued' || task.state === 'answered') && (!only || only.includes(task.id));
}

function countsOf(queue: QueueFile): { finished: number; waiting: number; left: number } {
  const finished = queue.tasks.filter((task) => task.state === 'finished').length;
  const waiting = queue.tasks.filter((task) => task.state === 'needs_input').length;
  return { finished, waiting, left: queue.tasks.length - finished - waiting };
}

class QueueRun {
  private readonly running = new Map<number, Promise<void>>();

  constructor(
    private readonly request: QueueRunRequest,
    private readonly author: GitIdentity,
  ) {}

  /**
   * Starts tasks as slots free up, in the queue's order as it is at that moment (a task
   * moved meanwhile runs where it was moved to). It ends when nothing runs and nothing
   * can start; that last look and the lock's release happen under the queue's change
   * lock, so that an answer given at that moment is either seen here or finds no runner.
   */
  async runAll(releaseLock: () => void): Promise<void> {
    const { request } = this;
    const jobs = request.stack ? 1 : request.jobs;
    for (;;) {
      if (!request.signal.aborted) {
        const next = request.store.read().tasks.filter((task) => runnable(task, request.only) && !this.running.has(task.id));
        for (const task of next.slice(0, Math.max(0, jobs - this.running.size))) this.start(task.id);
      }
      if (this.running.size === 0) {
        const more = await request.store.change((queue) => {
          const any = !request.signal.aborted && queue.tasks.some((task) => runnable(task, request.only));
          if (!any) releaseLock();
          return any;
        });
        if (more) continue;
        return;
      }
      await Promise.race([...this.running.values(), new Promise((resolve) => setTimeout(resolve, ANSWER_POLL_MS).unref())]);
    }
  }

  private start(id: number): void {
    const done = new TaskRun(this.request, this.author, id)
      .run()
      .catch((error: unknown) =>
        this.request.onNotice?.({ type: 'task_finished', task: id, outcome: 'failed', branch: '', session_id: null, error: String(error) }),
      )
      .finally(() => this.running.delete(id));
    this.running.set(id, done);
  }
}

/** One task's turn: its branch and worktree, its loop (fresh or resumed), and what it ended with. */
class TaskRun {
  constructor(
    private readonly request: QueueRunRequest,
    private readonly author: GitIdentity,
    private readonly id: number,
  ) {}

  private get store() {
    return this.request.store;
  }

  async run(): Promise<void> {
    const answered = this.store.task(this.id).state === 'answered';
    const task = await this.store.changeTask(this.id, (task) => {
      task.state = 'running';
      task.started_at ??= new Date().toISOString();
    });
    let resumed: Continuation | null;
    let start: string | null;
    let prepared: PreparedRun;
    try {
      prepared = await this.request.prepared(task);
      resumed = await this.resumable(task, answered, prepared);
      start = resumed ? task.start_commit : await this.setUp(task);
    } catch (error) {
      return this.failedToStart(task, error);
    }
    if (start === null) return;
    this.request.onNotice?.({ type: 'task_started', task: task.id, branch: task.branch, resumed: resumed !== null });
    const worktree = this.worktreeOf(task);
    let summary: RunSummary;
    try {
      summary = await this.loop(task, worktree, resumed, prepared);
    } catch (error) {
      return this.failedToStart(task, error);
    }
    await this.ended(task, worktree, summary, start);
  }

  /** Where the task's worktree goes: under the worktrees folder, by the queue and the task, with the repository's name. */
  private worktreeOf(task: QueueTask): string {
    const queueKey = path.basename(this.store.file, '.json');
    return path.join(this.request.worktreesDirectory, `queue-${queueKey}`, String(task.id), path.basename(this.request.repository.root));
  }

  /**
   * The continuation of a task that ran before (stopped, crashed, or answered) from its
   * last session, when that session can be resumed in its worktree; null to start it
   * again (no session yet, the worktree gone, or resume refuses).
   */
  private async resumable(task: QueueTask, answered: boolean, prepared: PreparedRun): Promise<Continuation | null> {
    const sessionId = task.session_ids.at(-1);
    if (!sessionId || !task.worktree || !fs.existsSync(task.worktree) || task.start_commit === null) return null;
    try {
      // The worktree is the queue's own: what differs from the last snapshot is the half-made work of the run that stopped.
      const plan = await planResume({ store: this.request.sessionStore, sidecarDirOf: this.request.sidecarDirOf, sessionId, force: true });
      if (answered && task.answer !== null) answerQuestion(plan, task.answer);
      assertIterationsLeft(plan, prepared.settings.maxIterations ?? 0);
      return plan.continuation;
    } catch {
      return null;
    }
  }

  /** A fresh start: the branch made (or, made by an earlier try of this task, put back at its start), a new worktree on it. */
  private async setUp(task: QueueTask): Promise<string | null> {
    const { repository } = this.request;
    const worktree = this.worktreeOf(task);
    if (fs.existsSync(worktree)) await removeWorktree(repository, worktree);
    let start = task.start_commit;
    if (start === null) {
      start = await this.startCommit();
      if (!(await createBranch(repository, task.branch, start, `codeloops: queue task ${task.id}`))) {
        await this.finish(task, 'refused', {
          error: `The branch ${task.branch} already exists; it is never overwritten, so this task was not run.`,
          error_code: 'branch_exists',
        });
        return null;
      }
    } else {
      const at = await branchCommit(repository, task.branch);
      await gitText(repository.root, ['update-ref', '-m', 'codeloops: the task starts again', `refs/heads/${task.branch}`, start, ...(at ? [at] : [])]);
    }
    try {
      await addWorktree(repository, worktree, { branch: task.branch });
    } catch (error) {
      throw new CodeloopsError('setup_failed', `The task's worktree could not be made in ${worktree}: ${(error as Error).message}`, { worktree });
    }
    const commit = start;
    await this.store.changeTask(task.id, (stored) => {
      stored.start_commit = commit;
      stored.worktree = worktree;
      stored.answer = null;
    });
    return start;
  }

  /** The queue's base, or with `stack` the commit of the last task that succeeded. */
  private async startCommit(): Promise<string> {
    const queue = this.store.read();
    if (this.request.stack) {
      const succeeded = queue.tasks
        .filter((task) => task.outcome === 'success' && task.commit !== null)
        .sort((a, b) => (a.finished_at ?? '').localeCompare(b.finished_at ?? ''));
      const last = succeeded.at(-1);
      if (last) return (await branchCommit(this.request.repository, last.branch)) ?? last.commit!;
    }
    return queue.base_commit!;
  }

  private async loop(task: QueueTask, worktree: string, continuation: Continuation | null, prepared: PreparedRun): Promise<RunSummary> {
    const { request } = this;
    const settings = prepared.settings.worktree;
    return runLoop({
      prompt: task.prompt,
      ...loopInWorktree(prepared, worktree, { directory: request.worktreesDirectory, worktree: settings }),
      repository: await openRepository(worktree),
      sessionsDirectory: request.sessionsDirectory,
      sidecarDirOf: request.sidecarDirOf,
      signal: request.signal,
      ...(continuation
        ? { continuation }
        : {
            beforeFirstIteration: ({ report, signal }) => prepareWorktree(request.repository, { worktree, working_dir: worktree }, settings, report, signal),
          }),
      onEvent: (event) => {
        if (event.type === 'run_started' && !task.session_ids.includes(event.session_id)) {
          task.session_ids.push(event.session_id);
          void this.store.changeTask(task.id, (stored) => {
            if (!stored.session_ids.includes(event.session_id)) stored.session_ids.push(event.session_id);
          });
        }
        request.onEvent?.(task.id, event);
      },
    });
  }

  /** The loop could not start (the worktree's loop lock held by an agent a dead runner left, a setup that failed before the session). */
  private async failedToStart(task: QueueTask, error: unknown): Promise<void> {
    if (this.request.signal.aborted || (isCodeloopsError(error) && error.code === 'loop_running')) {
      await this.store.changeTask(task.id, (stored) => void (stored.state = 'queued'));
      this.request.onNotice?.({ type: 'task_finished', task: task.id, outcome: 'interrupted', branch: task.branch, session_id: null, error: String(error) });
      return;
    }
    await this.finish(task, 'failed', { error: (error as Error).message, error_code: isCodeloopsError(error) ? error.code : 'internal' });
  }

  private async ended(task: QueueTask, worktree: string, summary: RunSummary, start: string): Promise<void> {
    const { request } = this;
    if (request.signal.aborted || summary.status === 'interrupted') {
      // Carried on from its session by the next run.
      await this.store.changeTask(task.id, (stored) => void (stored.state = 'queued'));
      return;
    }
    if (summary.error_code === 'needs_input') {
      const question = summary.error ?? 'The loop needs your answer.';
      await this.store.changeTask(task.id, (stored) => {
        stored.state = 'needs_input';
        stored.question = question;
        stored.answer = null;
      });
      request.onNotice?.({ type: 'needs_input', task: task.id, session_id: summary.session_id, question });
      return;
    }
    const head = await readSnapshot(request.repository, sessionHeadRef(summary.session_id));
    let commit: string | null = null;
    if (summary.status === 'success' && head) {
      const message = summary.summary?.trim() || task.prompt.split('\n')[0]!;
      commit = await commitTreeOnBranch(request.repository, task.branch, head.tree, message, this.author);
    }
    const result = await taskResultOf(summary, request.sidecarDirOf, { repository: request.repository, from: start, to: commit ?? head?.commit ?? null });
    await removeWorktree(request.repository, worktree).catch(() => undefined);
    removeEmptyFolders(path.dirname(worktree), request.worktreesDirectory);
    await this.finish(task, summary.status, { commit, result, session_id: summary.session_id });
  }

  private async finish(
    task: QueueTask,
    outcome: TaskOutcome,
    what: { error?: string; error_code?: TaskResult['error_code']; commit?: string | null; result?: TaskResult; session_id?: string },
  ): Promise<void> {
    const finished = await this.store.changeTask(task.id, (stored) => {
      stored.state = 'finished';
      stored.outcome = outcome;
      stored.finished_at = new Date().toISOString();
      stored.commit = what.commit ?? null;
      stored.worktree = outcome === 'refused' ? stored.worktree : null;
      stored.question = null;
      stored.result = what.result ?? { ...EMPTY_RESULT, error: what.error ?? null, error_code: what.error_code ?? null };
    });
    this.request.onNotice?.({
      type: 'task_finished',
      task: task.id,
      outcome,
      branch: task.branch,
      session_id: what.session_id ?? finished.session_ids.at(-1) ?? null,
      error: finished.result?.error ?? null,
    });
  }
}

const EMPTY_RESULT: TaskResult = {
  summary: null,
  verification: null,
  iterations: 0,
  total_cost_usd: null,
  duration_secs: 0,
  error: null,
  error_code: null,
  files_changed: null,
  insertions: null,
  deletions: null,
  checks: [],
  open_findings: [],
};
