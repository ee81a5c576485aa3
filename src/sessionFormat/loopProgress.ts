import type { NeedsInput } from './needsInput.js';
import type { RunEvent, RunEventOf } from './runEvents.js';
import type { Outcome } from './sessionLines.js';

/**
 * Where a running loop is, as its run events tell it: the one fold every view of a
 * running loop uses (the editor's runs and candidates, the viewer, the browser's
 * session list, the candidates' comparison). Page-safe: plain data, no Node.
 */

/**
 * What a loop is doing: before its first iteration (`starting`, a candidate still
 * `waiting` for its turn), an iteration's steps (`snapshot`, then the run events'
 * phases), paused for the user's review or for their answer to a question, told to go
 * on or to stop, or ended.
 */
export type LoopStage =
  'waiting' | 'starting' | 'snapshot' | 'actor' | 'diff' | 'checks' | 'critic' | 'critic_repair' | 'review' | 'answer' | 'continuing' | 'stopping' | 'ended';

export interface LoopProgress {
  /** The iteration under way (or the last one), null before the first. */
  readonly iteration: number | null;
  readonly stage: LoopStage;
  /** When the stage began (the event's timestamp), null when no event said. */
  readonly stageSince: string | null;
  /** The iteration after which the loop waits for the user's review (or their answer), while it does. */
  readonly pausedAfter: number | null;
  /** The question the loop waits to have answered (`needs_input`), while it does. */
  readonly question: NeedsInput | null;
  /** What the loop waits out before running the agent again (`agent_waiting`: a usage limit, an API down), while it does. */
  readonly waiting: Pick<RunEventOf<'agent_waiting'>, 'agent' | 'reason' | 'until'> | null;
  /** How the run ended, once it has. */
  readonly outcome: Outcome | null;
}

export const LOOP_STARTING: LoopProgress = {
  iteration: null,
  stage: 'starting',
  stageSince: null,
  pausedAfter: null,
  question: null,
  waiting: null,
  outcome: null,
};
/** A candidate whose loop has not started yet: it waits for a free job. */
export const LOOP_WAITING: LoopProgress = { ...LOOP_STARTING, stage: 'waiting' };

/**
 * The progress after one more event; the same object when the event says nothing
 * about where the loop is. A loop told to stop stays `stopping` until it has ended.
 */
export function advanceLoop(progress: LoopProgress, event: RunEvent): LoopProgress {
  const at = event.timestamp;
  switch (event.type) {
    case 'run_started':
    case 'worktree_prepared':
      return progress.stage === 'waiting' ? { ...progress, stage: 'starting', stageSince: at } : progress;
    case 'iteration_started':
      return { ...progress, iteration: event.iteration, stage: progress.stage === 'stopping' ? 'stopping' : 'snapshot', stageSince: at };
    case 'phase':
      if (event.status !== 'started' || progress.stage === 'stopping') return progress;
      return { ...progress, iteration: event.iteration, stage: event.phase, stageSince: at, waiting: null };
    case 'agent_waiting':
      return { ...progress, iteration: event.iteration, stageSince: at, waiting: { agent: event.agent, reason: event.reason, until: event.until } };
    case 'agent_event':
    case 'agent_finished':
      // The agent runs again: the wait is over.
      return progress.waiting === null ? progress : { ...progress, waiting: null };
    case 'review_paused':
      return {
        ...progress,
        iteration: event.iteration,
        stage: event.needs_input ? 'answer' : 'review',
        stageSince: at,
        pausedAfter: event.iteration,
        question: event.needs_input ?? null,
      };
    case 'review_resumed':
      return { ...progress, stage: event.action === 'continue' ? 'continuing' : 'stopping', stageSince: at, pausedAfter: null, question: null, waiting: null };
    case 'run_finished':
      return { ...progress, stage: 'ended', stageSince: at, pausedAfter: null, question: null, waiting: null, outcome: event.status };
    default:
      return progress;
  }
}

/** Progress folded from a run's events, oldest first. */
export function loopProgressOf(events: Iterable<RunEvent>, from: LoopProgress = LOOP_STARTING): LoopProgress {
  let progress = from;
  for (const event of events) progress = advanceLoop(progress, event);
  return progress;
}

/**
 * A loop that ended as its group recorded it (`candidate_finished`), whether or not its
 * own `run_finished` came first: a candidate whose runner stopped has none.
 */
export function loopEnded(progress: LoopProgress, outcome: Outcome, at: string): LoopProgress {
  return progress.stage === 'ended' ? progress : { ...progress, stage: 'ended', stageSince: at, pausedAfter: null, question: null, waiting: null, outcome };
}

/** The user asked the loop to go on, or to stop, before its runner said so: shown at once. */
export function loopToldTo(progress: LoopProgress, action: 'continue' | 'stop'): LoopProgress {
  return progress.stage === 'ended'
    ? progress
    : { ...progress, stage: action === 'continue' ? 'continuing' : 'stopping', pausedAfter: null, question: null, waiting: null };
}

const STAGE_WORDS: Readonly<Record<LoopStage, string>> = {
  waiting: 'waiting',
  starting: 'starting',
  snapshot: 'snapshot',
  actor: 'actor',
  diff: 'diff',
  checks: 'checks',
  critic: 'critic',
  critic_repair: 'critic, asked again',
  review: 'waiting for your review',
  answer: 'waiting for your answer',
  continuing: 'going on',
  stopping: 'stopping',
  ended: 'ended',
};

/** The stage in words: `critic, asked again`, `waiting for your review`. */
export function stageText(stage: LoopStage): string {
  return STAGE_WORDS[stage];
}

/** `iteration 2 · critic`, or the stage alone before the first iteration. */
export function loopProgressText(progress: LoopProgress, separator = ' · '): string {
  const stage = progress.stage === 'ended' && progress.outcome ? progress.outcome : stageText(progress.stage);
  return progress.iteration === null ? stage : `iteration ${progress.iteration}${separator}${stage}`;
}
