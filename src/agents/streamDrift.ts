import type { StreamDrift } from '../sessionFormat/agentEvents.js';

/**
 * What each adapter knows of its CLI's stream, as the versions it was tested with
 * print it: event types and, for each, its top-level fields (`null`: any fields, for
 * events whose shape varies and that are ignored whole). Anything else is drift: a
 * newer or older CLI. Drift is never fatal; it is counted, so a user (and the tests
 * against the real CLIs) can see that a CLI printed something its adapter did not
 * know.
 */
export type KnownEvents = Readonly<Record<string, readonly string[] | null>>;

/** Names of unknown events and fields kept as examples: enough to see what changed. */
const MAX_EXAMPLES = 8;

export class DriftCounter {
  private unknownEvents = 0;
  private unknownFields = 0;
  private readonly examples = new Set<string>();

  constructor(private readonly known: KnownEvents) {}

  /**
   * Notes one event by the name its adapter gives it (its `type`, or a type and
   * subtype): counted as unknown when the name is not in the table, or for each
   * field the table does not list. Returns whether the event is known.
   */
  see(name: string, event: unknown): boolean {
    if (!Object.hasOwn(this.known, name)) {
      this.unknownEvents += 1;
      this.example(`event ${name}`);
      return false;
    }
    const fields = this.known[name];
    if (fields && event !== null && typeof event === 'object') {
      for (const key of Object.keys(event)) {
        if (fields.includes(key)) continue;
        this.unknownFields += 1;
        this.example(`field ${name}.${key}`);
      }
    }
    return true;
  }

  /** Something the adapter reads inside an event (an item's type) that it does not know. */
  unknown(what: string): void {
    this.unknownEvents += 1;
    this.example(what);
  }

  get drift(): StreamDrift {
    return { unknownEvents: this.unknownEvents, unknownFields: this.unknownFields, examples: [...this.examples] };
  }

  private example(text: string): void {
    if (this.examples.size < MAX_EXAMPLES) this.examples.add(text);
  }
}

/** An event's `type`, the name most tables use; `(no type)` for an object without one. */
export function eventType(json: unknown): string {
  const type = json !== null && typeof json === 'object' ? (json as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? type : '(no type)';
}

/** No drift: for agents without a structured stream. */
export const NO_DRIFT: StreamDrift = { unknownEvents: 0, unknownFields: 0, examples: [] };
