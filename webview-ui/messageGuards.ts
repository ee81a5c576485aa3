import type { HostMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';

/**
 * Light checks for what reaches the viewer. The host validates everything the
 * viewer sends it with zod (that is the untrusted direction); here a message only
 * has to be one of the host's kinds, and everything in it is rendered as text
 * anyway. Keeping zod out of the page keeps it small: it loads at every open.
 */

const HOST_MESSAGE_TYPES = new Set<HostMessage['type']>(['session', 'iterationDetail', 'live', 'error']);

export function isHostMessage(value: unknown): value is HostMessage {
  return typeof value === 'object' && value !== null && HOST_MESSAGE_TYPES.has((value as { type?: unknown }).type as HostMessage['type']);
}

export function isViewerState(value: unknown): value is ViewerState {
  if (typeof value !== 'object' || value === null) return false;
  const state = value as { sessionId?: unknown; expanded?: unknown };
  return typeof state.sessionId === 'string' && (state.expanded === undefined || (Array.isArray(state.expanded) && state.expanded.every((n) => Number.isInteger(n))));
}
