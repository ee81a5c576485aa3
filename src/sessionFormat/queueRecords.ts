import path from 'node:path';
import { FAILURE_CODES } from './failures.js';
import { dataHome, type Environment } from './sessionFiles.js';
import { taskFlagsSchema } from './runOptions.js';
import { OUTCOMES } from './sessionLines.js';
import { VERIFICATIONS } from './verification.js';
import * as z from './zod.js';

/**
 * A queue of tasks (`codeloops queue …`): one per repository, `queues/<key>.json` in
 * the data folder beside the sessions, rewritten whole and renamed into place at every
 * change. Each task is a loop on its own branch, `codeloops/<id>-<slug>`, in its own
 * worktree; ids are given when a task is added (1, 2, 3…) and never reused. The CLI
 * and the editor's Queue view read and change it through `src/queue/`.
 */

/**
 * Where a task is: `queued` (not started, or to be carried on: a task whose run was
 * stopped or crashed is resumed from its session when it can be), `running`,
 * `needs_input` (its loop asked a question: it waits for `queue answer`, its worktree
 * kept), `answered` (to be carried on with the answer), `finished` (never run again;
 * `outcome` says how).
 */
export const TASK_STATES = ['queued', 'running', 'needs_input', 'answered', 'finished'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** How a finished task ended: its loop's outcome, or `refused` (its branch existed: `branch_exists`). */
export const TASK_OUTCOMES = [...OUTCOMES, 'refused'] as const;
export type TaskOutcome = (typeof TASK_OUTCOMES)[number];

/** The run flags a task was added with (agents, models, guards), declared with the other run options. */
export type TaskFlags = z.infer<typeof taskFlagsSchema>;

/** What a task's loop left, for `queue report`: read once when it ends. */
export const taskResultSchema = z.object({
  summary: z.nullable(z.string()),
  verification: z.nullable(z.enum(VERIFICATIONS)),
  iterations: z.number(),
  total_cost_usd: z.nullable(z.number()),
  duration_secs: z.number(),
  error: z.nullable(z.string()),
  error_code: z.nullable(z.enum(FAILURE_CODES)),
  /** Between the task's start commit and its branch's commit (a success), or the tree its loop left. */
  files_changed: z.nullable(z.number()),
  insertions: z.nullable(z.number()),
  deletions: z.nullable(z.number()),
  /** The checks on the last tree that ran them. */
  checks: z.array(z.object({ name: z.string(), passed: z.boolean(), required: z.boolean() })),
  /** The critic's findings it had not resolved when the loop ended. */
  open_findings: z.array(z.object({ id: z.string(), file: z.nullable(z.string()), line: z.nullable(z.int()), message: z.string() })),
  /**
   * What the agent did to the task's branch or its worktree's HEAD (deleted or moved the
   * branch, left HEAD off it) and where the success was committed instead, in words;
   * absent or null when it left them alone.
   */
  branch_changed: z.optional(z.nullable(z.string())),
});
export type TaskResult = z.infer<typeof taskResultSchema>;

/** A success branch pushed (`git push REMOTE <branch>`), or the push that failed and why. */
function taskPushSchema() {
  return z.object({ remote: z.string(), pushed: z.boolean(), error: z.nullable(z.string()) });
}
export type TaskPush = z.infer<ReturnType<typeof taskPushSchema>>;

export const queueTaskSchema = z.object({
  id: z.int(),
  prompt: z.string(),
  branch: z.string(),
  flags: taskFlagsSchema,
  state: z.enum(TASK_STATES),
  added_at: z.string(),
  started_at: z.nullable(z.string()),
  finished_at: z.nullable(z.string()),
  /** The commit its branch starts from (the queue's base, or with `--stack` the last successful task's branch), once started. */
  start_commit: z.nullable(z.string()),
  /** Every session its loop ran, oldest first (a resumed run adds one). */
  session_ids: z.array(z.string()),
  /** Its worktree while it has one (running, waiting for an answer, or stopped before the end). */
  worktree: z.nullable(z.string()),
  outcome: z.nullable(z.enum(TASK_OUTCOMES)),
  /** The commit made on its branch when it ended `success`. */
  commit: z.nullable(z.string()),
  /** The question its loop waits on (`needs_input`), and the answer given. */
  question: z.nullable(z.string()),
  answer: z.nullable(z.string()),
  result: z.nullable(taskResultSchema),
  /** `queue run --push REMOTE`: the success branch pushed there, or why not; absent when not asked. */
  push: z.optional(z.nullable(taskPushSchema())),
  /** `queue import`: the shard's bundle the task's outcome came from (`shards/<file> (shard 2/3)`); absent for a task run here. */
  imported_from: z.optional(z.nullable(z.string())),
});
export type QueueTask = z.infer<typeof queueTaskSchema>;

export const queueFileSchema = z.object({
  version: z.literal(1),
  /** The repository's top folder (its main worktree) and its shared git folder, which keys the queue. */
  repository: z.string(),
  git_common_dir: z.string(),
  next_id: z.int(),
  /** The commit HEAD was at when `queue run` first started: every branch starts there (unless `--stack`). */
  base_commit: z.nullable(z.string()),
  tasks: z.array(queueTaskSchema),
});
export type QueueFile = z.infer<typeof queueFileSchema>;

/**
 * A queue's tasks as a file to commit with the repository (`codeloops queue export`,
 * `codeloops-queue.json` at its top by default), for clones elsewhere to run their share
 * of (`queue run --shard I/N --tasks codeloops-queue.json`): the tasks not finished, in
 * the queue's order, each with its id (so that the machines and the queue at home agree
 * on ids and branches), its prompt and its flags; and the commit every branch starts from.
 */
export const queueExportFileSchema = z.object({
  format: z.literal('codeloops-queue'),
  version: z.literal(1),
  exported_at: z.string(),
  /** The queue's base, or HEAD when it had none yet: each task's branch starts there on every machine. */
  base_commit: z.nullable(z.string()),
  tasks: z.array(z.object({ id: z.int().check(z.positive()), prompt: z.string(), flags: taskFlagsSchema })),
});
export type QueueExportFile = z.infer<typeof queueExportFileSchema>;

/** Where `queue export` writes, from the repository's top, unless told. */
export const QUEUE_EXPORT_FILE = 'codeloops-queue.json';

/** `$XDG_DATA_HOME/codeloops/queues`: one `<key>.json` per repository, with its lock files. */
export function queuesDir(env: Environment = process.env): string {
  return path.join(dataHome(env), 'codeloops', 'queues');
}

/**
 * A task's slug: the first words of its prompt's first line, lower case, letters and
 * digits joined by `-`, at most 40 characters (a longer first word cut); `task` when none.
 * Nothing else gets in, so the branch is always a name git takes (no `..`, `@{`, `.lock`).
 */
export function taskSlug(prompt: string): string {
  const title = prompt.split('\n').find((line) => line.trim() !== '') ?? '';
  const words = title
    .normalize('NFKD')
    .replace(/\p{M}/gu, '') // the accents NFKD took apart: "façade" is "facade", not "fac ade"
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
  let slug = '';
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > 40) {
      slug ||= word.slice(0, 40);
      break;
    }
    slug = next;
  }
  return slug || 'task';
}

