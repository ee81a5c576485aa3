import type { StallSettings } from '../config/runSettings.js';
import { previewLine } from '../text/truncate.js';

/** What one iteration left behind, as far as progress goes. */
export interface IterationOutcome {
  iteration: number;
  filesChanged: number;
  /** The tree the iteration started from, and the tree it left (snapshot tree ids). */
  preTree: string;
  postTree: string;
  /**
   * The critic's own feedback: null for DONE, and for any text the runner wrote in its
   * place (a DONE refused by a failing check, a critic that could not answer).
   */
  criticFeedback: string | null;
  /** Failed checks' names and output, in a stable order. */
  failedChecks: { name: string; output: string }[];
}

export interface Stall {
  action: 'nudge' | 'stop';
  /** Since which iteration it has been going in circles. */
  since: number;
  /** What repeated, in a sentence a user understands. */
  reason: string;
}

/** Feedback this alike counts as "the same again" (Dice coefficient of word pairs). */
const SIMILAR_FEEDBACK = 0.85;

/**
 * Watches iterations for a loop that goes in circles, from what the loop records
 * anyway. Progress is an iteration that changes the files to a tree the loop never
 * had: such an iteration never counts towards a stall, whatever the critic or the
 * checks say (an actor adding one real line at a time is working). Without progress
 * (nothing changed, or the files went back to a tree already seen, A→B→A) the
 * iterations count in a row; the critic saying nearly the same again, or the checks
 * failing the same way again, counts from the last time it said or failed so, with no
 * progress since. At the limit the loop is nudged (the actor is told plainly) or
 * stopped, and after a nudge the next stall stops it.
 */
export class StallDetector {
  private readonly seenTrees = new Map<string, number>();
  private noProgress: number[] = [];
  private sameFeedback: number[] = [];
  private sameFailures: number[] = [];
  private previousFeedback: string | null = null;
  private previousFailures: string | null = null;
  private nudged = false;

  constructor(private readonly settings: StallSettings) {}

  observe(outcome: IterationOutcome): Stall | null {
    if (this.settings.unchangedIterations <= 0) return null;
    if (!this.seenTrees.has(outcome.preTree)) this.seenTrees.set(outcome.preTree, outcome.iteration - 1);
    const revisited = outcome.filesChanged > 0 ? this.seenTrees.get(outcome.postTree) : undefined;
    const progress = outcome.filesChanged > 0 && revisited === undefined;
    if (!this.seenTrees.has(outcome.postTree)) this.seenTrees.set(outcome.postTree, outcome.iteration);

    this.noProgress = progress ? [] : [...this.noProgress, outcome.iteration];
    /** The streak of something said again: from the iteration that first said it, while nothing progressed since. */
    const repeated = (streak: number[], again: boolean): number[] =>
      again && !progress ? [...(streak.length === 0 ? [outcome.iteration - 1] : streak), outcome.iteration] : [];
    const feedback = outcome.criticFeedback === null ? null : normalize(outcome.criticFeedback);
    this.sameFeedback = repeated(
      this.sameFeedback,
      feedback !== null && this.previousFeedback !== null && similarity(feedback, this.previousFeedback) >= SIMILAR_FEEDBACK,
    );
    this.previousFeedback = feedback;
    const failures = outcome.failedChecks.length === 0 ? null : outcome.failedChecks.map((check) => `${check.name}\n${normalize(check.output)}`).join('\n');
    this.sameFailures = repeated(this.sameFailures, failures !== null && failures === this.previousFailures);
    this.previousFailures = failures;

    const limit = this.settings.unchangedIterations;
    const stall = (streak: number[], reason: (first: number, last: number) => string): Stall | null => {
      if (streak.length < limit) return null;
      const since = streak[0]!;
      const action = this.settings.action === 'nudge' && !this.nudged ? 'nudge' : 'stop';
      if (action === 'nudge') {
        // One more chance: the streaks start again from here.
        this.nudged = true;
        this.noProgress = [];
        this.sameFeedback = [];
        this.sameFailures = [];
      }
      return { action, since, reason: reason(since, outcome.iteration) };
    };
    return (
      stall(this.noProgress, (first, last) =>
        revisited !== undefined
          ? `the actor brought the files back to how they were after iteration ${revisited}; iterations ${first}–${last} went back and forth or changed nothing`
          : `the actor changed nothing in iterations ${first}–${last}`,
      ) ??
      stall(
        this.sameFeedback,
        (first, last) =>
          `the critic gave nearly the same feedback in iterations ${first}–${last}, and the files made no progress since: "${previewLine(outcome.criticFeedback ?? '', 120)}"`,
      ) ??
      stall(
        this.sameFailures,
        (first, last) =>
          `the same checks failed the same way in iterations ${first}–${last}, and the files made no progress since: ${outcome.failedChecks.map((check) => check.name).join(', ')}`,
      )
    );
  }
}

/** Lower case, no numbers (durations, line numbers, timestamps change), single spaces. */
function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/\d+(\.\d+)?/g, '#')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Dice coefficient of the word pairs of two texts: 1 for the same words in the same order. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const pairs = (text: string): Map<string, number> => {
    const words = text.split(' ');
    const counts = new Map<string, number>();
    for (let index = 0; index < words.length - 1; index++) {
      const pair = `${words[index]} ${words[index + 1]}`;
      counts.set(pair, (counts.get(pair) ?? 0) + 1);
    }
    return counts;
  };
  const left = pairs(a);
  const right = pairs(b);
  const size = (counts: Map<string, number>) => [...counts.values()].reduce((sum, count) => sum + count, 0);
  const total = size(left) + size(right);
  if (total === 0) return 0;
  let shared = 0;
  for (const [pair, count] of left) shared += Math.min(count, right.get(pair) ?? 0);
  return (2 * shared) / total;
}
