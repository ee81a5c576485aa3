import type { IterationLine, SessionEndLine, SessionStartLine } from '../sessionFormat/sessionLines.js';
import type { SessionSummary } from '../sessionFormat/sessionSummaries.js';
import type { RequirementStatus } from '../sessionFormat/verification.js';
import type { Finding } from '../sessionFormat/reviewRecords.js';
import type { NeedsInput } from '../sessionFormat/needsInput.js';
import { isLoopRunning, loopRunnerPid } from '../sessions/loopLiveness.js';
import type { SessionStore } from '../sessions/sessionStore.js';

/**
 * A session as a model is told it, by every tool that reads one: the MCP server's
 * (`get_session`, `wait_session`, `interrupt_session`, `list_sessions`), the language
 * model tools (`codeloops_getSession`, `codeloops_listSessions`) and `@codeloops`'s
 * `/sessions`: whether its loop runs, what it was asked, each iteration's verdict,
 * checks, requirements and diff stat, and how it ended. Never an agent's output or a
 * diff (`review_session` gives an iteration's hunks): a session can hold megabytes of
 * them, and a model reads every byte it is given.
 */

/**
 * `running`: a runner holds its repository's lock for it; `ended`: it has its
 * session_end; `crashed`: neither, its runner died (as `codeloops resume` and the
 * README call such a session).
 */
export type LoopStatus = 'running' | 'ended' | 'crashed';

export interface ModelSession {
  session_id: string;
  status: LoopStatus;
  /** The session_end's outcome, or null while it runs (or after a crash). */
  outcome: string | null;
  prompt: string;
  working_dir: string;
  started_at: string;
  actor_agent: string;
  critic_agent: string;
  actor_model: string | null;
  critic_model: string | null;
  max_iterations: number | null;
  iterations: ModelIteration[];
  /** The session_end line as recorded (summary, confidence, cost, error and its code, verification), or null. */
  end: SessionEndLine | null;
}

export interface ModelIteration {
  iteration: number;
  decision: string;
  /** The critic's own decision when the gate overruled it. */
  critic_verdict: string | null;
  feedback: string | null;
  remaining_issues: string[];
  failed_checks: string[];
  unmet_requirements: RequirementStatus[];
  findings: Finding[];
  needs_input: NeedsInput | null;
  files_changed: number;
  insertions: number | null;
  deletions: number | null;
  timestamp: string;
}

function modelIteration(line: IterationLine): ModelIteration {
  return {
    iteration: line.iteration_number,
    decision: line.critic_decision,
    critic_verdict: line.critic_verdict ?? null,
    feedback: line.feedback,
    remaining_issues: line.remaining_issues ?? [],
    failed_checks: line.failed_checks ?? [],
    unmet_requirements: line.unmet_requirements ?? [],
    findings: line.findings ?? [],
    needs_input: line.needs_input ?? null,
    files_changed: line.git_files_changed,
    insertions: line.git_insertions ?? null,
    deletions: line.git_deletions ?? null,
    timestamp: line.timestamp,
  };
}

/** Reads the session without its outputs and diffs (the light mode): a session of megabytes costs a scan, not its size in memory. */
export async function readModelSession(store: SessionStore, sessionId: string): Promise<ModelSession> {
  let start: SessionStartLine | undefined;
  let end: SessionEndLine | null = null;
  const iterations: ModelIteration[] = [];
  for await (const part of store.read(sessionId, { leaveLongStrings: true })) {
    if (part.kind === 'start') start = part.line;
    else if (part.kind === 'iteration') iterations.push(modelIteration(part.line));
    else if (part.kind === 'end') end = part.line;
  }
  // `read` throws for a file without a readable start.
  const head = start!;
  return {
    session_id: sessionId,
    status: end ? 'ended' : loopRunnerPid(head) === undefined ? 'crashed' : 'running',
    outcome: end?.outcome ?? null,
    prompt: head.prompt,
    working_dir: head.working_dir,
    started_at: head.timestamp,
    actor_agent: head.actor_agent,
    critic_agent: head.critic_agent,
    actor_model: head.actor_model,
    critic_model: head.critic_model,
    max_iterations: head.max_iterations,
    iterations,
    end,
  };
}

/** A listed session as the tools give it: the summary `sessions list --json` prints, and whether its loop runs now. */
export type ModelListedSession = SessionSummary & { running: boolean };

export function listedSession(summary: SessionSummary): ModelListedSession {
  return { ...summary, running: summary.outcome === null && isLoopRunning({ working_dir: summary.working_dir, timestamp: summary.timestamp }) };
}

/** Recent sessions, newest first, at most `limit` of them, with how many matched. */
export async function listModelSessions(
  store: SessionStore,
  options: { project?: string; limit: number },
): Promise<{ sessions: ModelListedSession[]; total: number }> {
  const sessions = await store.list(options.project ? { project: options.project } : {});
  return { sessions: sessions.slice(0, options.limit).map(listedSession), total: sessions.length };
}

/** One line on where a loop is, for a progress notification and a model's context. */
export function describeProgress(view: ModelSession): string {
  const last = view.iterations[view.iterations.length - 1];
  const of = view.max_iterations ? ` of ${view.max_iterations}` : '';
  if (view.status === 'ended')
    return `Ended ${view.outcome ?? ''} after ${view.iterations.length} iteration(s)${view.end?.summary ? `: ${view.end.summary}` : ''}.`;
  if (view.status === 'crashed') return `Its runner stopped without ending the session, after ${view.iterations.length} iteration(s).`;
  if (!last) return `Running iteration 1${of}.`;
  return `Running iteration ${last.iteration + 1}${of}; iteration ${last.iteration}: ${last.decision}${last.feedback ? ` (${oneLine(last.feedback)})` : ''}.`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}
