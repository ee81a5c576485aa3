import fs from 'node:fs';
import path from 'node:path';
import { sessionFilePath, sessionIdFor } from '../sessionFormat/sessionFiles.js';
import {
  sessionEndLineSchema,
  sessionStartLineSchema,
  type IterationLineFields,
  type SessionEndLineFields,
  type SessionHeader,
  type WithoutFields,
  writtenIterationLineSchema,
} from '../sessionFormat/sessionLines.js';
import type * as z from '../sessionFormat/zod.js';
import { AppendOnlyFile } from './appendOnlyFile.js';

/** Collisions of one prompt in one second move to the next free second, at most this far. */
const MAX_COLLISION_SECS = 3600;

/**
 * Writes one session file in the documented format. Each line is checked against
 * its schema before it is written (a line no reader accepts is never written) and
 * laid out in the schema's order: the documented fields first, then this runner's.
 */
export class SessionWriter {
  private ended = false;

  private constructor(
    readonly sessionId: string,
    private readonly file: AppendOnlyFile,
  ) {}

  get filePath(): string {
    return this.file.filePath;
  }

  /**
   * Creates `<timestamp>_<hash>.jsonl` and writes `session_start`. Two sessions with
   * the same prompt in the same second would collide; the later one takes the next
   * free second so the documented name format holds.
   */
  static create(sessionsDirectory: string, header: SessionHeader, startedAt: Date): SessionWriter {
    fs.mkdirSync(sessionsDirectory, { recursive: true, mode: 0o700 });
    for (let offsetSecs = 0; ; offsetSecs++) {
      const sessionId = sessionIdFor(new Date(startedAt.getTime() + offsetSecs * 1000), header.prompt);
      let file: AppendOnlyFile;
      try {
        file = AppendOnlyFile.createExclusive(sessionFilePath(sessionsDirectory, sessionId));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && offsetSecs < MAX_COLLISION_SECS) continue;
        throw error;
      }
      const writer = new SessionWriter(sessionId, file);
      writer.append(sessionStartLineSchema, { ...header, type: 'session_start', timestamp: startedAt.toISOString() });
      return writer;
    }
  }

  /** Reopens a session that has no `session_end` yet, to carry it on (a torn last line is cut off first). */
  static reopen(filePath: string): SessionWriter {
    const sessionId = path.basename(filePath, '.jsonl');
    return new SessionWriter(sessionId, AppendOnlyFile.openForAppend(filePath));
  }

  writeIteration(fields: WithoutFields<IterationLineFields, 'timestamp'>, completedAt: Date = new Date()): void {
    this.assertOpen();
    this.append(writtenIterationLineSchema, {
      ...fields,
      type: 'iteration',
      actor_duration_secs: roundSecs(fields.actor_duration_secs),
      // The format's rule: the critic's feedback is for work that goes on.
      feedback: fields.critic_decision === 'DONE' ? null : fields.feedback,
      timestamp: completedAt.toISOString(),
    });
  }

  writeEnd(fields: WithoutFields<SessionEndLineFields, 'timestamp'>, endedAt: Date = new Date()): void {
    this.assertOpen();
    this.ended = true;
    this.append(sessionEndLineSchema, { ...fields, type: 'session_end', duration_secs: roundSecs(fields.duration_secs), timestamp: endedAt.toISOString() });
  }

  close(): void {
    this.file.close();
  }

  private append(schema: z.ZodMiniObject, line: Record<string, unknown>): void {
    const checked = schema.safeParse(line);
    if (!checked.success) {
      throw new Error(
        `refusing to write an invalid ${String(line.type)} line: ${checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      );
    }
    this.file.appendLine(inSchemaOrder(schema, line));
    this.file.sync();
  }

  private assertOpen(): void {
    if (this.ended) throw new Error(`session ${this.sessionId} has already ended`);
  }
}

/**
 * The line's fields in the order its schema declares them, then any others; fields
 * left undefined (an optional extra with nothing to say) are not written at all.
 */
function inSchemaOrder(schema: z.ZodMiniObject, line: Record<string, unknown>): Record<string, unknown> {
  const ordered: Record<string, unknown> = {};
  for (const key of [...Object.keys(schema.shape), ...Object.keys(line)]) {
    if (line[key] !== undefined && !(key in ordered)) ordered[key] = line[key];
  }
  return ordered;
}

function roundSecs(value: number): number {
  return Math.round(value * 1000) / 1000;
}
