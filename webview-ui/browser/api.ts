import type { SessionViewResponse } from '../../src/server/apiPayloads.js';
import type { IterationDetail } from '../../src/sessionView/sessionView.js';
import type { SessionStats, SessionSummary } from '../../src/sessionFormat/sessionSummaries.js';

/**
 * The browser page's calls to its server (`codeloops ui`). Same origin only; the
 * answers are the server's documented payloads, rendered as text whatever they hold.
 */

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await fetch(path, { signal, headers: { Accept: 'application/json' } });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const message =
      typeof body === 'object' && body !== null && typeof (body as { error?: unknown }).error === 'string'
        ? (body as { error: string }).error
        : `HTTP ${response.status}`;
    throw new ApiError(response.status, message);
  }
  return body as T;
}

/** Where a session's things are, with the id encoded (the server checks it again). */
export const sessionPath = (id: string): string => `/api/sessions/${encodeURIComponent(id)}`;

export function fetchSessions(filter: URLSearchParams, signal?: AbortSignal): Promise<SessionSummary[]> {
  const query = filter.toString();
  return getJson(`/api/sessions${query ? `?${query}` : ''}`, signal);
}

export function fetchStats(filter: URLSearchParams, signal?: AbortSignal): Promise<SessionStats> {
  const query = filter.toString();
  return getJson(`/api/stats${query ? `?${query}` : ''}`, signal);
}

export function fetchSessionView(id: string): Promise<SessionViewResponse> {
  return getJson(`${sessionPath(id)}/view`);
}

export function fetchIterationDetail(id: string, iteration: number): Promise<IterationDetail> {
  return getJson(`${sessionPath(id)}/iterations/${iteration}`);
}
