import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import { isSessionId } from '../sessionFormat/sessionFiles.js';

export type SessionChange = { kind: 'created' | 'changed' | 'removed'; id: string };

/** How long a burst of writes to one file is gathered into one change. */
const SETTLE_MS = 75;

/**
 * Watches the sessions folder and reports which sessions appeared, grew or went
 * away, including those written by a CLI in a terminal. Bursts of writes are
 * gathered per file. The folder is created if it does not exist yet, so a first
 * session is seen too.
 */
export class SessionWatcher {
  private readonly emitter = new EventEmitter();
  private readonly watcher: fs.FSWatcher;
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly known = new Set<string>();

  constructor(private readonly directory: string) {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
    for (const name of fs.readdirSync(directory)) {
      const id = idOf(name);
      if (id) this.known.add(id);
    }
    this.watcher = fs.watch(directory, { persistent: false }, (_event, name) => {
      const id = name ? idOf(name.toString()) : undefined;
      if (id) this.schedule(id);
    });
    this.watcher.on('error', () => {
      // The folder went away (deleted by hand): stop quietly; a new watcher is needed.
    });
  }

  onChange(listener: (change: SessionChange) => void): () => void {
    this.emitter.on('change', listener);
    return () => this.emitter.off('change', listener);
  }

  private schedule(id: string): void {
    clearTimeout(this.pending.get(id));
    this.pending.set(
      id,
      setTimeout(() => {
        this.pending.delete(id);
        const exists = fs.existsSync(`${this.directory}/${id}.jsonl`);
        let kind: SessionChange['kind'];
        if (!exists) {
          if (!this.known.delete(id)) return;
          kind = 'removed';
        } else if (this.known.has(id)) {
          kind = 'changed';
        } else {
          this.known.add(id);
          kind = 'created';
        }
        this.emitter.emit('change', { kind, id } satisfies SessionChange);
      }, SETTLE_MS),
    );
  }

  close(): void {
    this.watcher.close();
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
    this.emitter.removeAllListeners();
  }
}

function idOf(name: string): string | undefined {
  if (!name.endsWith('.jsonl')) return undefined;
  const id = name.slice(0, -'.jsonl'.length);
  return isSessionId(id) ? id : undefined;
}
