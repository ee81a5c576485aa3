import * as z from '../sessionFormat/zod.js';
import { runEventSchema } from '../sessionFormat/runEvents.js';
import { iterationLineSchema, sessionEndLineSchema, sessionStartLineSchema } from '../sessionFormat/sessionLines.js';
import { sessionViewSchema } from '../sessionView/sessionView.js';
import { outcomeSchema, sessionSummarySchema } from '../sessionFormat/sessionSummaries.js';

/**
 * What `codeloops ui` answers, route by route (documented in the README). The
 * summaries (`GET /api/sessions`), stats (`GET /api/stats`, `sessionStatsSchema`) and
 * session lines are the types `codeloops sessions … --json` prints; the view and the
 * iteration detail (`GET /api/sessions/:id/iterations/:n`, `iterationDetailSchema`) are
 * what the editor's viewer gets. Tests
 * and clients validate against these; the browser page imports only their types.
 */

/** `GET /api/sessions`: newest first. */
export const sessionListSchema = z.array(sessionSummarySchema);

/** `GET /api/sessions/:id`: `sessions show --json`, plus the lines that were skipped and why. */
export const sessionDocumentSchema = z.object({
  id: z.string(),
  start: sessionStartLineSchema,
  iterations: z.array(iterationLineSchema),
  end: z.nullable(sessionEndLineSchema),
  warnings: z.array(z.string()),
});
export type SessionDocument = z.infer<typeof sessionDocumentSchema>;

/** `GET /api/sessions/:id/view`: the viewer's model of the session and whether its loop is running now. */
export const sessionViewResponseSchema = z.object({ view: sessionViewSchema, running: z.boolean() });
export type SessionViewResponse = z.infer<typeof sessionViewResponseSchema>;

/** Every error: a status code and one sentence that says what to do. */
export const apiErrorSchema = z.object({ error: z.string() });
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;

// ── live updates: `GET /api/sessions/live` (Server-Sent Events) ───────────────────

/**
 * One Server-Sent Event. The SSE `event:` field is the `type`, and the `data:` line is
 * this whole object as JSON, so a client can listen by name or read every message.
 */
export const liveEventSchema = z.discriminatedUnion('type', [
  /** First on every connection: the sessions whose loop is running now. */
  z.object({ type: z.literal('hello'), running: z.array(z.string()) }),
  /** A new session file appeared. */
  z.object({ type: z.literal('session_created'), id: z.string(), summary: sessionSummarySchema, running: z.boolean() }),
  /** A session gained an iteration (one event per new iteration, in order). */
  z.object({ type: z.literal('session_updated'), id: z.string(), iteration: z.int().check(z.positive()), summary: sessionSummarySchema }),
  /** A session ended. */
  z.object({ type: z.literal('session_completed'), id: z.string(), outcome: outcomeSchema, summary: sessionSummarySchema }),
  /** A session file was deleted. */
  z.object({ type: z.literal('session_removed'), id: z.string() }),
  /**
   * What the running loop records in its sidecar as it goes. Every client gets the
   * phases (run_started, iteration_started, phase, iteration_finished, run_finished);
   * a client watching one session (`?session=<id>`) gets that session's agent
   * events, diff and critic decisions too, starting with the current iteration's.
   */
  z.object({ type: z.literal('run_event'), id: z.string(), event: runEventSchema }),
  /** The stream cannot go on (the sessions folder cannot be watched); it ends after this. */
  z.object({ type: z.literal('stream_error'), error: z.string() }),
]);
export type LiveEvent = z.infer<typeof liveEventSchema>;
export type LiveEventType = LiveEvent['type'];
