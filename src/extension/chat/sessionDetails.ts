import type { SessionSummary } from '../../sessionFormat/sessionSummaries.js';
import type { IterationLine, SessionEndLine, SessionStartLine } from '../../sessionFormat/sessionLines.js';
import { isLoopRunning } from '../../sessions/loopLiveness.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import { previewLine } from '../../text/truncate.js';

/**
 * A session as the chat and the language model tools tell it: where it stands, and
 * each iteration's verdict, failing checks, unmet requirements and diff stat. Read
 * with the long values left in the file: an agent's output can be megabytes.
 */
export interface SessionDetails {
  session_id: string;
  /** `running` while a runner has it; its outcome once ended; `unfinished` when it stopped without one (crashed). */
  status: string;
  prompt: string;
  working_dir: string;
  actor_agent: string;
  critic_agent: string;
  max_iterations: number | null;
  iterations: IterationDetails[];
  /** The `session_end` line's summary and figures, once it has ended. */
  end: {
    outcome: string;
    summary: string | null;
    verification: string | null;
    stop_reason: string | null;
    error: string | null;
    total_cost_usd: number | null;
    duration_secs: number;
  } | null;
}

export interface IterationDetails {
  iteration: number;
  decision: string;
  /** The critic's feedback, in at most a few hundred characters. */
  feedback: string | null;
  files_changed: number;
  insertions: number | null;
  deletions: number | null;
  failed_checks: string[];
  unmet_requirements: { id: string; text: string; met: boolean | null }[];
  findings: number;
}

/** How much of an iteration's feedback a listing carries. */
const FEEDBACK_CHARS = 600;

export async function readSessionDetails(store: SessionStore, sessionId: string): Promise<SessionDetails> {
  let start: SessionStartLine | undefined;
  let end: SessionEndLine | undefined;
  const iterations: IterationDetails[] = [];
  for await (const part of store.read(sessionId, { leaveLongStrings: true })) {
    if (part.kind === 'start') start = part.line;
    else if (part.kind === 'end') end = part.line;
    else if (part.kind === 'iteration') iterations.push(iterationDetails(part.line));
  }
  // A session without an end runs, if a runner holds its repository's lock for it; else it was left unfinished.
  const status = end?.outcome ?? (isLoopRunning(start!) ? 'running' : 'unfinished');
  return {
    session_id: sessionId,
    status,
    prompt: start!.prompt,
    working_dir: start!.working_dir,
    actor_agent: start!.actor_agent,
    critic_agent: start!.critic_agent,
    max_iterations: start!.max_iterations,
    iterations,
    end: end
      ? {
          outcome: end.outcome,
          summary: end.summary,
          verification: end.verification ?? null,
          stop_reason: end.stop_reason ?? null,
          error: end.error ?? null,
          total_cost_usd: end.total_cost_usd ?? null,
          duration_secs: end.duration_secs,
        }
      : null,
  };
}

function iterationDetails(line: IterationLine): IterationDetails {
  return {
    iteration: line.iteration_number,
    decision: line.critic_decision,
    feedback: line.feedback === null ? null : previewLine(line.feedback, FEEDBACK_CHARS),
    files_changed: line.git_files_changed,
    insertions: line.git_insertions ?? null,
    deletions: line.git_deletions ?? null,
    failed_checks: line.failed_checks ?? [],
    unmet_requirements: (line.unmet_requirements ?? []).map(({ id, text, met }) => ({ id, text, met })),
    findings: line.findings?.length ?? 0,
  };
}

/** A listed session as the tools give it: the summary `sessions list --json` prints, and whether it runs now. */
export function listedSession(summary: SessionSummary): SessionSummary & { running: boolean } {
  return { ...summary, running: summary.outcome === null && isLoopRunning({ working_dir: summary.working_dir, timestamp: summary.timestamp }) };
}
