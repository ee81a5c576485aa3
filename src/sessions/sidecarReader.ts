import fs from 'node:fs';
import path from 'node:path';
import { runEventSchema, type RunEvent } from '../sessionFormat/runEvents.js';
import { EVENTS_FILE } from '../sessionFormat/sessionFiles.js';
import { readAllLines } from './lineReader.js';

/**
 * Reads a session's sidecar record (`sidecars/<id>/events.jsonl`). Sessions from
 * other writers have none: the result is then empty, never an error. Bad or torn
 * lines are skipped, as in session files.
 */
export async function readSidecarEvents(sidecarDirectory: string, warn: (message: string) => void = () => {}): Promise<RunEvent[]> {
  const file = path.join(sidecarDirectory, EVENTS_FILE);
  if (!fs.existsSync(file)) return [];
  const events: RunEvent[] = [];
  for await (const { text, lineNumber, last } of readAllLines(file)) {
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
    if (parsed.success) events.push(parsed.data);
  }
  return events;
}
