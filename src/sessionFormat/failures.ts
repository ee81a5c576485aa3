import * as z from './zod.js';

/**
 * Every failure and refusal the engine reports has a stable code. Surfaces decide by
 * the code and word it for their users (the CLI adds the flags to use, the editor
 * the buttons to press); a message may be reworded at any time, a code never.
 * Carried in the `run_refused` run event, in `--json-output` (`error_code`) and in
 * a failed session's `session_end` (`error_code`).
 */
export const FAILURE_CODES = [
  /** A flag, an argument or a prompt that cannot be used as given. */
  'usage',
  /** A config file (or the editor's settings) cannot be read or has a wrong value. */
  'config_invalid',
  /** An agent's program is not installed, not on PATH, or not executable. */
  'agent_missing',
  /** The working directory does not exist or is not a folder. */
  'directory_missing',
  'not_a_repository',
  /** The working directory is a git folder (`.git`) or a bare repository: git's own files, no working tree. */
  'not_a_work_tree',
  'git_missing',
  /** Another loop runs in this repository. */
  'loop_running',
  'session_not_found',
  /** A session id prefix that matches several sessions. */
  'session_ambiguous',
  /** A file in the sessions folder that is not a session. */
  'not_a_session',
  /** Where Codeloops appends a record (a session's review.jsonl, events.jsonl) there is something else than a regular file: a FIFO, a folder. */
  'not_a_file',
  'iteration_not_found',
  /** An iteration has no hunk of that number (see `codeloops review`). */
  'hunk_not_found',
  /** No finding, comment or rejection of that id. */
  'review_item_not_found',
  /** Another review action on the same session is under way and did not finish. */
  'review_busy',
  /** Resume: the files differ from how the loop left them. */
  'tree_changed',
  /** The session's snapshots are gone (deleted, another clone, another runner). */
  'snapshot_missing',
  /** Resume: the session already ended with success. */
  'session_finished',
  /** Resume: the session has used its iterations. */
  'iteration_limit',
  /** Resume: the session ended while resume was starting. */
  'session_ended',
  /** A loop ended: the actor failed twice in a row without changing anything. */
  'actor_failed',
  /** A loop ended: the critic failed twice in a row. */
  'critic_failed',
  /** A loop ended: an agent's program could not be started at all. */
  'agent_not_started',
  /** A loop ended: it crossed a budget (cost, tokens or time); `stop_reason` says which. */
  'budget_exceeded',
  /** A loop ended: it went in circles (`stop_reason` `stalled`). */
  'stalled',
  /** A loop ended: the critic or the actor needs the user's answer and nobody could give it (no terminal, no editor); the question is the error. */
  'needs_input',
  /**
   * A loop ended: an agent's usage limit (or an API that kept refusing) would have it
   * wait past `[limits] max_wait_secs`, refused the agent too many times in one wait,
   * or waiting is off (`stop_reason` `usage_limit`; `details.until`). Never an outage.
   */
  'usage_limit',
  /** A loop ended: an agent's login or API key was refused; `codeloops doctor` says how to set it up. */
  'agent_auth',
  /** A project file would run programs (agents' commands, arguments, checks) that the user has not trusted. */
  'project_untrusted',
  /** A git command the loop needs failed (a snapshot, a diff). */
  'git_failed',
  /** git found one of its lock files there already (`details.lock_file`: an index's, a ref's, `packed-refs.lock`), held by another git or left by one that crashed. */
  'git_locked',
  /** A filter the repository gives some files (such as Git LFS) could not run or failed: `details.filter`, `details.program`. */
  'git_filter_failed',
  /** A candidate's worktree could not be made, or its `[worktree] setup` command failed: that candidate failed. */
  'setup_failed',
  /** No candidate group by that id (or the session is not one of a group). */
  'group_not_found',
  /** No eval by that id in the evals folder (`codeloops eval --resume`, `sessions list --eval`). */
  'eval_not_found',
  /** `codeloops eval merge`: the shards' bundles are not of one eval: their plans (suite, commits, configs) or their shard counts differ (`details.differences`). */
  'eval_mismatch',
  /** A sessions bundle that cannot be imported: not a bundle, damaged, or its snapshots need commits this repository lacks. */
  'bundle_invalid',
  /** Import: a session of the bundle is already here. */
  'session_exists',
  /** `codeloops queue`: no task of that id in the repository's queue. */
  'task_not_found',
  /** `codeloops queue run` or `report`: the repository's queue has no task (to run). */
  'queue_empty',
  /** `codeloops queue`: the task's branch (`codeloops/<id>-<slug>`) already exists and is never overwritten: that task is refused. */
  'branch_exists',
  /** `codeloops queue`: another process runs this repository's queue (`details.pid`), or a task is running and cannot be changed now. */
  'queue_running',
  /** `codeloops queue`: the repository's queue file is not a queue (torn by a crash, edited by hand); `details.file`, and `details.previous`, its copy before the last change, when there is one. */
  'queue_invalid',
  /**
   * `codeloops queue import`: the shards' bundles are not of one queue (their tasks or
   * base differ, or their shard counts: `details.differences`), or a task of theirs is
   * not this queue's task of that id, or ran here too (`details.tasks`). Nothing imported.
   */
  'queue_mismatch',
  /** `codeloops queue import`, `eval merge`: a shard's bundle says its share did not finish (its runner stopped or crashed midway: `details.unfinished`); nothing imported unless told to take what finished (`--partial`). */
  'shard_incomplete',
  /** `codeloops queue merge`: git cannot merge the task's branch cleanly (`details.files`); nothing was changed. */
  'merge_conflict',
  /** `codeloops queue merge`: the task has no successful branch to merge, HEAD is on no branch, or (undo) the branch is not at that merge (`details.reason`). */
  'merge_refused',
  /** Codeloops does not run on this platform (a native Windows): it says where it does. */
  'platform_unsupported',
  /** The editor's runner process died (or could not start) without answering: its last words on stderr are the message. */
  'runner_crashed',
  /** The runner itself failed: a bug. */
  'internal',
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

/** Structured facts about a failure: the file, the key, the paths, the pid. Plain JSON. */
export type FailureDetails = Readonly<Record<string, unknown>>;

/**
 * An expected failure: its message says what is wrong and how to fix it without
 * naming any surface's controls; `code` says which failure it is.
 */
export class CodeloopsError extends Error {
  override name = 'CodeloopsError';
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly details: FailureDetails = {},
  ) {
    super(message);
  }
}

