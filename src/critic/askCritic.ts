import type { AgentEvent } from '../sessionFormat/agentEvents.js';
import type { AnswerAttempt } from '../sessionFormat/sessionFiles.js';
import type { AgentTurn } from '../agents/agentLimits.js';
import { runAgent, type AgentLaunch, type AgentRunOptions, type AgentRunResult } from '../agents/runAgent.js';
import { takeTail } from '../text/truncate.js';
import type { CriticEvidence } from '../sessionFormat/verification.js';
import { CriticEvidenceFold } from './criticEvidence.js';
import {
  explainUnreadableDecision,
  parseCriticDecision,
  type CriticDecision,
  type CriticFinding,
  type CriticRequirement,
  type ParsedDecision,
} from './criticDecision.js';
import { buildCriticPrompt, buildRepairPrompt, buildSpecificPrompt, type CriticPromptInput, type FreshRequest } from './criticPrompt.js';

/** Where the decision came from: a block or a marker of the first answer, the repair's answer, or the runner (none could be read, the critic failed, the actor asked the user and the critic did not run). */
export type DecisionSource = 'block' | 'marker' | 'repair' | 'unreadable' | 'critic_failed' | 'actor_asked';

/**
 * The critic's answer on one iteration: its decision (DONE, CONTINUE or ERROR, or the
 * runner's ERROR when it could not answer), its findings, and the review items it says
 * are resolved. "Verdict" is the whole answer; the decision is its DONE/CONTINUE/ERROR.
 */
export interface CriticVerdict {
  decision: CriticDecision;
  source: DecisionSource;
  /** Its findings on the code and the ids it resolved, as it gave them (none when it could not be read). */
  findings: CriticFinding[];
  resolved: string[];
  /** The task's requirements as it judged them (none when it could not be read). */
  requirements: CriticRequirement[];
  /** The critic's full answer(s), for the sidecar record. */
  answer: string;
  /** What it ran and read to judge, from its stream (the repair's too). */
  evidence: CriticEvidence;
  runs: AgentRunResult[];
  interrupted: boolean;
}

export interface AskCriticOptions {
  model: string | null;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent, attempt: AnswerAttempt) => void;
  onRepair?: (problem: string) => void;
  /** Each agent run as it ends (the first answer, and the repair if there is one). */
  onRunFinished?: (run: AgentRunResult) => void;
  rawStdoutPath?: (attempt: AnswerAttempt) => string | undefined;
  runEnv?: Readonly<Record<string, string>>;
  /** Told of the critic's process group while it runs. */
  groups?: AgentRunOptions['groups'];
  /**
   * Whether a CONTINUE names something concrete (an unmet requirement, a failing
   * check, a finding, a protected change). Given, a CONTINUE that names nothing is
   * asked once to be specific before it counts; absent, it counts as it is.
   */
  isConcrete?: (continued: ParsedDecision) => boolean;
  /** Told when the critic is asked to be specific. */
  onAskSpecific?: () => void;
  /**
   * Runs each of the critic's turns through the loop's wait for usage limits and API
   * trouble (`outlastLimits.ts`); absent: once.
   */
  outlastLimits?: (turn: AgentTurn, runTurn: (turn: AgentTurn) => Promise<AgentRunResult>) => Promise<AgentRunResult>;
}

/** How much of an unreadable answer is quoted back in the repair prompt. */
const REPAIR_QUOTE_CHARS = 3_000;

/**
 * Runs the critic and reads its decision. When nothing can be read, asks once more
 * with a short repair prompt (in the same agent session where the agent can resume
 * one) before recording ERROR.
 */
export async function askCritic(launch: AgentLaunch, input: CriticPromptInput, options: AskCriticOptions): Promise<CriticVerdict> {
  const evidence = new CriticEvidenceFold();
  const verdict = await askAndRead(launch, input, {
    ...options,
    onEvent: (event, attempt) => {
      evidence.add(event);
      options.onEvent?.(event, attempt);
    },
  });
  return { ...verdict, evidence: evidence.result() };
}

