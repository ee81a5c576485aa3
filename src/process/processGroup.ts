/**
 * Programs the runner starts and must be able to stop whole: agents and checks run
 * in their own process group (`detached`), so that stopping one stops every shell
 * and child it started. A group still running when the runner exits is killed.
 */

/** After SIGINT, when SIGTERM follows, and when SIGKILL ends it for good. */
const SIGTERM_AFTER_MS = 500;
const SIGKILL_AFTER_MS = 2000;

const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Sends a signal to a whole process group (falling back to the process alone). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // A negative pid addresses the whole process group: the program and everything it started.
    process.kill(process.platform === 'win32' ? pid : -pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** Remembers a group so that the runner's exit kills it; returns what forgets it (and kills what is left of it). */
export function trackGroup(pid: number): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
    });
  }
  liveGroups.add(pid);
  return () => {
    // Whatever the program started in its group does not outlive it.
    signalGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
  };
}

/** Stops a group as a terminal would: SIGINT, then SIGTERM, then SIGKILL for a program that ignores both. */
export function stopGroup(pid: number): void {
  signalGroup(pid, 'SIGINT');
  setTimeout(() => signalGroup(pid, 'SIGTERM'), SIGTERM_AFTER_MS).unref();
  setTimeout(() => signalGroup(pid, 'SIGKILL'), SIGKILL_AFTER_MS).unref();
}
