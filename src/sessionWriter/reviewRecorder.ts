import fs from 'node:fs';
import path from 'node:path';
import type { ReviewRecord, ReviewRecordInput } from '../sessionFormat/reviewRecords.js';
import { REVIEW_FILE } from '../sessionFormat/sessionFiles.js';
import { AppendOnlyFile } from './appendOnlyFile.js';

/**
 * A session's `review.jsonl`, open to append the user's review records to (a comment,
 * a rejected hunk, a staging), each synced: the next actor run, in this process or a
 * loop running in another, reads it from there. An action that changes files opens
 * it first, so that a record that cannot be written (not a regular file) stops the
 * action before any file changed.
 */
export class ReviewRecordFile {
  private constructor(private readonly file: AppendOnlyFile) {}

  static open(sidecarDir: string): ReviewRecordFile {
    fs.mkdirSync(sidecarDir, { recursive: true, mode: 0o700 });
    return new ReviewRecordFile(AppendOnlyFile.openForAppend(path.join(sidecarDir, REVIEW_FILE)));
  }

  append(input: ReviewRecordInput, at: Date = new Date()): ReviewRecord {
    const record = { ...input, timestamp: at.toISOString() } as ReviewRecord;
    this.file.appendLine(record);
    this.file.sync();
    return record;
  }

  close(): void {
    this.file.close();
  }
}

/** Appends one record to a session's `review.jsonl`. */
export function appendReviewRecord(sidecarDir: string, input: ReviewRecordInput, at: Date = new Date()): ReviewRecord {
  const file = ReviewRecordFile.open(sidecarDir);
  try {
    return file.append(input, at);
  } finally {
    file.close();
  }
}
