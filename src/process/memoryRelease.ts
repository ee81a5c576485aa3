/**
 * Giving big garbage back at once. V8 collects when it allocates, so a server that
 * has just read a 50 MB line and then sits idle would keep its buffers, its text and
 * what it parsed to for as long as it sits there: several times the line. A process
 * that serves big files (`codeloops ui`) turns collection on demand on, and readers
 * of big lines drop them as soon as they are done with each copy. Elsewhere (the CLI,
 * the editor's host) this does nothing.
 */

let collect: (() => void) | undefined;
let scheduled = false;
/** How many times a release was asked for: a reader of big lines asks while it works, before all it made is garbage. */
let asked = 0;

/** Turns collection on demand on for this process (as `node --expose-gc` would). */
export function enableMemoryRelease(): void {
  if (collect) return;
  // Loaded here, not with the module: every command of the CLI would pay for them at its start.
  process.getBuiltinModule('node:v8').setFlagsFromString('--expose-gc');
  // A fresh context sees the flag; the function it hands back collects this isolate's heap.
  collect = process.getBuiltinModule('node:vm').runInNewContext('gc') as () => void;
}

/** A full collection now, when turned on: a big copy just became garbage, and the next one is about to be made. */
export function releaseMemoryNow(): void {
  asked += 1;
  collect?.();
}

/** A mark to compare with later: whether a release was asked for since (`releaseAskedSince`). */
export function releaseMark(): number {
  return asked;
}

export function releaseAskedSince(mark: number): boolean {
  return asked !== mark;
}

/**
 * How long after a release a second one runs: what the sockets still held when the
 * first ran (a reply's last slices, not yet flushed on a busy machine) is garbage by
 * then, and an idle server would otherwise keep it until its next request.
 */
const FOLLOW_UP_MS = 1_000;
let followUp: NodeJS.Timeout | undefined;

/** A full collection once the work in hand is done (after the current I/O), and once more a moment later, when turned on. */
export function releaseMemorySoon(): void {
  asked += 1;
  if (!collect) return;
  if (!scheduled) {
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      collect?.();
    });
  }
  followUp?.refresh();
  followUp ??= setTimeout(() => {
    followUp = undefined;
    collect?.();
  }, FOLLOW_UP_MS).unref();
}
