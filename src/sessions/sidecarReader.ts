import fs from 'node:fs';
import path from 'node:path';
import { runEventSchema, type RunEvent } from '../sessionFormat/runEvents.js';
import { reviewRecordSchema, type ReviewRecord } from '../sessionFormat/reviewRecords.js';
import { EVENTS_FILE, REVIEW_FILE } from '../sessionFormat/sessionFiles.js';
import { readAllLines } from './lineReader.js';

/**
 * Reads a session's sidecar records (`sidecars/<id>/events.jsonl`, `review.jsonl`). Sessions from
 * other writers have none: the result is then empty, never an error. Bad or torn
 * lines are skipped, as in session files.
 */
export async function readSidecarEvents(sidecarDirectory: string, warn: (message: string) => void = () => {}): Promise<RunEvent[]> {
  return readRecords(path.join(sidecarDirectory, EVENTS_FILE), runEventSchema, warn);
}

/** The user's review records (`sidecars/<id>/review.jsonl`): comments, rejected hunks, stagings. */
export async function readReviewRecords(sidecarDirectory: string, warn: (message: string) => void = () => {}): Promise<ReviewRecord[]> {
  return readRecords(path.join(sidecarDirectory, REVIEW_FILE), reviewRecordSchema, warn);
}

async function readRecords<T>(
  file: string,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false } },
  warn: (message: string) => void,
): Promise<T[]> {
  if (!fs.existsSync(file)) return [];
  const records: T[] = [];
  for await (const { text, lineNumber, last } of readAllLines(file)) {
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
    if (parsed.success) records.push(parsed.data);
  }
  return records;
}
