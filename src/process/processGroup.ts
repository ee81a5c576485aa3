import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { setLongTimeout } from './longTimer.js';

/**
 * Programs the runner starts and must be able to stop whole: agents and checks run
 * in their own process group (`detached`), so that stopping one stops every shell
 * and child it started. A group still running when the runner exits is killed; one
 * that outlives a runner killed outright is recorded where the next runner looks
 * (the loop lock, through a GroupRecorder).
 */

/** Told of the process groups a program runs in, as they start and as they end. */
export interface GroupRecorder {
  add(pid: number): void;
  remove(pid: number): void;
}

/** After SIGINT, when SIGTERM follows, and when SIGKILL ends it for good. */
const SIGTERM_AFTER_MS = 500;
const SIGKILL_AFTER_MS = 2000;
/** After a program exits, how long what it left running may keep its output open: time for the last of it to arrive. */
const DRAIN_GRACE_MS = 2000;

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

/**
 * Remembers a group so that the runner's exit kills it, and tells the recorder;
 * returns what forgets it (and kills what is left of it: a program that exited
 * normally may have left a background process in its group).
 */
function trackGroup(pid: number, recorder?: GroupRecorder): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
    });
  }
  liveGroups.add(pid);
  recorder?.add(pid);
  return () => {
    // Whatever the program started in its group does not outlive it.
    signalGroup(pid, 'SIGKILL');
    liveGroups.delete(pid);
    recorder?.remove(pid);
  };
}

/**
 * A program that exited may have left a background process holding its stdout open
 * (a test server, a daemon): waiting for its output to end would wait for that
 * process, up to the program's whole timeout. Once the program exits, its group gets
 * a moment for its last output, then is killed and the pipes closed, so that the
 * program's own exit ends the wait, with its own exit code. Returns what cancels
 * the grace's timer once the output has ended.
 */
function endGroupAfterExit(child: ChildProcess): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  child.once('exit', () => {
    timer = setTimeout(() => {
      if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
      // A process outside the group (one that left it with setsid) may still hold them.
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, DRAIN_GRACE_MS);
  });
  return () => clearTimeout(timer);
}

/** Stops a group as a terminal would: SIGINT, then SIGTERM, then SIGKILL for a program that ignores both. */
function stopGroup(pid: number): void {
  signalGroup(pid, 'SIGINT');
  setTimeout(() => signalGroup(pid, 'SIGTERM'), SIGTERM_AFTER_MS).unref();
  setTimeout(() => signalGroup(pid, 'SIGKILL'), SIGKILL_AFTER_MS).unref();
}

/** Why the runner stopped a program before it ended by itself. */
export type GroupStopCause = 'timeout' | 'interrupt';

/** A program the runner watches over while it runs, in its own process group. */
export interface SupervisedGroup {
  /** Why the runner stopped it, or null while it has not. */
  readonly stoppedFor: GroupStopCause | null;
  /**
   * Once its output has ended: stops the clock, forgets the interrupt, and ends
   * what it left running in its group. Safe to call twice.
   */
  release(): void;
}

/**
 * Watches over a program started in its own process group (`detached`), the way
 * agents and checks both run: the recorder is told of its group, the whole group is
 * stopped at its timeout or on an interrupt (as a terminal would), and once the
 * program exits what it left running gets a moment for its last output, then ends.
 * Call `release` when its output has ended.
 */
export function superviseGroup(child: ChildProcess, options: { timeoutSecs: number; signal?: AbortSignal; groups?: GroupRecorder }): SupervisedGroup {
  const pid = child.pid;
  const forgetGroup = pid === undefined ? () => {} : trackGroup(pid, options.groups);
  // A program that exits leaving a test server or a daemon behind has ended: its exit counts, not the daemon's.
  const stopDraining = endGroupAfterExit(child);
  let stoppedFor: GroupStopCause | null = null;
  const stop = (reason: GroupStopCause): void => {
    if (stoppedFor || pid === undefined) return;
    stoppedFor = reason;
    stopGroup(pid);
  };
  // Not unref'd: while a program runs, its timeout is what keeps the runner waiting.
  const cancelTimeout = setLongTimeout(() => stop('timeout'), options.timeoutSecs * 1000);
  const onAbort = (): void => stop('interrupt');
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let released = false;
  return {
    get stoppedFor() {
      return stoppedFor;
    },
    release() {
      if (released) return;
      released = true;
      cancelTimeout();
      stopDraining();
      options.signal?.removeEventListener('abort', onAbort);
      forgetGroup();
    },
  };
}

/** Whether a process with this pid exists (a lock's holder, say). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is just not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether any process of a group still runs. A group of zombies (killed, not yet
 * reaped by whoever inherited them) has nothing running: on Linux, /proc tells.
 */
export function isGroupAlive(pgid: number): boolean {
  if (process.platform === 'win32') return isProcessAlive(pgid);
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return true; // no /proc: the signal's word is all there is
  }
  return names.some((name) => {
    if (!/^\d+$/.test(name)) return false;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      // `pid (command) state ppid pgrp …`: the command may hold spaces and parentheses.
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(group) === pgid && state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  });
}
