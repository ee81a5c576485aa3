import * as z from './zod.js';

/**
 * The summary index, `sessions-index.json` beside the sessions folder: each session's
 * summary keyed by its file's size and modification time, so that listing thousands
 * of sessions reads only the files that changed. A cache, never a record: an entry
 * counts only while its file is exactly as it was, and a damaged index is rebuilt.
 *
 * The file is a header line, then one line per session of tab-separated fields:
 *
 *     id  size  mtime_ms  started_ms  summary  warnings  prompt
 *
 * `summary` is the session's `SessionSummary` as JSON text, kept as text so that a
 * listing prints it as it is, parsing nothing it does not filter on; `warnings` is a
 * JSON array of what reading the file warned about (empty field: none); `prompt` the
 * whole prompt as a JSON string, for searching (`null`: too long to keep here, the
 * file is read then). JSON text never holds a raw tab or newline, so the separators
 * cannot occur inside a field.
 */

export const SESSION_INDEX_VERSION = 3;

/** `<folder>-index.json` beside the sessions folder, outside the `sessions/*.jsonl` glob: `sessions-index.json`. */
export function sessionIndexFileName(sessionsFolderName: string): string {
  return `${sessionsFolderName}-index.json`;
}

/**
 * The header carries the SHA-256 of the lines after it: an index whose text is
 * exactly what a runner wrote is taken as it is, without validating ten thousand
 * entries on every listing (that cost more than reading the index); a damaged or
 * edited one is rebuilt.
 */
export const sessionIndexHeaderSchema = z.object({
  version: z.literal(SESSION_INDEX_VERSION),
  /** The folder it indexes: an index found beside another folder (moved, copied) is not used. */
  sessions_dir: z.string(),
  entries_sha256: z.string(),
});
export type SessionIndexHeader = z.infer<typeof sessionIndexHeaderSchema>;

/** One session in the index: how its file was when read, and what was read from it. */
export interface SessionIndexEntry {
  id: string;
  size: number;
  mtimeMs: number;
  /** When the session started (its summary's `timestamp`), in milliseconds: what listings sort by. */
  startedMs: number;
  /** The `SessionSummary`, as JSON text. */
  summaryJson: string;
  /** A JSON array of strings, or `''` for none. */
  warningsJson: string;
  /** A JSON string, or `null`. */
  promptJson: string;
}

export function formatIndexLine(entry: SessionIndexEntry): string {
  return [entry.id, entry.size, entry.mtimeMs, entry.startedMs, entry.summaryJson, entry.warningsJson, entry.promptJson].join('\t');
}

/** The session a line of the index is about: what comes before its first tab. */
export function indexLineId(line: string): string {
  const tab = line.indexOf('\t');
  return tab < 0 ? '' : line.slice(0, tab);
}

/** One line of the index, or undefined for a line that is not one (its session is then read again from its file). */
export function parseIndexLine(line: string): SessionIndexEntry | undefined {
  // Called for every session of every listing: tabs found with indexOf rather than a split into seven strings.
  const tabs: number[] = [];
  for (let at = line.indexOf('\t'); at >= 0; at = line.indexOf('\t', at + 1)) tabs.push(at);
  if (tabs.length !== 6) return undefined;
  const field = (index: number) => line.slice(index === 0 ? 0 : tabs[index - 1]! + 1, index === 6 ? line.length : tabs[index]);
  const size = Number(field(1));
  const mtimeMs = Number(field(2));
  const startedMs = Number(field(3));
  const summaryJson = field(4);
  if (!Number.isFinite(size) || !Number.isFinite(mtimeMs) || !Number.isFinite(startedMs) || !summaryJson.startsWith('{"id":')) return undefined;
  return { id: field(0), size, mtimeMs, startedMs, summaryJson, warningsJson: field(5), promptJson: field(6) };
}
