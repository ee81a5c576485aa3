import fs from 'node:fs';
import path from 'node:path';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import { EVENTS_FILE, rawStdoutFileName, type AnswerAttempt } from '../sessionFormat/sessionFiles.js';
import { takeHead } from '../text/truncate.js';
import { AppendOnlyFile } from './appendOnlyFile.js';

/** How much of one streamed text event the record keeps; the raw stdout file has all of it. */
const MAX_RECORDED_TEXT = 4_000;

/**
 * The session's sidecar: `sidecars/<id>/events.jsonl` (every run event, one a
 * line, append-only like the session) and the agents' raw stdout, one file per
 * run. Outside the `sessions/*.jsonl` glob, so readers of the format never see it.
 */
export class SidecarRecorder {
  private constructor(
    readonly directory: string,
    private readonly events: AppendOnlyFile,
  ) {}

  static open(directory: string): SidecarRecorder {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
    return new SidecarRecorder(directory, AppendOnlyFile.openForAppend(path.join(directory, EVENTS_FILE)));
  }

  record(event: RunEvent): void {
    this.events.appendLine(compact(event));
    // Boundaries are where a crash must not lose anything.
    if (event.type === 'iteration_finished' || event.type === 'run_finished' || event.type === 'snapshot') this.events.sync();
  }

  rawStdoutPath(iteration: number, role: 'actor' | 'critic', attempt: AnswerAttempt = 'first'): string {
    return path.join(this.directory, rawStdoutFileName(iteration, role, attempt));
  }

  close(): void {
    this.events.close();
  }
}

function compact(event: RunEvent): RunEvent {
  if (event.type === 'agent_event' && event.event.kind === 'text' && event.event.text.length > MAX_RECORDED_TEXT) {
    return { ...event, event: { ...event.event, text: takeHead(event.event.text, MAX_RECORDED_TEXT) + '…' } };
  }
  return event;
}
