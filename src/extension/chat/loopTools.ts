import type { RunPlan } from '../../sessionFormat/runPlans.js';
import { failureAnswer, failureReportOf, type FailureCode } from '../../sessionFormat/failures.js';
import type { Forecast } from '../../sessionFormat/forecast.js';
import { modelRunOptionsShape, runOptionsOfModel } from '../../sessionFormat/runOptions.js';
import * as z from '../../sessionFormat/zod.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import { listModelSessions, readModelSession } from '../../sessionView/modelSession.js';
import type { FolderRef } from '../editorPorts.js';
import type { RunOverrides } from '../runner/loopProcess.js';
import { runnerCrashedText } from '../runs/loopEndReport.js';
import { UNTRUSTED_LOOPS_TEXT } from '../runs/loopStarter.js';
import type { RunController } from '../runs/runController.js';
import type { RunnerAnswer } from '../runner/runnerClient.js';
import { markdownText } from './chatMarkdown.js';
import type { CancelToken } from './chatPorts.js';

/** How many sessions `codeloops_listSessions` gives unless asked. */
const DEFAULT_LIST_LIMIT = 20;

/**
 * The tools' inputs, checked on arrival. package.json declares the same schemas for
 * VS Code, statically (a manifest is JSON): a test fails when they differ. The run
 * options come from their one declaration (`sessionFormat/runOptions.ts`), in the
 * camelCase the tools' other arguments use.
 */
export const runLoopInputSchema = z.object({
  task: z
    .string()
    .check(
      z.describe(
        "The task, as you would write it for a coding agent: what to do and how to tell it is done. A list under a 'Requirements' heading becomes the checklist the critic judges.",
      ),
    ),
  ...modelRunOptionsShape('camel'),
  folder: z.optional(z.string().check(z.describe('The workspace folder to run in, by name or absolute path. Default: the first workspace folder.'))),
});
export type RunLoopInput = z.infer<typeof runLoopInputSchema>;

export const getSessionInputSchema = z.object({
  sessionId: z.string().check(z.describe('The session id as codeloops_runLoop or codeloops_listSessions gave it, a unique prefix of one, or "latest".')),
});
export type GetSessionInput = z.infer<typeof getSessionInputSchema>;

export const listSessionsInputSchema = z.object({
  limit: z.optional(z.int().check(z.minimum(1), z.describe(`At most this many sessions (default ${DEFAULT_LIST_LIMIT}).`))),
  project: z.optional(z.string().check(z.describe("Only the sessions of this project (the name of the repository's folder)."))),
});
export type ListSessionsInput = z.infer<typeof listSessionsInputSchema>;

/** Each tool's input schema by its name, as package.json lists them. */
export const TOOL_INPUT_SCHEMAS = {
  codeloops_runLoop: runLoopInputSchema,
  codeloops_getSession: getSessionInputSchema,
  codeloops_listSessions: listSessionsInputSchema,
} as const;

/** `vscode.PreparedToolInvocation`: what the chat shows while the tool runs, and the question before it does. */
export interface PreparedInvocation {
  invocationMessage: string;
  confirmationMessages?: { title: string; message: string };
}

export interface LoopToolsDeps<F extends FolderRef> {
  runs: RunController<F>;
  isTrusted: () => boolean;
  folders: () => readonly F[];
  store: SessionStore;
  forecast: (folder: F) => Promise<Forecast | undefined>;
  /** What a run would use in the folder (`codeloops run --dry-run`); runs nothing. */
  plan: (folder: F, task: string, overrides: RunOverrides) => Promise<RunnerAnswer<RunPlan>>;
  platformRefusal: string | null;
}

/**
 * Codeloops as tools for any chat agent in VS Code (Copilot's agent mode…): run a
 * loop until the checks pass and the critic agrees, and read sessions. Each answers
 * JSON text for the model; a failure is the envelope `{"failure": {"code", "message", "details", "hint"}}`,
 * as the CLI's `--json` says it. A loop runs as Run Prompt's do (the runner process,
 * the status bar, the log), after the user confirmed the agents, guards and folder.
 */
export class LoopTools<F extends FolderRef> {
  constructor(private readonly deps: LoopToolsDeps<F>) {}

  /** Names the folder, the agents and the guards the run would use, for the user to confirm. Runs nothing. */
  async prepareRunLoop(given: RunLoopInput): Promise<PreparedInvocation> {
    const input = runLoopInputSchema.safeParse(given).data;
    if (!input) return { invocationMessage: 'Codeloops cannot run a loop with these arguments' };
    const folder = this.folderNamed(input.folder);
    if (!folder || this.refusal()) return { invocationMessage: 'Codeloops cannot run a loop here' };
    const plan = await this.deps.plan(folder, input.task, overridesOf(input));
    const where = `In **${markdownText(folder.name)}** (${markdownText(folder.uri.fsPath)})`;
    const task = `> ${markdownText(input.task.replace(/\s+/g, ' ').slice(0, 500))}`;
    return {
      invocationMessage: `Running a Codeloops loop in ${folder.name}`,
      confirmationMessages: { title: 'Run a Codeloops loop?', message: `${where}: ${planText(plan)}\n\n${task}` },
    };
  }