async function askAndRead(launch: AgentLaunch, input: CriticPromptInput, options: AskCriticOptions): Promise<Omit<CriticVerdict, 'evidence'>> {
  const runTurn = (turn: AgentTurn, attempt: AnswerAttempt) =>
    runAgent(
      launch,
      { role: 'critic', prompt: turn.prompt, model: options.model, resumeSessionId: turn.resumeSessionId },
      {
        signal: options.signal,
        onEvent: (event) => options.onEvent?.(event, attempt),
        rawStdoutPath: options.rawStdoutPath?.(attempt),
        runEnv: options.runEnv,
        groups: options.groups,
        costAlreadyCounted: turn.costAlreadyCounted,
      },
    );
  const run = (prompt: string, attempt: AnswerAttempt, resumeSessionId: string | null, costAlreadyCounted?: number) => {
    const turn: AgentTurn = { prompt, resumeSessionId, costAlreadyCounted };
    return options.outlastLimits ? options.outlastLimits(turn, (each) => runTurn(each, attempt)) : runTurn(turn, attempt);
  };

  const reviewPrompt = buildCriticPrompt(input);
  const first = await run(reviewPrompt, 'first', null);
  options.onRunFinished?.(first);
  const runs = [first];
  if (first.interrupted) return { ...noFindings(interruptedDecision()), source: 'critic_failed', answer: first.transcript, runs, interrupted: true };
  const firstRead = readDecision(first);
  if (firstRead && isPlainContinue(firstRead.decision) && options.isConcrete && !options.isConcrete(firstRead)) {
    return askToBeSpecific(launch, { prompt: reviewPrompt, result: first }, firstRead, run, options);
  }
  if (firstRead) return { ...firstRead, answer: first.transcript, runs, interrupted: false };

  const problem = first.succeeded ? explainUnreadableDecision(answerText(first)) : `the critic did not finish (${first.failureReason ?? 'unknown failure'})`;
  options.onRepair?.(problem);
  const quote = answerTail(first);
  const repair = await askAgain(launch, { prompt: reviewPrompt, result: first }, run, (fresh) => buildRepairPrompt(problem, fresh));
  runs.push(repair);
  options.onRunFinished?.(repair);
  const answer = `${first.transcript}\n\n--- repair ---\n\n${repair.transcript}`;
  if (repair.interrupted) return { ...noFindings(interruptedDecision()), source: 'critic_failed', answer, runs, interrupted: true };
  const repaired = readDecision(repair);
  if (repaired) return { ...repaired, source: 'repair', answer, runs, interrupted: false };

  const failed = !first.succeeded && !repair.succeeded;
  const reason = failed ? (repair.failureReason ?? first.failureReason ?? 'unknown failure') : explainUnreadableDecision(answerText(repair));
  return {
    ...noFindings({
      kind: 'ERROR',
      description: failed
        ? `The critic could not review this iteration: ${reason}.`
        : `The critic's answer could not be read as a decision (${reason}), even after asking again.`,
      recovery: quote
        ? `Check the work against the task yourself. The critic's last words were:\n${takeTail(quote, 1_500)}`
        : 'Check the work against the task yourself and continue.',
    }),
    source: failed ? 'critic_failed' : 'unreadable',
    answer,
    runs,
    interrupted: false,
  };
}

type CriticRun = (prompt: string, attempt: AnswerAttempt, resumeSessionId: string | null, costAlreadyCounted?: number) => Promise<AgentRunResult>;

/** The critic's first run on the iteration: the review it was given and how it answered. */
interface FirstRun {
  prompt: string;
  result: AgentRunResult;
}

/**
 * The one short request to be specific, after a CONTINUE that named nothing concrete
 * (in the same agent session where the agent can resume one, else with the whole
 * review again). Its answer counts when it can be read; otherwise the first one does.
 */
async function askToBeSpecific(
  launch: AgentLaunch,
  first: FirstRun,
  firstRead: ParsedDecision,
  run: CriticRun,
  options: AskCriticOptions,
): Promise<Omit<CriticVerdict, 'evidence'>> {
  options.onAskSpecific?.();
  const specific = await askAgain(launch, first, run, buildSpecificPrompt);
  options.onRunFinished?.(specific);
  const answer = `${first.result.transcript}\n\n--- asked to be specific ---\n\n${specific.transcript}`;
  const runs = [first.result, specific];
  if (specific.interrupted) return { ...noFindings(interruptedDecision()), source: 'critic_failed', answer, runs, interrupted: true };
  const read = readDecision(specific) ?? firstRead;
  return { ...read, answer, runs, interrupted: false };
}

/**
 * A second request after the first answer: in the critic's own agent session where
 * its agent can resume one (it remembers the review and its answer); otherwise in a
 * fresh run, which is given the whole review again and the end of that answer: asked
 * with nothing but its own words, it would judge a task and a diff it never saw.
 */
function askAgain(launch: AgentLaunch, first: FirstRun, run: CriticRun, prompt: (fresh: FreshRequest | null) => string): Promise<AgentRunResult> {
  const sessionId = launch.adapter.canResume ? first.result.agentSessionId : null;
  if (sessionId !== null) return run(prompt(null), 'repair', sessionId, first.result.usage?.costUsd);
  return run(prompt({ reviewPrompt: first.prompt, answerTail: answerTail(first.result) }), 'repair', null);
}

/** The end of an answer, as a follow-up quotes it; null when it said nothing. */
function answerTail(result: AgentRunResult): string | null {
  const text = answerText(result).trim();
  return text ? takeTail(text, REPAIR_QUOTE_CHARS) : null;
}

/**
 * The final message first, where the block belongs. Only a decision block is looked
 * for in the rest of the transcript: plain markers there could be anything the
 * critic printed on the way (a `grep "TASK COMPLETE"` in a tool call).
 */
function readDecision(result: AgentRunResult): ParsedDecision | null {
  if (result.finalText) {
    const parsed = parseCriticDecision(result.finalText);
    if (parsed) return parsed;
    return parseCriticDecision(result.transcript, { markers: false });
  }
  // Agents without a separate final message (plain commands): the transcript is the answer.
  return parseCriticDecision(result.transcript);
}

function answerText(result: AgentRunResult): string {
  return result.finalText ?? result.transcript;
}

function noFindings(decision: CriticDecision): Pick<CriticVerdict, 'decision' | 'findings' | 'resolved' | 'requirements'> {
  return { decision, findings: [], resolved: [], requirements: [] };
}

function interruptedDecision(): CriticDecision {
  return { kind: 'ERROR', description: 'interrupted', recovery: '' };
}

/** A CONTINUE the critic chose, not a question for the user (`blocked`), which names what it needs by itself. */
function isPlainContinue(decision: ParsedDecision['decision']): boolean {
  return decision.kind === 'CONTINUE' && decision.needsInput === undefined;
}
