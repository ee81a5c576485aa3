import type { RunEvent, RunEventType } from '../sessionFormat/runEvents.js';

/** Run events a viewer shows live as they happen; the rest reach it as a fresh session when the file changes. */
export const LIVE_EVENT_TYPES: ReadonlySet<RunEventType> = new Set([
  'iteration_started',
  'phase',
  'agent_event',
  'diff_captured',
  'critic_decision',
  'review_paused',
  'review_resumed',
]);

/** How many of the iteration's live events are kept; the first (`iteration_started`) always stays. */
const MAX_KEPT = 200;

/**
 * The live events of the iteration under way, for a viewer that opens (or reloads)
 * in the middle of it: it gets these first, then the rest as they happen. One policy
 * for both hosts: the editor's viewer panel and the browser's live stream.
 */
export class LiveReplay {
  private kept: RunEvent[] = [];

  /** Takes every event of the run; keeps those a viewer replays. */
  add(event: RunEvent): void {
    if (event.type === 'iteration_started') this.kept = [];
    if (event.type === 'run_finished') this.kept = [];
    if (!LIVE_EVENT_TYPES.has(event.type)) return;
    this.kept.push(event);
    if (this.kept.length > MAX_KEPT) this.kept.splice(1, this.kept.length - MAX_KEPT);
  }

  events(): readonly RunEvent[] {
    return this.kept;
  }

  clear(): void {
    this.kept = [];
  }
}