/** `codeloops/<id>-<slug>`. */
export function taskBranch(id: number, prompt: string): string {
  return `codeloops/${id}-${taskSlug(prompt)}`;
}

/** The task's first line, as lists show it. */
export function taskTitle(task: Pick<QueueTask, 'prompt'>): string {
  const first = task.prompt.split('\n').find((line) => line.trim() !== '') ?? '';
  return first.length > 80 ? `${first.slice(0, 79)}…` : first;
}

/**
 * Where a task is, in words: its state, or how it finished (with its verification). A
 * task left `running` by a runner that is gone (`runnerAlive` false) is stopped, to carry on.
 */
export function taskStateText(task: QueueTask, runnerAlive = true): string {
  if (task.state === 'needs_input') return 'needs your answer';
  if (task.state === 'answered') return 'answered, to carry on';
  if (task.state === 'running') return runnerAlive ? 'running' : 'stopped, to carry on';
  if (task.state !== 'finished') return task.session_ids.length > 0 ? 'stopped, to carry on' : task.state;
  const verification = task.result?.verification ? ` (${task.result.verification})` : '';
  return `${task.outcome ?? 'finished'}${verification}`;
}

/** What a queue tells as it runs, to whoever listens: a surface's notifications, `[notify]`. */
export type QueueNotice =
  | { type: 'task_started'; task: number; branch: string; resumed: boolean }
  | {
      type: 'task_finished';
      task: number;
      outcome: TaskOutcome;
      branch: string;
      session_id: string | null;
      error: string | null;
      branch_changed?: string | null;
    }
  /** Its loop ended but what follows failed (the commit, the record): it stays queued, its worktree kept, for the next run to finish. */
  | { type: 'task_end_failed'; task: number; session_id: string; error: string }
  | { type: 'needs_input'; task: number; session_id: string | null; question: string }
  | { type: 'queue_finished'; finished: number; waiting: number; left: number; interrupted: boolean };

/** What `queue merge` did (`--json`): the user's branch (`refs/heads/…` left out), where it was and is now, the files written. */
export const mergeResultSchema = z.object({
  status: z.enum(['merged', 'already_merged', 'undone']),
  task: z.int(),
  branch: z.string(),
  /** Where the branch was, and where it is now (the merge commit, or after an undo the commit before it). */
  from: z.string(),
  to: z.string(),
  /** The files written in the work tree and index. */
  files: z.array(z.string()),
});
export type MergeResult = z.infer<typeof mergeResultSchema>;
export type MergeStatus = MergeResult['status'];