/**
 * Whether an error is an expected failure. Known by its code as well as by its class:
 * the editor loads some parts as bundles of their own (`extension/lazyBundle.ts`),
 * each with its own copy of the class.
 */
export function isCodeloopsError(error: unknown): error is CodeloopsError {
  if (error instanceof CodeloopsError) return true;
  const { code, details } = (error ?? {}) as { code?: unknown; details?: unknown };
  return error instanceof Error && (FAILURE_CODES as readonly unknown[]).includes(code) && typeof details === 'object' && details !== null;
}

/** A failure as the engine reports it: the code, the message, the facts. */
export interface FailureReport {
  code: FailureCode;
  message: string;
  details: FailureDetails;
}

/**
 * The one failure envelope of every machine-readable answer (`--json`, `--json-output`,
 * `run_refused`, an MCP tool's error): the engine's report and, from the surface that
 * answered, what to type or do about it (`hint`, null when nothing helps).
 */
export const failureSchema = z.object({
  code: z.enum(FAILURE_CODES),
  message: z.string(),
  details: z.record(z.string(), z.unknown()),
  hint: z.nullable(z.string()),
});
export type Failure = z.infer<typeof failureSchema>;

/** What to report of any error: an expected one as it is, anything else as `internal` (a bug). */
export function failureReportOf(error: unknown): FailureReport {
  if (isCodeloopsError(error)) return { code: error.code, message: error.message, details: error.details };
  return { code: 'internal', message: error instanceof Error ? error.message : String(error), details: {} };
}

/** Any error as the envelope carries it, with the surface's hint. */
export function failureOf(error: unknown, hint: string | null): Failure {
  const { code, message, details } = failureReportOf(error);
  return { code, message, details: { ...details }, hint };
}

/**
 * What any command prints on stdout when it fails and was asked for JSON: `failure`.
 * `error` is the same object under the name 0.x printed it, kept for one release so
 * that scripts reading it go on working (see CHANGELOG).
 */
export const failureAnswerSchema = z.object({ failure: failureSchema, error: z.optional(failureSchema) });
export type FailureAnswer = z.infer<typeof failureAnswerSchema>;

export function failureAnswer(failure: Failure): FailureAnswer {
  return { failure, error: failure };
}

/** The failure envelope as a command prints it: one line. */
export function formatFailureAnswer(failure: Failure): string {
  return `${JSON.stringify(failureAnswer(failure))}\n`;
}
