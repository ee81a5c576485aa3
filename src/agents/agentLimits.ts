/**
 * Why an agent run failed when the cause is outside the agent's work: its account's
 * usage limit, the API's rate limit, an overloaded or unreachable API, or a login
 * that does not work. Each adapter reads its CLI's own words for these (see
 * docs/agent-limits.md for what each CLI prints); the loop waits the first four out
 * (`outlastLimits.ts`) and stops on the last. Pure: every function here takes the
 * time it reasons from.
 */

import type { AgentWaitReason } from '../sessionFormat/runEvents.js';

/** The four the loop waits out (`AGENT_WAIT_REASONS`), and a login refused (`auth`), which it stops on. */
export type AgentLimitKind = AgentWaitReason | 'auth';

export interface AgentLimit {
  kind: AgentLimitKind;
  /** When the CLI said it may go on (a usage limit's reset, a retry delay), as epoch milliseconds; null when it did not say. */
  until: number | null;
  /** The CLI's own words, for the record and the error. */
  message: string;
}

/** One turn of an agent, as it is run again after a limit: what it is told, and the agent session it continues. */
export interface AgentTurn {
  prompt: string;
  resumeSessionId: string | null;
  /** For an agent that reports its whole session's cost (`AgentRunFoldOptions.costAlreadyCounted`). */
  costAlreadyCounted?: number;
}

/** A limit of this kind, with its time when known. */
export function agentLimit(kind: AgentLimitKind, message: string, until: number | null = null): AgentLimit {
  return { kind, until, message };
}

/** The kind an HTTP status from a model API stands for, or null for one that is none of them. */
export function limitKindOfStatus(status: number): AgentLimitKind | null {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limited';
  if (status === 529 || status === 503) return 'overloaded';
  if (status >= 500 && status <= 599) return 'outage';
  return null;
}

/** What a CLI says when the network, not the API, failed: the run never reached the model. */
export const NETWORK_FAILURE =
  /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|fetch failed|socket hang up|Connection error|error sending request)\b/i;

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * A wall-clock time as a CLI prints a reset, read into an instant: `6:23am`,
 * `6:23 AM`, `3pm`, with an optional date before it (`Nov 29, 12:31am`,
 * `Nov 27th, 2026 6:23 AM`) and an optional IANA zone in brackets after it
 * (`(Europe/Paris)`); without a zone, the local one (the agent ran with ours).
 * Without a date it is the next such time from `now` (a minute's grace: a reset
 * stated for this very minute is not tomorrow's). Null when it cannot be read.
 */
export function parseWallClock(text: string, now: number): number | null {
  const match =
    /(?:\b([A-Z][a-z]{2})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,? (?:(\d{4}),? )?)?\b(\d{1,2})(?::(\d{2}))? ?([ap])\.?m\.?(?: \(([A-Za-z_]+(?:\/[A-Za-z0-9_+-]+)*)\))?/i.exec(
      text,
    );
  if (!match) return null;
  const [, monthName, dayText, yearText, hourText, minuteText, half, zone] = match;
  const hour12 = Number(hourText);
  if (hour12 < 1 || hour12 > 12) return null;
  const hour = (hour12 % 12) + (half!.toLowerCase() === 'p' ? 12 : 0);
  const minute = minuteText === undefined ? 0 : Number(minuteText);
  if (zone !== undefined && !isKnownZone(zone)) return null;
  const today = wallClockOf(now, zone);
  if (monthName !== undefined) {
    const month = MONTHS.indexOf(monthName.toLowerCase());
    if (month < 0) return null;
    let at = instantOf({ year: yearText ? Number(yearText) : today.year, month, day: Number(dayText), hour, minute }, zone);
    // A date without a year that has passed is next year's (a reset across New Year).
    if (!yearText && at < now - 86_400_000) at = instantOf({ year: today.year + 1, month, day: Number(dayText), hour, minute }, zone);
    return at;
  }
  const at = instantOf({ ...today, hour, minute }, zone);
  return at >= now - 60_000 ? at : instantOf({ ...today, day: today.day + 1, hour, minute }, zone);
}

/**
 * A delay as `Please retry in 3.5s` / `retry in 250ms` / `try again in 20s` /
 * `Suggested retry after 60s.` states it, from `now`; null when none is stated.
 */
export function parseRetryDelay(text: string, now: number): number | null {
  const match = /\b(?:retry|try again) (?:in|after) ([0-9.]+) ?(ms|s|seconds?|m|minutes?)\b/i.exec(text);
  if (!match) return null;
  const amount = Number(match[1]);
  if (!Number.isFinite(amount)) return null;
  const unit = match[2]!.toLowerCase();
  const ms = unit === 'ms' ? amount : unit.startsWith('m') ? amount * 60_000 : amount * 1000;
  return now + Math.ceil(ms);
}

/** The first midnight after `now` on a clock in `zone`: when a per-day quota that resets there resets. */
export function nextMidnight(zone: string, now: number): number {
  const today = wallClockOf(now, zone);
  return instantOf({ ...today, day: today.day + 1, hour: 0, minute: 0 }, zone);
}

/** A `retry-after` header's value (seconds, or an HTTP date) from `now`; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | null {
  if (value === undefined) return null;
  const seconds = Number(value);
  if (value.trim() !== '' && Number.isFinite(seconds)) return now + Math.max(0, seconds) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : date;
}

interface WallClock {
  year: number;
  /** 0-based, as `Date` has it. */
  month: number;
  day: number;
  hour: number;
  minute: number;
}

function isKnownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The date and time on a clock in `zone` (the local zone when absent) at an instant. */
function wallClockOf(at: number, zone: string | undefined): WallClock {
  if (zone === undefined) {
    const date = new Date(at);
    return { year: date.getFullYear(), month: date.getMonth(), day: date.getDate(), hour: date.getHours(), minute: date.getMinutes() };
  }
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
  }).formatToParts(new Date(at));
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((each) => each.type === type)?.value);
  return { year: part('year'), month: part('month') - 1, day: part('day'), hour: part('hour'), minute: part('minute') };
}

/** The instant a clock in `zone` (the local zone when absent) shows this time; days past the month's end roll over. */
function instantOf(clock: WallClock, zone: string | undefined): number {
  if (zone === undefined) return new Date(clock.year, clock.month, clock.day, clock.hour, clock.minute).getTime();
  const asUtc = Date.UTC(clock.year, clock.month, clock.day, clock.hour, clock.minute);
  // The zone's offset at that moment, found from what its clock shows; twice, for a change of offset in between.
  let at = asUtc;
  for (let i = 0; i < 2; i++) {
    const shown = wallClockOf(at, zone);
    at = asUtc - (Date.UTC(shown.year, shown.month, shown.day, shown.hour, shown.minute) - at);
  }
  return at;
}
