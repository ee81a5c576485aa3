import { CodeloopsError } from '../sessionFormat/failures.js';
import { OUTCOMES, type Outcome } from '../sessionFormat/sessionLines.js';
import type { SessionSummary } from '../sessionFormat/sessionSummaries.js';

export interface SessionFilter {
  /** Any of these outcomes (a session that has not ended has none, and never matches). */
  outcomes?: readonly Outcome[];
  after?: Date;
  before?: Date;
  /** Case-insensitive substring of the whole prompt. */
  search?: string;
  project?: string;
  /** The actor or the critic, as `run` names it (`claude`) or as the session records it (`Claude Code`), in any case. */
  actor?: string;
  critic?: string;
}

export class InvalidFilterError extends CodeloopsError {
  override name = 'InvalidFilterError';
  constructor(message: string) {
    super('usage', message);
  }
}

/**
 * Dates as users type them: `2025-01-27` (start of that day, UTC) or a full ISO
 * 8601 datetime. `--before 2025-01-27` means before the end of that day.
 */
export function parseFilterDate(value: string, bound: 'after' | 'before', namePrefix = '--'): Date {
  const trimmed = value.trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(trimmed)) {
    const day = new Date(`${trimmed}T00:00:00Z`);
    if (!Number.isNaN(day.getTime())) {
      return bound === 'before' ? new Date(day.getTime() + 24 * 3600 * 1000 - 1) : day;
    }
  }
  const parsed = /^\d{4}-\d{2}-\d{2}T/.test(trimmed) ? new Date(trimmed) : new Date(Number.NaN);
  if (Number.isNaN(parsed.getTime())) {
    throw new InvalidFilterError(`${namePrefix}${bound} "${value}" is not a date: use YYYY-MM-DD or an ISO 8601 datetime.`);
  }
  return parsed;
}

/** A filter as people type it: on the command line (`--outcome`, …) or in an API query. */
export interface FilterInput {
  /** Outcomes, each possibly a comma-separated list. */
  outcome?: readonly string[];
  after?: string;
  before?: string;
  search?: string;
  project?: string;
  actor?: string;
  critic?: string;
}

/**
 * Checks and converts what was typed. `namePrefix` is how errors name the option:
 * `--` for flags, nothing for query parameters.
 */
export function parseFilterInput(input: FilterInput, namePrefix = '--'): SessionFilter {
  const outcomes = (input.outcome ?? [])
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter(Boolean);
  for (const outcome of outcomes) {
    if (!(OUTCOMES as readonly string[]).includes(outcome)) {
      throw new InvalidFilterError(`${namePrefix}outcome ${outcome} is not an outcome (one of: ${OUTCOMES.join(', ')}).`);
    }
  }
  return {
    outcomes: outcomes as Outcome[],
    after: input.after ? parseFilterDate(input.after, 'after', namePrefix) : undefined,
    before: input.before ? parseFilterDate(input.before, 'before', namePrefix) : undefined,
    search: input.search,
    project: input.project,
    actor: input.actor,
    critic: input.critic,
  };
}

/** True when a session that started at `startedAt` can pass the date bounds. */
export function matchesDates(filter: SessionFilter, startedAt: Date): boolean {
  if (filter.after && startedAt < filter.after) return false;
  if (filter.before && startedAt > filter.before) return false;
  return true;
}

/** A filter that lets every session through: listing need not look at any. */
export function isEmptyFilter(filter: SessionFilter): boolean {
  return !filter.outcomes?.length && !filter.after && !filter.before && !filter.search && !filter.project && !filter.actor && !filter.critic;
}

/** `fullPrompt` is asked for only when the filter searches the prompt. */
export function matchesFilter(filter: SessionFilter, summary: SessionSummary, fullPrompt: () => string): boolean {
  if (filter.outcomes && filter.outcomes.length > 0) {
    if (summary.outcome === null || !filter.outcomes.includes(summary.outcome)) return false;
  }
  if (!matchesDates(filter, new Date(summary.timestamp))) return false;
  if (filter.search && !fullPrompt().toLowerCase().includes(filter.search.toLowerCase())) return false;
  if (filter.project && summary.project !== filter.project) return false;
  if (filter.actor && !isAgent(summary.actor_agent, filter.actor)) return false;
  if (filter.critic && !isAgent(summary.critic_agent, filter.critic)) return false;
  return true;
}

/**
 * Whether a recorded agent (its display name: `Claude Code`, `Gemini CLI`, `Codex`) is
 * the one asked for, by that name or by its kind as `run` takes it (`claude`): each
 * display name's first word is its kind (a unit test holds every agent to it).
 */
function isAgent(recorded: string, wanted: string): boolean {
  const name = recorded.trim().toLowerCase();
  const asked = wanted.trim().toLowerCase();
  return name === asked || name.split(/\s+/)[0] === asked;
}
