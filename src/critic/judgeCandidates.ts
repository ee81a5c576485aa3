import { runAgent, type AgentLaunch, type AgentRunResult } from '../agents/runAgent.js';
import type { AnswerAttempt } from '../sessionFormat/sessionFiles.js';
import * as z from '../sessionFormat/zod.js';
import { fence } from '../text/fence.js';
import { takeTail, truncateMiddle } from '../text/truncate.js';
import { lastDecisionJson } from './criticDecision.js';

/**
 * The judge of a candidate group: the critic agent, given the task and every
 * finished candidate's whole change side by side, ranks them in a `<decision>`
 * block, as the critic decides an iteration. Candidates are shown by letter only, so
 * that the judge weighs the work, not the vendor that made it.
 */

export interface JudgedCandidate {
  /** How the candidate is named outside the prompt (its label). */
  label: string;
  /** What the judge is told of how its loop went: outcome, iterations, checks. */
  facts: string;
  /** The critic's summary when it said DONE. */
  summary: string | null;
  diff: string;
  /** Its finished tree on disk, to read files the diff does not show. */
  tree: string | null;
}

export interface JudgeInput {
  task: string;
  candidates: readonly JudgedCandidate[];
}

export interface JudgeResult {
  /** Labels, best first; empty when no ranking could be read. */
  ranking: string[];
  reasoning: string;
  source: 'block' | 'repair' | 'unreadable' | 'judge_failed';
  answer: string;
  runs: AgentRunResult[];
  interrupted: boolean;
}

/** How much of all the diffs together the judge sees: shared out between the candidates. */
const DIFFS_BUDGET_CHARS = 120_000;
const TASK_CHARS = 16_000;
const ANSWER_KEEP_CHARS = 24_000;

const rankingSchema = z.looseObject({
  type: z.literal('ranking'),
  ranking: z.array(z.string().check(z.trim())),
  reasoning: z._default(z.string(), ''),
});

export const JUDGE_CONTRACT = `Finish your answer with exactly one decision block, as the very last thing you write:

<decision>{"type":"ranking","ranking":["<best letter>","<next>","…"],"reasoning":"<why the first is best, and how the others compare>"}</decision>

Rank every candidate listed, best first, by its letter. The JSON must be valid: double quotes, no trailing commas, no comments.`;

export function letterOf(position: number): string {
  return position < 26 ? String.fromCharCode(65 + position) : `Z${position - 25}`;
}

export function buildJudgePrompt(input: JudgeInput): string {
  const perDiff = Math.max(4_000, Math.floor(DIFFS_BUDGET_CHARS / Math.max(1, input.candidates.length)));
  const sections = input.candidates.map((candidate, position) =>
    [
      `## Candidate ${letterOf(position)}`,
      candidate.facts,
      candidate.summary ? `Its critic's summary: ${truncateMiddle(candidate.summary, 2_000)}` : '',
      candidate.tree ? `Its finished tree: ${candidate.tree}` : '',
      candidate.diff.trim() ? fence(truncateMiddle(candidate.diff, perDiff), 'diff') : 'It changed no files.',
    ]
      .filter(Boolean)
      .join('\n\n'),
  );
  return `You are the judge of several attempts at the same coding task. Each candidate worked on its own copy of the repository, from the same starting tree, with a critic reviewing it until it was satisfied or a limit was hit. Their whole changes are below, side by side. The letters hide which agent made which: judge the work alone.

Rank the candidates from best to worst: which change does the task completely and correctly, with the least risk and the least noise? You may read their finished trees on disk, and run their tests there if that helps. Do not modify, create or delete any file.

## Task
${truncateMiddle(input.task, TASK_CHARS)}

${sections.join('\n\n')}

## Your answer
${JUDGE_CONTRACT}
`;
}

