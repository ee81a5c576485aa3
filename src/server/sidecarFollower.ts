import fs from 'node:fs';
import { NotARegularFileError, openRegularFile } from '../files/regularFile.js';
import { parseRunEvent, type RunEvent } from '../sessionFormat/runEvents.js';
import { LiveReplay } from '../sessionView/liveReplay.js';
const CHUNK_BYTES = 64 * 1024;
/** While the record does not exist yet (the loop is starting), look again this often. */
const RETRY_MS = 250;

/**
 * Follows a running loop's sidecar record (`sidecars/<id>/events.jsonl`) as it grows:
 * each new whole line is parsed and handed on. What was already there when following
 * began is not handed on, only kept as the current iteration's replay. Stops by
 * itself after `run_finished`.
 */
export class SidecarFollower {
  private offset = 0;
  private partial: Buffer = Buffer.alloc(0);
  private watcher: fs.FSWatcher | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private reading = false;
  private readAgain = false;
  private closed = false;
  private caughtUp = false;
  private readonly replay = new LiveReplay();
  /** Resolves once what the record held when following began has been read. */
  readonly ready: Promise<void>;
  private resolveReady!: () => void;

  constructor(
    private readonly file: string,
    private readonly onEvent: (event: RunEvent) => void,
    private readonly onFinished: () => void,
    options: { fromStart?: boolean } = {},
  ) {
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    // A loop whose session appeared while clients watched: everything it records is news to them.
    if (options.fromStart) this.markCaughtUp();
    this.attach();
  }

  /** The current iteration's events so far, for a viewer that has just opened. */
  replayEvents(): readonly RunEvent[] {
    return this.replay.events();
  }

  /** Something may have been appended (the session file changed too): read now. */
  poke(): void {
    void this.pump();
  }

  private attach(): void {
    if (this.closed) return;
    try {
      this.watcher = fs.watch(this.file, { persistent: false }, () => void this.pump());
      this.watcher.on('error', () => this.watcher?.close());
    } catch {
      // Not created yet: the loop is starting. Look again shortly.
      this.retryTimer = setTimeout(() => this.attach(), RETRY_MS).unref();
      if (!this.caughtUp) this.markCaughtUp();
      return;
    }
    void this.pump();
  }

  private markCaughtUp(): void {
    this.caughtUp = true;
    this.resolveReady();
  }

  private async pump(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = true;
    let handle: fs.promises.FileHandle | undefined;
    try {
      do {
        this.readAgain = false;
        // Never blocks: a FIFO in the record's place would hold a thread of the pool for good.
        handle ??= await openRegularFile(this.file);
        const { size } = await handle.stat();
        while (!this.closed && this.offset < size) {
          const buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size - this.offset));
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, this.offset);
          if (bytesRead === 0) break;
          this.offset += bytesRead;
          this.take(buffer.subarray(0, bytesRead));
        }
        // What was there at the start is history; from here on, events are news.
        if (!this.caughtUp) this.markCaughtUp();
      } while (this.readAgain && !this.closed);
    } catch (error) {
      // Not a file: there is no record to follow. Gone (the session was deleted) or not
      // there yet: the watcher or a poke brings us back.
      if (error instanceof NotARegularFileError) this.close();
    } finally {
      await handle?.close();
      this.reading = false;
      if (!this.caughtUp) this.markCaughtUp();
    }
  }

  /** Splits bytes into lines; a line cut by the end of the file waits for the rest. */
  private take(bytes: Buffer): void {
    let data = this.partial.length > 0 ? Buffer.concat([this.partial, bytes]) : bytes;
    for (let newline = data.indexOf(0x0a); newline >= 0 && !this.closed; newline = data.indexOf(0x0a)) {
      const line = data.subarray(0, newline).toString('utf8');
      data = data.subarray(newline + 1);
      this.handleLine(line);
    }
    this.partial = Buffer.from(data);
  }

  private handleLine(text: string): void {
    // A bad line or an event of a newer runner is skipped, as every reader of the record does.
    const event = parseRunEvent(text);
    if (!event) return;
    this.replay.add(event);
    if (this.caughtUp) this.onEvent(event);
    if (event.type === 'run_finished') {
      this.close();
      this.onFinished();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.watcher?.close();
    clearTimeout(this.retryTimer);
    this.replay.clear();
    this.partial = Buffer.alloc(0);
    if (!this.caughtUp) this.markCaughtUp();
  }
}
