/**
 * Timers for delays that come from outside: a usage limit's reset, a config's time
 * budget or timeout. Node's `setTimeout` takes at most 2^31 − 1 ms (about 24.8 days);
 * a longer delay fires at once, with a `TimeoutOverflowWarning`. A loop told to wait
 * 60 days for a reset would run its agent again at once, over and over.
 */

/** The longest delay `setTimeout` keeps: 2^31 − 1 ms, about 24.8 days. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The clock and the timer a long wait runs on: the process's own, or a test's. */
export interface Timers {
  now(): number;
  setTimeout(fire: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const REAL_TIMERS: Timers = {
  now: () => Date.now(),
  setTimeout: (fire, ms) => setTimeout(fire, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** A delay `setTimeout` keeps as given: not a number or below 0 is 0, past its limit is its limit. */
export function timerDelay(ms: number): number {
  return Number.isNaN(ms) ? 0 : Math.min(Math.max(0, ms), MAX_TIMER_MS);
}

/**
 * Calls `fire` once `ms` have passed, however many that is: a delay past
 * `setTimeout`'s limit is waited out in steps, each from the clock's time then. A
 * delay that is not a number, or below 0, fires on the next turn; `Infinity`
 * never. `unref`: the wait does not keep the process alive. Returns what cancels it.
 */
export function setLongTimeout(fire: () => void, ms: number, options: { unref?: boolean; timers?: Timers } = {}): () => void {
  const timers = options.timers ?? REAL_TIMERS;
  const deadline = timers.now() + (Number.isNaN(ms) ? 0 : Math.max(0, ms));
  let handle: unknown;
  let cancelled = false;
  function schedule(left: number): void {
    handle = timers.setTimeout(step, timerDelay(left));
    if (options.unref) (handle as { unref?: () => void }).unref?.();
  }
  function step(): void {
    if (cancelled) return;
    const left = deadline - timers.now();
    if (left <= 0) fire();
    else schedule(left);
  }
  schedule(deadline - timers.now());
  return () => {
    cancelled = true;
    timers.clearTimeout(handle);
  };
}