/** The ranking from an answer, as labels; null when it cannot be read or names letters that are not there. */
export function parseRanking(answer: string, labels: readonly string[]): { ranking: string[]; reasoning: string } | null {
  const parsed = rankingSchema.safeParse(normalizeType(lastDecisionJson(answer)));
  if (!parsed.success) return null;
  const letters = labels.map((_, position) => letterOf(position));
  const ranking: string[] = [];
  for (const letter of parsed.data.ranking.map((entry) => entry.replace(/^candidate\s+/i, '').toUpperCase())) {
    const position = letters.indexOf(letter);
    if (position < 0) return null;
    if (!ranking.includes(labels[position]!)) ranking.push(labels[position]!);
  }
  if (ranking.length === 0) return null;
  // A judge that left some out ranks them after the ones it named, in their order.
  for (const label of labels) if (!ranking.includes(label)) ranking.push(label);
  return { ranking, reasoning: parsed.data.reasoning.trim() };
}

function normalizeType(json: unknown): unknown {
  if (json && typeof json === 'object' && 'type' in json && typeof (json as { type: unknown }).type === 'string') {
    return { ...json, type: (json as { type: string }).type.trim().toLowerCase() };
  }
  return json;
}

export interface JudgeOptions {
  model: string | null;
  signal?: AbortSignal;
  rawStdoutPath?: (attempt: AnswerAttempt) => string | undefined;
}

/** Runs the judge; when its ranking cannot be read, asks once more for the block alone. */
export async function judgeCandidates(launch: AgentLaunch, input: JudgeInput, options: JudgeOptions): Promise<JudgeResult> {
  const labels = input.candidates.map((candidate) => candidate.label);
  const run = (prompt: string, attempt: AnswerAttempt) =>
    runAgent(
      launch,
      { role: 'critic', prompt, model: options.model, resumeSessionId: null },
      { signal: options.signal, rawStdoutPath: options.rawStdoutPath?.(attempt) },
    );
  const first = await run(buildJudgePrompt(input), 'first');
  const runs = [first];
  const answerOf = (result: AgentRunResult) => result.finalText ?? result.transcript;
  if (first.interrupted) return { ranking: [], reasoning: '', source: 'judge_failed', answer: keep(first.transcript), runs, interrupted: true };
  const read = parseRanking(answerOf(first), labels) ?? parseRanking(first.transcript, labels);
  if (read) return { ...read, source: 'block', answer: keep(first.transcript), runs, interrupted: false };

  const problem = first.succeeded
    ? 'your answer did not end with a readable ranking block'
    : `you did not finish (${first.failureReason ?? 'unknown failure'})`;
  const quoted = answerOf(first).trim() ? `\n\nThe end of your previous answer was:\n${fence(takeTail(answerOf(first).trim(), 3_000))}` : '';
  const repair = await run(
    `Your ranking could not be recorded: ${problem}. The candidates were ${labels.map((_, position) => letterOf(position)).join(', ')}.${quoted}\n\nReply with nothing but the decision block.\n\n${JUDGE_CONTRACT}\n`,
    'repair',
  );
  runs.push(repair);
  const answer = keep(`${first.transcript}\n\n--- repair ---\n\n${repair.transcript}`);
  if (repair.interrupted) return { ranking: [], reasoning: '', source: 'judge_failed', answer, runs, interrupted: true };
  const repaired = parseRanking(answerOf(repair), labels) ?? parseRanking(repair.transcript, labels);
  if (repaired) return { ...repaired, source: 'repair', answer, runs, interrupted: false };
  const failed = !first.succeeded && !repair.succeeded;
  return {
    ranking: [],
    reasoning: failed
      ? `The judge could not run: ${repair.failureReason ?? first.failureReason ?? 'unknown failure'}.`
      : 'The judge’s answer could not be read as a ranking, even after asking again.',
    source: failed ? 'judge_failed' : 'unreadable',
    answer,
    runs,
    interrupted: false,
  };
}

function keep(text: string): string {
  return truncateMiddle(text, ANSWER_KEEP_CHARS);
}
