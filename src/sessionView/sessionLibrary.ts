import fs from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { EVENTS_FILE } from '../sessionFormat/sessionFiles.js';
import type { SessionEndLine, SessionStartLine } from '../sessionFormat/sessionLines.js';
import { readSidecarEvents } from '../sessions/sidecarReader.js';
import type { LineRange, SessionStore } from '../sessions/sessionStore.js';
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
const MAX_CACHED_BYTES = 32 * 1024 * 1024;

/** Sidecar events the view is built from; the rest (agent events, tool calls) are read only for what asks for them. */
const VIEW_EVENTS = new Set<RunEvent['type']>([
  'run_started',
  'diff_captured',
  'critic_decision',
  'agent_finished',
  'phase',
  'check_finished',
  'rollback',
  'rollback_undone',
  'stall',
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

  async detail(sessionId: string, iteration: number): Promise<IterationDetail | undefined> {
    let loaded = await this.load(sessionId);
    if (!loaded.ranges.has(iteration)) return undefined;
    let line = await this.store.readIterationAt(sessionId, loaded.ranges.get(iteration)!, iteration);
    if (!line) {
      // The file was rewritten between the two readings: read it again.
      this.invalidate(sessionId);
      loaded = await this.load(sessionId);
      const range = loaded.ranges.get(iteration);
      line = range && (await this.store.readIterationAt(sessionId, range, iteration));
      if (!line) return undefined;
    }
    // The critic's whole answer is in the record; only this iteration's decision is kept.
    const decisions = await readSidecarEvents(
      this.sidecarDirOf(sessionId),
      () => {},
      (event) => (event.type === 'critic_decision' && event.iteration === iteration ? event : undefined),
    );
    return iterationDetailOf(line, decisions);
  }

  invalidate(sessionId: string): void {
    const cached = this.cache.get(sessionId);
    if (!cached) return;
    this.cache.delete(sessionId);
    this.cachedBytes -= cached.bytes;
  }

  private stampOf(sessionId: string): string {
    const parts = [this.store.filePathOf(sessionId), path.join(this.sidecarDirOf(sessionId), EVENTS_FILE)].map((file) => {
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
    if (loaded.bytes <= MAX_CACHED_BYTES) {
      this.cache.set(sessionId, loaded);
      this.cachedBytes += loaded.bytes;
      for (const [oldest, entry] of this.cache) {
        if (this.cachedBytes <= MAX_CACHED_BYTES) break;
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
    for await (const part of this.store.read(sessionId)) {
      if (part.kind === 'start') start = part.line;
      else if (part.kind === 'iteration') {
        iterations.push(buildIterationView(part.line, events));
        // The first line of a number is the one shown, as everywhere else.
        if (!ranges.has(part.line.iteration_number)) ranges.set(part.line.iteration_number, part.range);
      } else if (part.kind === 'end') end = part.line;
      else warnings.push(part.message);
    }
    const view = assembleSessionView({ id: sessionId, start: start!, end, warnings: [...warnings, ...sidecarWarnings] }, iterations, events);
    // UTF-16 text, and as much again for the objects around it: an estimate, not a measure.
    return { stamp, view, ranges, bytes: JSON.stringify(view).length * 4 + ranges.size * 64 };
  }
}
