import type { AgentKind } from '../../agents/agentKinds.js';
import type { RunPlan } from '../../sessionFormat/runPlans.js';
import { failureAnswer, failureReportOf, type FailureCode } from '../../sessionFormat/failures.js';
import type { Forecast } from '../../sessionFormat/forecast.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import type { FolderRef } from '../editorPorts.js';
import type { RunOverrides } from '../runner/loopProcess.js';
import { runnerCrashedText } from '../runs/loopEndReport.js';
import { UNTRUSTED_LOOPS_TEXT } from '../runs/loopStarter.js';
import type { RunController } from '../runs/runController.js';
import type { RunnerAnswer } from '../runner/runnerClient.js';
import { markdownText } from './chatMarkdown.js';
import type { CancelToken } from './chatPorts.js';
import { listedSession, readSessionDetails } from './sessionDetails.js';

/** `codeloops_runLoop`'s input, as its schema in the manifest declares it. */
export interface RunLoopInput {
  task: string;
  actorAgent?: AgentKind;
  criticAgent?: AgentKind;
  maxIterations?: number;
  /** Shell commands, each a required check. */
  checks?: string[];
  /** A workspace folder by name or path; default: the first. */
  folder?: string;
}

export interface GetSessionInput {
  sessionId: string;
}

export interface ListSessionsInput {
  limit?: number;
  project?: string;
}

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

/** How many sessions `codeloops_listSessions` gives unless asked. */
const DEFAULT_LIST_LIMIT = 20;

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
  async prepareRunLoop(input: RunLoopInput): Promise<PreparedInvocation> {
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

  async runLoop(input: RunLoopInput, token: CancelToken): Promise<string> {
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

  async getSession(input: GetSessionInput): Promise<string> {
    return answering(async () => readSessionDetails(this.deps.store, await this.deps.store.resolveId(input.sessionId)));
  }

  async listSessions(input: ListSessionsInput): Promise<string> {
    return answering(async () => {
      const sessions = await this.deps.store.list(input.project ? { project: input.project } : {});
      return { sessions: sessions.slice(0, input.limit ?? DEFAULT_LIST_LIMIT).map(listedSession), total: sessions.length };
    });
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
  return { actorAgent: input.actorAgent, criticAgent: input.criticAgent, maxIterations: input.maxIterations, checks: input.checks };
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
