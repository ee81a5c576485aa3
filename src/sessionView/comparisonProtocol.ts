import { groupComparisonSchema } from '../sessionFormat/candidateGroups.js';
import * as z from '../sessionFormat/zod.js';

/**
 * The comparison page's messages (a candidate group's candidates side by side),
 * checked on arrival at both ends like the session viewer's (`viewerProtocol.ts`).
 */

export const comparisonHostMessageSchema = z.discriminatedUnion('type', [
  /** The comparison, sent first and whenever it changes (a candidate moves on, the judge ranks, one is applied). */
  z.object({ type: z.literal('comparison'), comparison: groupComparisonSchema, capabilities: z.object({ apply: z.boolean() }) }),
  /** A candidate's whole change, in answer to `requestDiff`. */
  z.object({ type: z.literal('candidateDiff'), label: z.string(), diff: z.string(), truncated: z.boolean() }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type ComparisonHostMessage = z.infer<typeof comparisonHostMessageSchema>;

export const comparisonViewerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('requestDiff'), label: z.string() }),
  /** Apply This Candidate: the host asks first, as for a rollback. */
  z.object({ type: z.literal('apply'), label: z.string() }),
  z.object({ type: z.literal('openSession'), sessionId: z.string() }),
]);
export type ComparisonViewerMessage = z.infer<typeof comparisonViewerMessageSchema>;

/** What the page keeps across reloads of its host. */
export const comparisonStateSchema = z.object({ groupId: z.string() });
export type ComparisonState = z.infer<typeof comparisonStateSchema>;
