import fs from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { hasOpenUserFeedback } from '../sessionFormat/reviewRecords.js';
import { EVENTS_FILE, REVIEW_FILE } from '../sessionFormat/sessionFiles.js';
import type { IterationLine, SessionEndLine, SessionStartLine } from '../sessionFormat/sessionLines.js';
import { readReview } from '../sessions/reviewState.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';
import type { LineRange, OpenedIteration, SessionPart } from '../sessions/sessionReading.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { IterationDetail, IterationView, SessionView } from './sessionView.js';
import { assembleSessionView, buildIterationView, iterationDetailOf } from './sessionViewBuilder.js';

interface Loaded {
  /** Size and modification time of the session file and its record when loaded. */
  stamp: string;
  view: SessionView;
  /** Where each iteration's line is in the file, to read its outputs again alone. */
  ranges: Map<number, LineRange>;
  /** About what the view costs in memory. */
  bytes: number;
}

/**
 * What the cache may hold at most, about. Views hold no agent output and no diffs,
 * so this is hundreds of big sessions; a server asked for many cannot be run out of
 * memory by them.
 */
export const MAX_CACHED_VIEW_BYTES = 32 * 1024 * 1024;

/** Joins a text read in pieces. */
async function join(pieces: AsyncIterable<string>): Promise<string> {
  const parts: string[] = [];
  for await (const piece of pieces) parts.push(piece);
  return parts.join('');
}

/**
 * An iteration's view from its part. Outputs left in the file are only measured; a
 * diff left there is read only when the record did not capture its files.
 */
async function iterationView(part: Extract<SessionPart, { kind: 'iteration' }>, events: readonly RunEvent[]): Promise<IterationView> {
  const { long } = part;
  if (!long) return buildIterationView(part.line, events);
  const line: Record<string, unknown> = { ...part.line };
  const captured = events.some((event) => event.type === 'diff_captured' && event.iteration === part.line.iteration_number);
  for (const key of long.chars.keys()) {
    // What the view shows is read (a long feedback, say); the outputs and a diff whose files the record has are only measured.
    if (key === 'actor_output' || key === 'actor_stderr' || (key === 'git_diff' && captured)) continue;
    line[key] = await join(long.text(key));
  }
  const view = buildIterationView(line as IterationLine, events);
  return { ...view, actor_output_chars: long.chars.get('actor_output') ?? view.actor_output_chars, diff_chars: long.chars.get('git_diff') ?? view.diff_chars };
}

/** Sidecar events the view is built from; the rest (agent events, tool calls) are read only for what asks for them. */
const VIEW_EVENTS = new Set<RunEvent['type']>([
  'run_started',
  'diff_captured',
  'critic_decision',
  'agent_finished',
  'phase',
  'check_finished',
  'done_refused',
  'protected_change',
  // Each iteration's checklist as the critic judged it.
  'requirements',
  // The start's tests: once on the start tree, then on each DONE's final code.
  'test_baseline',
  'test_oracle',
  'rollback',
  'rollback_undone',
  'stall',
  'agent_waiting',
  'needs_input_answered',
  // What the review's state is folded from (with the critic's findings in `critic_decision`).
  'review_delivered',
  'review_claimed',
]);

/**
 * Sessions' views, kept while their files do not change: the tree, the viewer and the
 * API ask for the same session many times while a loop runs, and a big session should
 * be read once per change, not once per question. A view is built as the file streams
 * by, one line at a time, and keeps no agent output or diff: a session of hundreds of
 * megabytes costs its largest line while it is read, and its view afterwards. An
 * iteration's outputs are read again, alone, when asked for.
 */
export class SessionLibrary {
  private readonly cache = new Map<string, Loaded>();
  private cachedBytes = 0;

  constructor(
    readonly store: SessionStore,
    private readonly sidecarDirOf: (sessionId: string) => string,
  ) {}

  async view(sessionId: string): Promise<SessionView> {
    return (await this.load(sessionId)).view;
  }

  /** One iteration's outputs, diff and the critic's whole answer, as strings (the editor's viewer). */
  async detail(sessionId: string, iteration: number): Promise<IterationDetail | undefined> {
    const opened = await this.openIteration(sessionId, iteration);
    if (!opened) return undefined;
    try {
      const { line, long } = opened;
      const text = async (key: 'actor_output' | 'actor_stderr' | 'git_diff'): Promise<string> => (long?.chars.has(key) ? join(long.text(key)) : line[key]);
      const whole = { ...line, actor_output: await text('actor_output'), actor_stderr: await text('actor_stderr'), git_diff: await text('git_diff') };
      return iterationDetailOf(whole, await this.criticDecision(sessionId, iteration));
    } finally {
      await opened.close();
    }
  }

