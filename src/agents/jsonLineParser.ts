import type * as z from '../sessionFormat/zod.js';
import type { AgentEvent } from '../sessionFormat/agentEvents.js';
import type { ParserVerdict, StreamParser } from './agentAdapter.js';
import type { AgentLimit } from './agentLimits.js';
import { DriftCounter, eventType, type KnownEvents } from './streamDrift.js';

/**
 * What every agent CLI with a JSON-lines stream shares: a line that is not JSON is
 * text for the transcript (a banner, a warning), an event its adapter does not know
 * is counted as drift and skipped, one whose shape the adapter's schema refuses is
 * skipped. What is left, each adapter reads in its own `switch`.
 */
export interface JsonLineReading<Line> {
  /** The events and, for each, the fields of the CLI versions the adapter was tested with. */
  known: KnownEvents;
  /** What the adapter reads of a line; loose, so fields it does not read pass. */
  schema: z.ZodMiniType<Line>;
  /** The name the `known` table gives a line: its `type` unless the adapter says otherwise. */
  nameOf?: (json: unknown) => string;
  /**
   * The agent events one known, well-formed line stands for, pushed onto `events`.
   * `drift` is for what the adapter finds unknown inside a known event (an item's type).
   */
  read(line: Line, events: AgentEvent[], drift: DriftCounter): void;
  /** After exit: did the run succeed by the agent's own account, and its final message. */
  finish(exitCode: number | null): Omit<ParserVerdict, 'drift'>;
  /** A line of the CLI's own log, which may show it stuck retrying (`StreamParser.readLogLine`). */
  readLogLine?(line: string): AgentLimit | null;
}

/** A stream parser for a JSON-lines CLI: the shared opening, then the adapter's own reading. */
export function jsonLineParser<Line>(reading: JsonLineReading<Line>): StreamParser {
  const drift = new DriftCounter(reading.known);
  const nameOf = reading.nameOf ?? eventType;
  return {
    parseLine(line) {
      const json = parseJsonLine(line);
      if (json === undefined) return unstructuredLine(line);
      if (!drift.see(nameOf(json), json)) return [];
      const parsed = reading.schema.safeParse(json);
      if (!parsed.success) return [];
      const events: AgentEvent[] = [];
      reading.read(parsed.data, events, drift);
      return events;
    },
    finish: (exitCode) => ({ ...reading.finish(exitCode), drift: drift.drift }),
    ...(reading.readLogLine && { readLogLine: reading.readLogLine }),
  };
}

/** Parses a JSON line, or returns undefined for anything else (banners, garbage). */
function parseJsonLine(line: string): unknown {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return undefined;
  }
}

/** A line that is not part of the structured stream still belongs in the transcript. */
function unstructuredLine(line: string): AgentEvent[] {
  return line.trim().length === 0 ? [] : [{ kind: 'text', text: line }];
}
