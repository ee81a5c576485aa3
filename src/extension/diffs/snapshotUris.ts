import * as z from '../../sessionFormat/zod.js';

/**
 * Diff parameters travel as JSON in the URI query (the path is the file's, so the
 * editor shows its name and picks its language). Parsed with zod: a URI can come
 * from anywhere, and only a session id, an iteration and a side are trusted from
 * it; the repository is looked up from the session, never taken from the URI.
 */

export const snapshotFileSchema = z.object({
  session: z.string().check(z.minLength(1)),
  iteration: z.int().check(z.positive()),
  side: z.enum(['pre', 'post']),
  /** Path from the top of the repository, with forward slashes. */
  path: z.string().check(z.minLength(1)),
});
export type SnapshotFile = z.infer<typeof snapshotFileSchema>;

export function snapshotQuery(file: SnapshotFile): string {
  return JSON.stringify(file);
}

export function parseSnapshotQuery(query: string): SnapshotFile {
  let json: unknown;
  try {
    json = JSON.parse(query);
  } catch {
    throw new Error('not a Codeloops snapshot address');
  }
  const file = snapshotFileSchema.parse(json);
  if (file.path.split('/').includes('..') || file.path.startsWith('/')) throw new Error('not a Codeloops snapshot address');
  return file;
}

export const recordedDiffSchema = z.object({ session: z.string().check(z.minLength(1)), iteration: z.int().check(z.positive()) });
export type RecordedDiffRef = z.infer<typeof recordedDiffSchema>;

export function parseRecordedDiffQuery(query: string): RecordedDiffRef {
  return recordedDiffSchema.parse(JSON.parse(query));
}
