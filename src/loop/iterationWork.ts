import type { AgentRunResult } from '../agents/runAgent.js';
import type { CheckResult } from '../checks/runCheck.js';
import type { CriticVerdict } from '../critic/askCritic.js';
import type { CriticDecision } from '../critic/criticDecision.js';
import type { AppearedRepository } from '../critic/criticPrompt.js';
import type { SnapshotResult } from '../git/snapshots.js';
import type { DiffSummary, TreeEntryChange } from '../git/treeDiff.js';
import type { ReviewItems } from '../sessionFormat/reviewRecords.js';
import type { IterationPhase, RunEventInput } from '../sessionFormat/runEvents.js';
import type { DoneJudgement, Protection } from './doneVerification.js';
import type { Stall } from './stallDetector.js';

/** What an iteration of the loop produces, phase by phase, as its parts hand it on. */

/** How the loop's parts report: each run event goes through the run's one `emit` (sidecar, review ledger, listener). */
export type EmitEvent = (input: RunEventInput) => void;

/** What one iteration ended with: its decision, and a stall if it showed one. */
export interface IterationEnd {
  decision: CriticDecision;
  stall: Stall | null;
}

/** What the actor is told in one iteration: its prompt and the review items in it. */
export interface ActorBrief {
  prompt: string;
  told: ReviewItems;
  toldIds: string[];
}

/** What the actor changed in one iteration, as the critic is shown it. */
export interface IterationChange {
  diff: DiffSummary;
  /** Paths changed since the task began. */
  sinceStart: string[];
  /** The same, as git's path changes from the task's first tree. */
  sinceStartChanges: TreeEntryChange[];
  nestedRepositories: AppearedRepository[];
}

/** Everything an iteration produced, from its snapshots to the critic's verdict. */
export interface IterationWork {
  pre: SnapshotResult;
  post: SnapshotResult;
  actor: AgentRunResult;
  change: IterationChange;
  checks: CheckResult[];
  protection: Protection;
  /** The start's tests on the iteration's tree, at a DONE the checks let through; null: not run (no DONE, no baseline, not verified). */
  oracle: DoneJudgement | null;
  verdict: CriticVerdict;
  /** Files the critic changed, put back to the actor's version. */
  reverted: string[];
}

/** One phase of an iteration between its `phase` events; the finished one says how long it took (`durationOf`: the agent's own count). */
export async function inPhase<T>(
  emit: EmitEvent,
  iteration: number,
  phase: IterationPhase,
  work: () => Promise<T>,
  durationOf?: (result: T) => number,
): Promise<T> {
  emit({ type: 'phase', iteration, phase, status: 'started' });
  const started = performance.now();
  const result = await work();
  emit({ type: 'phase', iteration, phase, status: 'finished', duration_secs: durationOf?.(result) ?? (performance.now() - started) / 1000 });
  return result;
}
