import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { NotARegularFileError, openRegularFile } from '../files/regularFile.js';
import { reviewRecordSchema, type ReviewRecord } from '../sessionFormat/reviewRecords.js';
import { runEventSchema, type RunEvent } from '../sessionFormat/runEvents.js';
import { EVENTS_FILE, REVIEW_FILE } from '../sessionFormat/sessionFiles.js';
import { LineReader } from './lineReader.js';

/**
 * Reads a session's sidecar records (`sidecars/<id>/events.jsonl`, `review.jsonl`).
 * Sessions from other writers have none: the result is then empty, never an error.
 * Bad or torn lines are skipped, as in session files; so is a record that is not a
 * file (a FIFO put in its place), with a warning: the session still reads from its
 * own lines.
 */
export async function readSidecarEvents(
  sidecarDir: string,
  warn: (message: string) => void = () => {},
  /** What to keep of each event (undefined: nothing): a reader that needs a few kinds does not hold them all. */
  keep: (event: RunEvent) => RunEvent | undefined = (event) => event,
): Promise<RunEvent[]> {
  return readJsonlRecords(path.join(sidecarDir, EVENTS_FILE), runEventSchema, warn, keep);
}

/** The user's review records (`sidecars/<id>/review.jsonl`): comments, rejected hunks, stagings. */
export async function readReviewRecords(sidecarDir: string, warn: (message: string) => void = () => {}): Promise<ReviewRecord[]> {
  return readJsonlRecords(path.join(sidecarDir, REVIEW_FILE), reviewRecordSchema, warn, (record) => record);
}

/**
 * The records of an append-only JSON Lines file that match their schema: a torn or
 * garbled line is skipped with a warning, one of a newer runner without a fuss, and a
 * file that is missing is empty. Read a line at a time; only the records kept stay.
 */
export async function readJsonlRecords<T>(
  file: string,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  warn: (message: string) => void,
  keep: (record: T) => T | undefined,
): Promise<T[]> {
  let handle: FileHandle;
  try {
    handle = await openRegularFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    if (error instanceof NotARegularFileError) {
      warn(`${error.message}: the sidecar record was not read`);
      return [];
    }
    throw error;
  }
  const records: T[] = [];
  try {
    const lines = new LineReader(handle);
    for (let line = await lines.next(); line; line = await lines.next()) {
      const { lineNumber, last } = line;
      // This reader decodes every line (it leaves none in the file).
      const text = line.text!;
      if (text.trim() === '') continue;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        warn(`${file}: skipped ${last ? 'a torn last line' : `line ${lineNumber}`} (not valid JSON)`);
        continue;
      }
      const parsed = schema.safeParse(json);
      // Records of a newer runner this one does not know are skipped without a fuss.
      const kept = parsed.success ? keep(parsed.data) : undefined;
      if (kept) records.push(kept);
    }
  } finally {
    await handle.close();
  }
  return records;
}
