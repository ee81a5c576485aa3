import { REVIEW_ACTIONS } from '../sessionFormat/reviewRecords.js';
import { runEventSchema } from '../sessionFormat/runEvents.js';
import * as z from '../sessionFormat/zod.js';
import { iterationDetailSchema, sessionViewSchema } from './sessionView.js';

/**
 * The session viewer's messages, shared by both hosts (the editor's webview and the
 * browser page) and the viewer itself. Validated with these schemas on arrival at
 * both ends: the host checks what the page sends (the webview is an untrusted
 * boundary), the page checks what reaches it before showing anything.
 */

/** What the host can do for the viewer beyond sending data. */
export const hostCapabilitiesSchema = z.object({
  /** Open an iteration's changes in the editor's diff editor. */
  openDiff: z.boolean(),
  /** Carry on an interrupted or crashed session (`codeloops resume`). */
  resume: z._default(z.boolean(), false),
  /** Open a file of the session's repository at a line (a finding, a comment). */
  openLocation: z._default(z.boolean(), false),
  /** Tell a loop paused for review to go on or to stop. */
  reviewControl: z._default(z.boolean(), false),
  /** Accept a protected change the actor made, or a start test that fails on the final code, so that it no longer refuses DONE (the editor; `codeloops ui` is read-only). */
  acceptChange: z._default(z.boolean(), false),
});
export type HostCapabilities = z.infer<typeof hostCapabilitiesSchema>;

export const hostMessageSchema = z.discriminatedUnion('type', [
  /** The whole session (light: no outputs, no diffs); sent first and whenever it changes. */
  z.object({ type: z.literal('session'), view: sessionViewSchema, running: z.boolean(), capabilities: hostCapabilitiesSchema }),
  /** An iteration's outputs and diff, in answer to `requestIteration`. */
  z.object({ type: z.literal('iterationDetail'), detail: iterationDetailSchema }),
  /** A run event of the loop writing this session, while it runs. */
  z.object({ type: z.literal('live'), event: runEventSchema }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type HostMessage = z.infer<typeof hostMessageSchema>;

export const viewerMessageSchema = z.discriminatedUnion('type', [
  /** The viewer is listening: the host sends the session only after this. */
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('requestIteration'), iteration: z.int().check(z.positive()) }),
  /** Open the iteration's changes (all files, or one) in the diff editor. */
  z.object({ type: z.literal('openDiff'), iteration: z.int().check(z.positive()), path: z.optional(z.string()) }),
  /** Carry the session on (offered only when the host can). */
  z.object({ type: z.literal('resume') }),
  /** Open a file of the session's repository at a line (a path the session recorded; the host keeps it inside the repository). */
  z.object({ type: z.literal('openLocation'), file: z.string(), line: z.nullable(z.int().check(z.positive())) }),
  /** A loop paused for review: go on, or stop. */
  z.object({ type: z.literal('reviewControl'), action: z.enum(REVIEW_ACTIONS) }),
  /** Accept a standing weakening of a protected file, as the iteration recorded it (the host asks for the reason). */
  z.object({ type: z.literal('acceptChange'), iteration: z.int().check(z.positive()), file: z.string() }),
  /** Accept one of the start's tests that the oracle found failing on the final code, by its id (the host asks for the reason). */
  z.object({ type: z.literal('acceptTest'), test: z.string() }),
]);
export type ViewerMessage = z.infer<typeof viewerMessageSchema>;

/** What the viewer keeps across reloads of its host. */
export const viewerStateSchema = z.object({
  sessionId: z.string(),
  expanded: z._default(z.array(z.int()), []),
});
export type ViewerState = z.infer<typeof viewerStateSchema>;
