import fs from 'node:fs';
import path from 'node:path';
import {
  branchCommit,
  branchMadeWith,
  commitTree,
  createBranch,
  isAncestor,
  isSymbolicBranch,
  moveBranch,
  userIdentity,
  type GitIdentity,
} from '../git/branches.js';
import { openRepository, headCommit, type Repository } from '../git/repository.js';
import { readSnapshot, sessionHeadRef } from '../git/snapshots.js';
import { gitText } from '../git/gitProcess.js';
import { addWorktree } from '../git/worktrees.js';
import type { Continuation } from '../loop/loopRequest.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { answerQuestion, assertIterationsLeft, planResume } from '../resume/resumePlan.js';
import { CodeloopsError, isCodeloopsError } from '../sessionFormat/failures.js';
import type { QueueFile, QueueNotice, QueueTask, TaskOutcome, TaskResult } from '../sessionFormat/queueRecords.js';
import { runSummaryOfEnd, type RunEvent, type RunSummary } from '../sessionFormat/runEvents.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { loopWorktreePath, removeLeftoverWorktree, removeLoopWorktree } from '../worktreeLoops/loopWorktrees.js';
import { runLoopInWorktree } from '../worktreeLoops/runInWorktree.js';
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
      // A task a dead runner left running (this run holds the run lock: no other runs) carries on, or is finished from its session.
      for (const task of queue.tasks) if (task.state === 'running') task.state = 'queued';
      if (!queue.tasks.some((task) => runnable(task, request.only))) {
        const waiting = queue.tasks.filter((task) => task.state === 'needs_input').map((task) => task.id);
        const why = waiting.length > 0 ? ` (waiting for your answer: task ${waiting.join(', ')})` : '';
        throw new CodeloopsError('queue_empty', `The queue has no task to run${why}.`, { waiting: waiting.length, tasks: queue.tasks.length });
      }
      if (queue.base_commit === null && head === null)
        throw new CodeloopsError('usage', `The repository ${request.repository.root} has no commit yet: a task's branch needs one to start from.`, {});
      queue.base_commit ??= head;
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
  /** Tasks whose end failed in this run: queued for the next run, not tried again by this one. */
  private readonly deferred = new Set<number>();

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
        const next = request.store.read().tasks.filter((task) => this.startable(task) && !this.running.has(task.id));
        for (const task of next.slice(0, Math.max(0, jobs - this.running.size))) this.start(task.id);
      }
      if (this.running.size === 0) {
        const more = await request.store.change((queue) => {
          const any = !request.signal.aborted && queue.tasks.some((task) => this.startable(task));
          if (!any) releaseLock();
          return any;
        });
        if (more) continue;
        return;
      }
      await Promise.race([...this.running.values(), new Promise((resolve) => setTimeout(resolve, ANSWER_POLL_MS).unref())]);
    }
  }

  private startable(task: QueueTask): boolean {
    return runnable(task, this.request.only) && !this.deferred.has(task.id);
  }

  private start(id: number): void {
    const done = new TaskRun(this.request, this.author, id)
      .run()
      .then((outcome) => void (outcome === 'deferred' && this.deferred.add(id)))
      .catch((error: unknown) =>
        this.request.onNotice?.({ type: 'task_finished', task: id, outcome: 'failed', branch: '', session_id: null, error: String(error) }),
      )
      .finally(() => this.running.delete(id));
    this.running.set(id, done);
  }
}

/** One task's turn: its branch and worktree, its loop (fresh or resumed), and what it ended with. */
class TaskRun {
  private sessionRecorded: Promise<void> = Promise.resolve();

  constructor(
    private readonly request: QueueRunRequest,
    private readonly author: GitIdentity,
    private readonly id: number,
  ) {}

  private get store() {
    return this.request.store;
  }

  /** Runs the task, or finishes it from a session that ended; `deferred` when its end failed and is left to the next run. */
  async run(): Promise<'done' | 'deferred'> {
    const before = this.store.task(this.id);
    const task = await this.store.changeTask(this.id, (task) => {
      task.state = 'running';
      task.started_at ??= new Date().toISOString();
    });
    // A loop that ended before its runner recorded the end (killed, or the end failed) is finished, never run again;
    // one that asked a question answered meanwhile is carried on with the answer.
    const ended = before.state === 'queued' ? await this.endedSession(task) : null;
    const answeredBefore = ended?.error_code === 'needs_input' && before.answer !== null;
    if (ended && !answeredBefore) return this.ended(task, this.worktreeOf(task), ended, task.start_commit!);
    let resumed: Continuation | null;
    let start: string | null;
    let prepared: PreparedRun;
    try {
      prepared = await this.request.prepared(task);
      resumed = await this.resumable(task, before.state === 'answered' || answeredBefore, prepared);
      start = resumed ? task.start_commit : await this.setUp(task);
    } catch (error) {
      return this.failedToStart(task, error);
    }
    if (start === null) return 'done';
    this.request.onNotice?.({ type: 'task_started', task: task.id, branch: task.branch, resumed: resumed !== null });
    const worktree = this.worktreeOf(task);
    let summary: RunSummary;
    try {
      summary = await this.loop(task, worktree, resumed, prepared);
    } catch (error) {
      await this.sessionRecorded;
      return this.failedToStart(task, error);
    }
    await this.sessionRecorded;
    return this.ended(task, worktree, summary, start);
  }

