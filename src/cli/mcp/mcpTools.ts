import path from 'node:path';
import { assertIteration, reviewTargetOf } from '../../review/reviewTarget.js';
import { sessionReview } from '../../review/sessionReview.js';
import { CodeloopsError } from '../../sessionFormat/failures.js';
import { modelRunOptionsShape, noNul, oneArgument, runOptionsOfModel } from '../../sessionFormat/runOptions.js';
import { sidecarDirOf } from '../../sessionFormat/sessionFiles.js';
import * as z from '../../sessionFormat/zod.js';
import { describeProgress, listModelSessions, readModelSession, type ModelSession } from '../../sessionView/modelSession.js';
import { openStore } from '../openStore.js';
import { startDetachedLoop } from './detachedRun.js';
import { interruptLoop, waitForLoop, type ProgressReport } from './loopWaits.js';

/**
 * The tools `codeloops mcp` offers, with the argument names issue 26 fixed (a
 * contract: clients' configurations and prompts name them). Each tool's arguments
 * are a zod schema: the JSON Schema a client lists is made from it, and a call is
 * checked against it before it runs. Descriptions are written for a model.
 */

/** `wait_session` waits this long unless told, and never longer than the maximum. */
export const DEFAULT_WAIT_SECS = 300;
export const MAX_WAIT_SECS = 3600;
const DEFAULT_LIST_LIMIT = 20;
const MAX_LIST_LIMIT = 500;

const text = (description: string) => z.string().check(z.minLength(1), noNul, z.describe(description));
const sessionId = text('The session id run_loop returned (or a unique prefix of one, or "latest").');

/** The run options a client may give come from their one declaration, in snake_case (`actor_agent`, `max_iterations`, `checks`…). */
const runLoopArguments = z.object({
  prompt: z.string().check(
    z.refine((value) => value.trim() !== '', 'must say what to do: it is empty'),
    noNul,
    z.describe('The task, in full, as you would give it to a coding agent: what to change and how to tell it is done.'),
  ),
  working_dir: oneArgument('The absolute path of the git repository (or a folder in one) to work in.'),
  ...modelRunOptionsShape('snake'),
});

const listSessionsArguments = z.object({
  project: z.optional(text("Only sessions of this project (the repository folder's name).")),
  limit: z.optional(
    z.int().check(z.minimum(1), z.maximum(MAX_LIST_LIMIT), z.describe(`At most this many sessions, newest first (default ${DEFAULT_LIST_LIMIT}).`)),
  ),
});

const waitArguments = z.object({
  session_id: sessionId,
  timeout_secs: z.optional(
    z
      .int()
      .check(
        z.minimum(1),
        z.maximum(MAX_WAIT_SECS),
        z.describe(`Return after this many seconds if the loop still runs (default ${DEFAULT_WAIT_SECS}, at most ${MAX_WAIT_SECS}).`),
      ),
  ),
});

const reviewArguments = z.object({
  session_id: sessionId,
  iteration: z.int().check(z.minimum(0), z.describe('The iteration number, as get_session lists it.')),
});

/** What a tool's handler gets besides its arguments: progress to report, and the client's cancellation. */
export interface ToolContext {
  cliPath: string;
  progress: (report: ProgressReport) => Promise<void>;
  signal: AbortSignal;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  arguments: z.ZodMiniObject;
  /** Reads only (`readOnlyHint`); else it changes something: files (`edits`, a loop's agents, which reach the network too) or a loop's course. */
  effect: 'reads' | 'edits' | 'controls';
  run(args: never, context: ToolContext): Promise<unknown>;
}

/** A tool whose handler's argument type is its schema's, kept in one list with the others. */
function tool<S extends z.ZodMiniObject>(
  definition: Omit<ToolDefinition, 'arguments' | 'run'> & { arguments: S; run(args: z.infer<S>, context: ToolContext): Promise<unknown> },
): ToolDefinition {
  return definition as unknown as ToolDefinition;
}