  async runLoop(given: RunLoopInput, token: CancelToken): Promise<string> {
    const checked = runLoopInputSchema.safeParse(given);
    if (!checked.success) return failure('usage', inputProblems(checked.error));
    const input = checked.data;
    const refusal = this.refusal();
    if (refusal) return failure(refusal.code, refusal.message);
    const folder = this.folderNamed(input.folder);
    if (!folder) return failure('usage', `No workspace folder ${input.folder === undefined ? 'is open' : `is named ${input.folder}`}.`);
    if (!this.deps.runs.canStartIn(folder)) return failure('loop_running', `A Codeloops loop already runs in ${folder.name}.`);
    const cancel = token.onCancellationRequested(() => void this.deps.runs.interrupt(folder));
    try {
      const end = await this.deps.runs.start(folder, { text: input.task }, { forecast: this.deps.forecast(folder), overrides: overridesOf(input) });
      if (end === undefined) return failure('loop_running', `A Codeloops loop already runs in ${folder.name}.`);
      if (end.kind === 'refused') return failure(end.code, end.message, end.details);
      if (end.kind === 'crashed') return failure(end.code, runnerCrashedText(end.message));
      const { summary } = end;
      return JSON.stringify({
        session_id: summary.session_id,
        outcome: summary.status,
        verification: summary.verification,
        summary: summary.summary,
        iterations: summary.iterations,
        stop_reason: summary.stop_reason,
        error: summary.error,
        total_cost_usd: summary.total_cost_usd,
      });
    } finally {
      cancel.dispose();
    }
  }

  async getSession(given: GetSessionInput): Promise<string> {
    const checked = getSessionInputSchema.safeParse(given);
    if (!checked.success) return failure('usage', inputProblems(checked.error));
    const input = checked.data;
    return answering(async () => readModelSession(this.deps.store, await this.deps.store.resolveId(input.sessionId)));
  }

  async listSessions(given: ListSessionsInput): Promise<string> {
    const checked = listSessionsInputSchema.safeParse(given);
    if (!checked.success) return failure('usage', inputProblems(checked.error));
    const input = checked.data;
    return answering(() => listModelSessions(this.deps.store, { project: input.project, limit: input.limit ?? DEFAULT_LIST_LIMIT }));
  }

  /** Why no loop may run here at all: the platform, or a workspace the user has not trusted. */
  private refusal(): { code: FailureCode; message: string } | undefined {
    if (this.deps.platformRefusal) return { code: 'platform_unsupported', message: this.deps.platformRefusal };
    return this.deps.isTrusted() ? undefined : { code: 'project_untrusted', message: UNTRUSTED_LOOPS_TEXT };
  }

  private folderNamed(name: string | undefined): F | undefined {
    const folders = this.deps.folders();
    if (name === undefined) return folders[0];
    return folders.find((folder) => folder.name === name || folder.uri.fsPath === name);
  }
}

function overridesOf(input: RunLoopInput): RunOverrides {
  return runOptionsOfModel(input, 'camel');
}

/** The plan in a sentence: the agents, then each guard. */
function planText(answer: RunnerAnswer<RunPlan>): string {
  if (!answer.ok && answer.failure.kind === 'refused') return `the loop would not start: ${markdownText(answer.failure.message)}`;
  if (!answer.ok) return 'the agents and guards of your settings and codeloops.toml (the runner could not list them).';
  const plan = answer.answer;
  const agent = (role: RunPlan['actor']) => `${role.agent}${role.model ? ` (${role.model})` : ''}`;
  const guards = [
    plan.max_iterations ? `at most ${plan.max_iterations} iterations` : 'no iteration limit',
    plan.checks.length > 0 ? `checks: ${plan.checks.map((check) => `${check.name}${check.required ? '' : ' (advisory)'}`).join(', ')}` : 'no checks',
    plan.max_cost_usd === null ? null : `at most $${plan.max_cost_usd}`,
    plan.max_tokens === null ? null : `at most ${plan.max_tokens} tokens`,
    plan.max_duration_secs === null ? null : `at most ${plan.max_duration_secs} s`,
    plan.stall.unchanged_iterations === 0 ? null : `stops after ${plan.stall.unchanged_iterations} iterations without progress`,
    plan.review === 'pause' ? 'pauses for your review after each iteration' : null,
  ].filter((guard): guard is string => guard !== null);
  return `actor **${markdownText(agent(plan.actor))}**, critic **${markdownText(agent(plan.critic))}**; ${markdownText(guards.join('; '))}.`;
}

/** What is wrong with a tool's input, for the model to call it again right. */
function inputProblems(error: z.core.$ZodError): string {
  return `The arguments do not fit the tool's schema: ${error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}.`;
}

/** The failure envelope of the CLI's `--json`. */
function failure(code: FailureCode, message: string, details: Readonly<Record<string, unknown>> = {}): string {
  return JSON.stringify(failureAnswer({ code, message, details: { ...details }, hint: null }));
}

/** A read's answer as JSON, or its failure (a session that is not there: `session_not_found`). */
async function answering(read: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify(await read());
  } catch (error) {
    const { code, message, details } = failureReportOf(error);
    return failure(code, message, details);
  }
}
