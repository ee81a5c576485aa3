import fs from 'node:fs';
import path from 'node:path';
import type { ReviewRecord, ReviewRecordInput } from '../sessionFormat/reviewRecords.js';
import { REVIEW_FILE } from '../sessionFormat/sessionFiles.js';
import { AppendOnlyFile } from './appendOnlyFile.js';

/**
 * Appends one of the user's review records (a comment, a rejected hunk, a staging)
 * to a session's `review.jsonl`, synced: the next actor run, in this process or a
 * loop running in another, reads it from there.
 */
export function appendReviewRecord(sidecarDirectory: string, input: ReviewRecordInput, at: Date = new Date()): ReviewRecord {
  fs.mkdirSync(sidecarDirectory, { recursive: true, mode: 0o700 });
  const file = AppendOnlyFile.openForAppend(path.join(sidecarDirectory, REVIEW_FILE));
  try {
    const record = { ...input, timestamp: at.toISOString() } as ReviewRecord;
    file.appendLine(record);
    file.sync();
    return record;
  } finally {
    file.close();
  }
}