  /**
   * The same as JSON text, in pieces: an output of megabytes goes from the session
   * file to whoever asked a slice at a time, never whole in memory (the web server).
   * Undefined when the session has no such iteration.
   */
  async detailJson(sessionId: string, iteration: number): Promise<AsyncIterable<string | Buffer> | undefined> {
    const opened = await this.openIteration(sessionId, iteration);
    if (!opened) return undefined;
    const decisions = await this.criticDecision(sessionId, iteration).catch(async (error: unknown) => {
      await opened.close();
      throw error;
    });
    return (async function* () {
      try {
        const { line, long } = opened;
        const field = (key: 'actor_output' | 'actor_stderr' | 'git_diff'): AsyncIterable<string | Buffer> | Iterable<string> =>
          long?.chars.has(key) ? long.json(key) : [JSON.stringify(line[key])];
        // The fields of IterationDetail, in its order; the long ones straight from the file.
        const { critic_output } = iterationDetailOf({ ...line, actor_output: '', actor_stderr: '', git_diff: '' }, decisions);
        yield `{"number":${iteration},"actor_output":`;
        yield* field('actor_output');
        yield ',"actor_stderr":';
        yield* field('actor_stderr');
        yield ',"diff":';
        yield* field('git_diff');
        yield `,"critic_output":${JSON.stringify(critic_output)}}`;
      } finally {
        await opened.close();
      }
    })();
  }

  /** An iteration's line read alone from where the view found it; the view is read again if the file changed since. */
  private async openIteration(sessionId: string, iteration: number): Promise<OpenedIteration | undefined> {
    let loaded = await this.load(sessionId);
    if (!loaded.ranges.has(iteration)) return undefined;
    const opened = await this.store.openIterationAt(sessionId, loaded.ranges.get(iteration)!, iteration);
    if (opened) return opened;
    // The file was rewritten between the two readings: read it again.
    this.invalidate(sessionId);
    loaded = await this.load(sessionId);
    const range = loaded.ranges.get(iteration);
    return range && this.store.openIterationAt(sessionId, range, iteration);
  }

  /** The critic's decisions on this iteration from the record: the critic's whole answer is there, and nowhere else. */
  private criticDecision(sessionId: string, iteration: number): Promise<RunEvent[]> {
    return readSidecarEvents(
      this.sidecarDirOf(sessionId),
      () => {},
      (event) => (event.type === 'critic_decision' && event.iteration === iteration ? event : undefined),
    );
  }

  /**
   * Whether the user has commented on the session or rejected part of it since the
   * loop last ran: a finished session is then open again (resume carries it on).
   * Cheap for the many sessions nobody reviewed: they have no review record.
   */
  async hasOpenFeedback(sessionId: string): Promise<boolean> {
    const directory = this.sidecarDirOf(sessionId);
    if (!fs.existsSync(path.join(directory, REVIEW_FILE))) return false;
    return hasOpenUserFeedback(await readReview([directory]));
  }

  invalidate(sessionId: string): void {
    const cached = this.cache.get(sessionId);
    if (!cached) return;
    this.cache.delete(sessionId);
    this.cachedBytes -= cached.bytes;
  }

  private stampOf(sessionId: string): string {
    const sidecar = this.sidecarDirOf(sessionId);
    const parts = [this.store.filePathOf(sessionId), path.join(sidecar, EVENTS_FILE), path.join(sidecar, REVIEW_FILE)].map((file) => {
      const stat = fs.statSync(file, { throwIfNoEntry: false });
      return stat ? `${stat.size}:${stat.mtimeMs}` : '-';
    });
    return parts.join('|');
  }

  private async load(sessionId: string): Promise<Loaded> {
    const stamp = this.stampOf(sessionId);
    const cached = this.cache.get(sessionId);
    if (cached && cached.stamp === stamp) {
      // Most recently used last, so the oldest is dropped first.
      this.cache.delete(sessionId);
      this.cache.set(sessionId, cached);
      return cached;
    }
    this.invalidate(sessionId);
    const loaded = await this.build(sessionId, stamp);
    if (loaded.bytes <= MAX_CACHED_VIEW_BYTES) {
      this.cache.set(sessionId, loaded);
      this.cachedBytes += loaded.bytes;
      for (const [oldest, entry] of this.cache) {
        if (this.cachedBytes <= MAX_CACHED_VIEW_BYTES) break;
        this.cache.delete(oldest);
        this.cachedBytes -= entry.bytes;
      }
    }
    return loaded;
  }

  private async build(sessionId: string, stamp: string): Promise<Loaded> {
    const warnings: string[] = [];
    const sidecarWarnings: string[] = [];
    const events = await readSidecarEvents(
      this.sidecarDirOf(sessionId),
      (message) => sidecarWarnings.push(message),
      // The critic's whole answer stays in the record until an iteration's detail asks for it.
      (event) => (!VIEW_EVENTS.has(event.type) ? undefined : event.type === 'critic_decision' ? { ...event, critic_output: '' } : event),
    );
    let start: SessionStartLine | undefined;
    let end: SessionEndLine | null = null;
    const iterations: IterationView[] = [];
    const ranges = new Map<number, LineRange>();
    for await (const part of this.store.read(sessionId, { leaveLongStrings: true })) {
      if (part.kind === 'start') start = part.line;
      else if (part.kind === 'iteration') {
        iterations.push(await iterationView(part, events));
        // The first line of a number is the one shown, as everywhere else.
        if (!ranges.has(part.line.iteration_number)) ranges.set(part.line.iteration_number, part.range);
      } else if (part.kind === 'end') end = part.line;
      else warnings.push(part.message);
    }
    const review = await readReviewRecords(this.sidecarDirOf(sessionId), (message) => sidecarWarnings.push(message));
    const view = assembleSessionView({ id: sessionId, start: start!, end, warnings: [...warnings, ...sidecarWarnings] }, iterations, events, review);
    // UTF-16 text, and as much again for the objects around it: an estimate, not a measure.
    return { stamp, view, ranges, bytes: JSON.stringify(view).length * 4 + ranges.size * 64 };
  }
}