function absoluteWorkingDir(workingDir: string): string {
  if (!path.isAbsolute(workingDir)) {
    throw new CodeloopsError(
      'usage',
      `working_dir must be an absolute path; "${workingDir}" is relative, and this server has no folder of its own to resolve it from.`,
      {
        working_dir: workingDir,
      },
    );
  }
  return path.normalize(workingDir);
}

async function viewOf(idOrPrefix: string): Promise<ModelSession> {
  const store = openStore(() => {});
  return readModelSession(store, await store.resolveId(idOrPrefix));
}

export const TOOLS: readonly ToolDefinition[] = [
  tool({
    name: 'run_loop',
    title: 'Run a Codeloops loop',
    description:
      'Start an actor–critic loop on a task in a git repository: a coding agent (the actor) works on it, the checks run, a second agent (the critic) reviews the diff, and it repeats until the critic says DONE with the checks passing, or a limit stops it. ' +
      "It runs in the background, in its own process, and edits the repository's files. Returns its session_id at once: follow it with wait_session, read it with get_session. One loop per repository at a time.",
    arguments: runLoopArguments,
    effect: 'edits',
    async run(args, context) {
      const workingDir = absoluteWorkingDir(args.working_dir);
      const id = await startDetachedLoop({ prompt: args.prompt, workingDir, options: runOptionsOfModel(args, 'snake') }, context.cliPath);
      const view = await viewOf(id);
      return { session_id: id, status: view.status, working_dir: view.working_dir, message: describeProgress(view) };
    },
  }),
  tool({
    name: 'get_session',
    title: 'Get a Codeloops session',
    description:
      "A loop's session: whether it still runs, the task, each iteration's critic decision, feedback, failed checks, unmet requirements, findings and diff stat, and how it ended (outcome, summary, verification, cost). No agent output or diff: review_session gives an iteration's changes.",
    arguments: z.object({ session_id: sessionId }),
    effect: 'reads',
    run: (args) => viewOf(args.session_id),
  }),
  tool({
    name: 'wait_session',
    title: 'Wait for a Codeloops session',
    description: `Wait until a loop ends, or timeout_secs pass (default ${DEFAULT_WAIT_SECS}, at most ${MAX_WAIT_SECS}), reporting progress as it goes; returns the session as get_session does, with timed_out true when the loop still runs. Call it again to keep waiting.`,
    arguments: waitArguments,
    effect: 'reads',
    async run(args, context) {
      const store = openStore(() => {});
      const id = await store.resolveId(args.session_id);
      return waitForLoop(store, id, { timeoutSecs: args.timeout_secs ?? DEFAULT_WAIT_SECS, ...context });
    },
  }),
  tool({
    name: 'list_sessions',
    title: 'List Codeloops sessions',
    description:
      "Recent loop sessions, newest first: id, when, the project, the prompt's start, outcome (null while running or after a crash), running (whether its loop runs now), iterations, duration, cost.",
    arguments: listSessionsArguments,
    effect: 'reads',
    run: (args) =>
      listModelSessions(
        openStore(() => {}),
        { project: args.project, limit: args.limit ?? DEFAULT_LIST_LIMIT },
      ),
  }),
  tool({
    name: 'interrupt_session',
    title: 'Interrupt a Codeloops loop',
    description:
      'Stop a running loop as Ctrl+C would: its agents are stopped and the session ends "interrupted" (its work so far stays in the files). Returns the session; interrupted is false when it was not running.',
    arguments: z.object({ session_id: sessionId }),
    effect: 'controls',
    async run(args) {
      const store = openStore(() => {});
      return interruptLoop(store, await store.resolveId(args.session_id));
    },
  }),
  tool({
    name: 'review_session',
    title: "Review a Codeloops iteration's changes",
    description:
      "One iteration's changes hunk by hunk (numbered, with their diff text), with the critic's findings, the user's comments and rejected hunks: what a reviewer reads on a pull request.",
    arguments: reviewArguments,
    effect: 'reads',
    async run(args) {
      const store = openStore(() => {});
      const target = await reviewTargetOf(store, (id) => sidecarDirOf(id), await store.resolveId(args.session_id));
      assertIteration(target, args.iteration);
      return sessionReview(target, [args.iteration]);
    },
  }),
];
