import { sessionSummarySchema } from './sessionSummaries.js';
import * as z from './zod.js';

/**
 * The summary index, `sessions-index.json` beside the sessions folder: each session's
 * summary keyed by its file's size and modification time, so that listing thousands
 * of sessions reads only the files that changed. A cache, never a record: an entry
 * counts only while its file is exactly as it was, and a damaged index is rebuilt.
 */

export const SESSION_INDEX_VERSION = 2;

/** `<folder>-index.json` beside the sessions folder, outside the `sessions/*.jsonl` glob: `sessions-index.json`. */
export function sessionIndexFileName(sessionsFolderName: string): string {
  return `${sessionsFolderName}-index.json`;
}

export const sessionIndexEntrySchema = z.object({
  size: z.number(),
  mtime_ms: z.number(),
  summary: sessionSummarySchema,
  /** The whole prompt, for searching; null when it is too long to keep here (the file is read then). */
  prompt: z.nullable(z.string()),
  /** What reading the file warned about (a torn last line), said again at each listing. */
  warnings: z.array(z.string()),
});
export type SessionIndexEntry = z.infer<typeof sessionIndexEntrySchema>;

/**
 * The file is two parts: this header on its first line, then the entries as one JSON
 * object (id → entry) on the second. The header carries the SHA-256 of the entries'
 * text: an index whose text is exactly what a runner wrote (and validated) is taken as
 * it is, without parsing ten thousand entries through the schema on every listing
 * (that cost more than reading the index); a damaged or edited one is rebuilt.
 */
export const sessionIndexHeaderSchema = z.object({
  version: z.literal(SESSION_INDEX_VERSION),
  /** The folder it indexes: an index found beside another folder (moved, copied) is not used. */
  sessions_dir: z.string(),
  entries_sha256: z.string(),
});
export type SessionIndexHeader = z.infer<typeof sessionIndexHeaderSchema>;