  /** How the task's last session ended, when it did (and not `interrupted`, which is carried on); null otherwise. */
  private async endedSession(task: QueueTask): Promise<RunSummary | null> {
    const sessionId = task.session_ids.at(-1);
    if (!sessionId || task.start_commit === null) return null;
    try {
      const session = await this.request.sessionStore.load(sessionId);
      return session.end && session.end.outcome !== 'interrupted' ? runSummaryOfEnd(session.end, session.id, session.filePath) : null;
    } catch {
      return null;
    }
  }

  /** Where the task's worktree goes: under the worktrees folder, by the queue and the task, with the repository's name. */
  private worktreeOf(task: QueueTask): string {
    const queueKey = path.basename(this.store.file, '.json');
    return loopWorktreePath(this.request.worktreesDirectory, `queue-${queueKey}`, task.id, this.request.repository.root);
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
    await removeLeftoverWorktree(repository, worktree);
    // Which task, added when: a branch of another queue's task of the same id and title is never taken for this one's.
    const made = `codeloops: queue task ${task.id} (added ${task.added_at})`;
    // A branch this task made before its runner was killed, before it could record the start, is its own.
    let start = task.start_commit ?? (await branchMadeWith(repository, task.branch, made));
    if (start === null) {
      start = await this.startCommit();
      if (!(await createBranch(repository, task.branch, start, made))) {
        await this.finish(task, 'refused', {
          error: `The branch ${task.branch} already exists; it is never overwritten, so this task was not run.`,
          error_code: 'branch_exists',
        });
        return null;
      }
    } else {
      const at = await branchCommit(repository, task.branch);
      if (at !== start) await moveBranch(repository, task.branch, start, at, 'codeloops: the task starts again');
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
      stored.commit = null;
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
    return runLoopInWorktree({
      prompt: task.prompt,
      prepared,
      source: request.repository,
      place: { worktree, workingDir: worktree },
      worktreesDirectory: request.worktreesDirectory,
      repository: await openRepository(worktree),
      sessionsDirectory: request.sessionsDirectory,
      sidecarDirOf: request.sidecarDirOf,
      signal: request.signal,
      // A continued loop's worktree was readied by its first run: runLoopInWorktree readies only a fresh start's.
      ...(continuation ? { continuation } : {}),
      onEvent: (event) => {
        if (event.type === 'run_started' && !task.session_ids.includes(event.session_id)) {
          task.session_ids.push(event.session_id);
          // Recorded as the session starts, so that a crash from here on resumes it; awaited before the task's end is.
          this.sessionRecorded = this.store
            .changeTask(task.id, (stored) => {
              if (!stored.session_ids.includes(event.session_id)) stored.session_ids.push(event.session_id);
            })
            .then(
              () => undefined,
              () => undefined,
            );
        }
        request.onEvent?.(task.id, event);
      },
    });
  }

  /**
   * The loop could not start (the worktree's loop lock held by an agent a dead runner
   * left, a lock file a crashed git left, a setup that failed before the session). What
   * holds it until someone lets go (the agent, the lock file) leaves it queued for the
   * next run, not tried again by this one: the others go on, and the run ends.
   */
  private async failedToStart(task: QueueTask, error: unknown): Promise<'done' | 'deferred'> {
    const held = isCodeloopsError(error) && (error.code === 'loop_running' || error.code === 'git_locked');
    if (this.request.signal.aborted || held) {
      await this.store.changeTask(task.id, (stored) => void (stored.state = 'queued'));
      this.request.onNotice?.({ type: 'task_finished', task: task.id, outcome: 'interrupted', branch: task.branch, session_id: null, error: String(error) });
      return held ? 'deferred' : 'done';
    }
    await this.finish(task, 'failed', { error: (error as Error).message, error_code: isCodeloopsError(error) ? error.code : 'internal' });
    return 'done';
  }

  private async ended(task: QueueTask, worktree: string, summary: RunSummary, start: string): Promise<'done' | 'deferred'> {
    const { request } = this;
    if (request.signal.aborted || summary.status === 'interrupted') {
      // Carried on from its session by the next run.
      await this.store.changeTask(task.id, (stored) => void (stored.state = 'queued'));
      return 'done';
    }
    if (summary.error_code === 'needs_input') {
      const question = summary.error ?? 'The loop needs your answer.';
      await this.store.changeTask(task.id, (stored) => {
        stored.state = 'needs_input';
        stored.question = question;
        stored.answer = null;
      });
      request.onNotice?.({ type: 'needs_input', task: task.id, session_id: summary.session_id, question });
      return 'done';
    }
    try {
      await this.recordEnd(task, worktree, summary, start);
      return 'done';
    } catch (error) {
      // Queued with its worktree: the next run finishes it from its session (a store that cannot be written leaves it running, which the next run takes the same way).
      await this.store.changeTask(task.id, (stored) => void (stored.state = 'queued')).catch(() => undefined);
      request.onNotice?.({ type: 'task_end_failed', task: task.id, session_id: summary.session_id, error: (error as Error).message });
      return 'deferred';
    }
  }

  /** A success committed on its branch, what the loop left read for the report, the worktree removed, the task finished. */
  private async recordEnd(task: QueueTask, worktree: string, summary: RunSummary, start: string): Promise<void> {
    const { request } = this;
    const head = await readSnapshot(request.repository, sessionHeadRef(summary.session_id));
    let commit: string | null = null;
    let branchChanged: string | null = null;
    if (summary.status === 'success' && head) {
      const message = summary.summary?.trim() || task.prompt.split('\n')[0]!;
      ({ commit, branchChanged } = await this.commitSuccess(task, worktree, head.tree, message, start));
    }
    const result = await taskResultOf(summary, request.sidecarDirOf, { repository: request.repository, from: start, to: commit ?? head?.commit ?? null });
    await removeLoopWorktree(request.repository, worktree, request.worktreesDirectory);
    await this.finish(task, summary.status, { commit, result: { ...result, branch_changed: branchChanged }, session_id: summary.session_id });
  }

  /**
   * Commits the tree a successful loop left on the task's branch: on the branch's commit
   * when it comes from the task's start (the agent's own commits stay in the history),
   * else on the start itself, whatever the agent did to the branch (said in
   * `branchChanged`). The commit is recorded before the branch moves to it, so that a run
   * killed in between is not taken for one that never committed.
   */
  private async commitSuccess(task: QueueTask, worktree: string, tree: string, message: string, start: string) {
    const { repository } = this.request;
    const at = await branchCommit(repository, task.branch);
    // A branch the agent made a name for another (the user's) holds none of the task's history: it is replaced, not followed.
    const own = at !== null && !(await isSymbolicBranch(repository, task.branch)) ? at : null;
    const recorded = this.store.task(task.id).commit;
    if (recorded && own && (await isAncestor(repository, recorded, own))) return { commit: recorded, branchChanged: null };
    const fromStart = own !== null && (await isAncestor(repository, start, own));
    const parent = fromStart ? own : start;
    const commit = await commitTree(repository, tree, [parent], message, this.author);
    await this.store.changeTask(task.id, (stored) => void (stored.commit = commit));
    await moveBranch(repository, task.branch, commit, at, 'codeloops: the task succeeded');
    const branchChanged = await branchChangesOf(worktree, task.branch, own, fromStart, parent);
    return { commit, branchChanged };
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
      branch_changed: finished.result?.branch_changed ?? null,
    });
  }
}

/** What the agent did to its branch and its worktree's HEAD, and where its success was committed, in words; null when it left them alone. */
async function branchChangesOf(worktree: string, branch: string, at: string | null, fromStart: boolean, parent: string): Promise<string | null> {
  const done: string[] = [];
  if (at === null) done.push(`deleted the branch ${branch} (or renamed it)`);
  else if (!fromStart) done.push(`moved the branch ${branch} to ${at.slice(0, 12)}, which does not come from the task's start`);
  const head = fs.existsSync(worktree)
    ? await gitText(worktree, ['symbolic-ref', '--quiet', 'HEAD'], { mayFindNothing: true }).then(
        (ref) => ref.trim(),
        () => null,
      )
    : null;
  if (head === '') done.push("detached its worktree's HEAD");
  else if (head !== null && head !== `refs/heads/${branch}`) done.push(`switched its worktree to ${head.replace(/^refs\/heads\//, '')}`);
  if (done.length === 0) return null;
  const onto = fromStart ? `where the branch was, ${parent.slice(0, 12)}` : `the task's start ${parent.slice(0, 12)}`;
  return `The agent ${done.join(' and ')}; the tree it left is committed on ${branch}, on top of ${onto}.`;
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
