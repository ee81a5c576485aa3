import fs from 'node:fs';
import { loopRunnerPid } from '../../sessions/loopLiveness.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import { describeProgress, readModelSession, type ModelSession } from '../../sessionView/modelSession.js';

/**
 * Waiting on a loop another process runs: the session file says what it did, the
 * repository lock whether its runner is alive. Neither tells this process when it
 * changes (the runner may be a later server's, or the editor's), so both are looked
 * at a few times a second; the session is read again only when its file has grown.
 */

/** A progress notification: `progress` grows with every one, as MCP requires (the seconds waited); `total` is the timeout. */
export interface ProgressReport {
  progress: number;
  total: number;
  message: string;
}

const POLL_MS = 250;
/** A client that times a call out unless it hears progress hears some at least this often. */
const HEARTBEAT_MS = 10_000;
/** How long an interrupted loop may take to stop its agents and end its session (they get SIGINT, then SIGTERM, then SIGKILL). */
const INTERRUPT_WAIT_MS = 60_000;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Follows a running loop until `stop` says so; returns the session as last read. */
async function follow(
  store: SessionStore,
  id: string,
  stop: (view: ModelSession) => boolean,
  onRead: (view: ModelSession) => Promise<void>,
): Promise<ModelSession> {
  const file = store.filePathOf(id);
  let size = -1;
  let view = await readModelSession(store, id);
  for (;;) {
    await onRead(view);
    if (view.status !== 'running' || stop(view)) return view;
    await sleep(POLL_MS);
    const grown = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
    const running = loopRunnerPid({ working_dir: view.working_dir, timestamp: view.started_at }) !== undefined;
    // Read again when it grew, or when its runner is gone (its last line may have landed just before).
    if (grown !== size || !running) {
      size = grown;
      view = await readModelSession(store, id);
    }
  }
}

/** `wait_session`: until the loop ends, the timeout passes or the client cancels; progress reported on every change and as a heartbeat. */
export async function waitForLoop(
  store: SessionStore,
  id: string,
  options: { timeoutSecs: number; progress: (report: ProgressReport) => Promise<void>; signal: AbortSignal },
): Promise<ModelSession & { timed_out: boolean }> {
  const started = Date.now();
  const deadline = started + options.timeoutSecs * 1000;
  let said = '';
  let saidAt = 0;
  const report = async (view: ModelSession): Promise<void> => {
    const message = describeProgress(view);
    if (message === said && Date.now() - saidAt < HEARTBEAT_MS) return;
    said = message;
    saidAt = Date.now();
    await options.progress({ progress: (Date.now() - started) / 1000, total: options.timeoutSecs, message });
  };
  const view = await follow(store, id, () => Date.now() >= deadline || options.signal.aborted, report);
  return { ...view, timed_out: view.status === 'running' };
}

/** `interrupt_session`: SIGINT to the loop's runner, as Ctrl+C in its terminal; returns once its session ended (or a minute passed). */
export async function interruptLoop(store: SessionStore, id: string): Promise<ModelSession & { interrupted: boolean }> {
  const view = await readModelSession(store, id);
  const pid = view.status === 'running' ? loopRunnerPid({ working_dir: view.working_dir, timestamp: view.started_at }) : undefined;
  if (pid === undefined) return { ...view, interrupted: false };
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    // it ended meanwhile
  }
  const deadline = Date.now() + INTERRUPT_WAIT_MS;
  const after = await follow(
    store,
    id,
    () => Date.now() >= deadline,
    async () => {},
  );
  return { ...after, interrupted: true };
}
