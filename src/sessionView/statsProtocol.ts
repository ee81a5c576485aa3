import { sessionStatsSchema, sessionSummarySchema } from '../sessionFormat/sessionSummaries.js';
import * as z from '../sessionFormat/zod.js';

/**
 * The editor's stats page's messages (what `codeloops sessions stats` says, drawn as
 * the web stats page draws it), checked on arrival at both ends like the session
 * viewer's (`viewerProtocol.ts`).
 */

const text = z.string().check(z.maxLength(2000));

/** The filters of the page, as the API's query and `sessions stats` take them (`FilterInput`); none is every session. */
export const statsFilterSchema = z.object({
  outcome: z.optional(z.array(text).check(z.maxLength(20))),
  after: z.optional(text),
  before: z.optional(text),
  search: z.optional(text),
  project: z.optional(text),
});
export type StatsFilter = z.infer<typeof statsFilterSchema>;

/** What the charts need of each session beyond the stats: when it started, how it ended, how many iterations. */
export const statsSessionSchema = z.pick(sessionSummarySchema, { timestamp: true, outcome: true, iterations: true });
export type StatsSession = z.infer<typeof statsSessionSchema>;

export const statsHostMessageSchema = z.discriminatedUnion('type', [
  /** The figures of the filtered sessions; sent first, after every change of the filter, and whenever the sessions change. */
  z.object({
    type: z.literal('stats'),
    stats: sessionStatsSchema,
    sessions: z.array(statsSessionSchema),
    /** The filter these figures are of. */
    filter: statsFilterSchema,
    /** Every project with a session, for the project menu. */
    projects: z.array(z.string()),
  }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type StatsHostMessage = z.infer<typeof statsHostMessageSchema>;

export const statsViewerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  /** The user changed a filter (or the page came back after a reload with the one it had). */
  z.object({ type: z.literal('filter'), filter: statsFilterSchema }),
]);
export type StatsViewerMessage = z.infer<typeof statsViewerMessageSchema>;

/** What the page keeps across reloads of its host. */
export const statsStateSchema = z.object({ filter: statsFilterSchema });
export type StatsState = z.infer<typeof statsStateSchema>;
