import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { NotARegularFileError, openRegularFile } from '../files/regularFile.js';
import { runEventSchema, type RunEvent } from '../sessionFormat/runEvents.js';
import { EVENTS_FILE } from '../sessionFormat/sessionFiles.js';
import { LineReader } from './lineReader.js';

/**
 * Reads a session's sidecar record (`sidecars/<id>/events.jsonl`). Sessions from
 * other writers have none: the result is then empty, never an error. Bad or torn
 * lines are skipped, as in session files; so is a record that is not a file (a FIFO
 * put in its place), with a warning: the session still reads from its own lines.
 */
export async function readSidecarEvents(
  sidecarDirectory: string,
  warn: (message: string) => void = () => {},
  /** What to keep of each event (undefined: nothing): a reader that needs a few kinds does not hold them all. */
  keep: (event: RunEvent) => RunEvent | undefined = (event) => event,
): Promise<RunEvent[]> {
  const file = path.join(sidecarDirectory, EVENTS_FILE);
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
  const events: RunEvent[] = [];
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
      const parsed = runEventSchema.safeParse(json);
      // Events of a newer runner this one does not know are skipped without a fuss.
      const kept = parsed.success ? keep(parsed.data) : undefined;
      if (kept) events.push(kept);
    }
  } finally {
    await handle.close();
  }
  return events;
}
