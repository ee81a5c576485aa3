import { VERIFICATIONS } from './verification.js';
import { OUTCOMES } from './sessionLines.js';
import * as z from './zod.js';

/**
 * What `sessions list --json`, `sessions stats --json` and the API return: the
 * original codeloops' `SessionSummary` and `SessionStats`, field for field.
 */

export const outcomeSchema = z.enum(OUTCOMES);

export const sessionSummarySchema = z.object({
  id: z.string(),
  timestamp: z.string(),
  prompt_preview: z.string(),
  working_dir: z.string(),
  project: z.string(),
  outcome: z.nullable(outcomeSchema),
  iterations: z.int().check(z.nonnegative()),
  duration_secs: z.nullable(z.number()),
  confidence: z.nullable(z.number()),
  actor_agent: z.string(),
  critic_agent: z.string(),
  /** What the agents cost, when the session ended and recorded it (an extra field of this runner). */
  total_cost_usd: z.nullable(z.number()),
  /** For a success: whether anything but the critic's word stood behind its DONE; null otherwise and in older records. */
  verification: z.nullable(z.enum(VERIFICATIONS)),
});
export type SessionSummary = z.infer<typeof sessionSummarySchema>;

export const dayCountSchema = z.object({ date: z.string(), count: z.int() });
export const projectStatsSchema = z.object({ project: z.string(), total: z.int(), success_rate: z.number() });

export const sessionStatsSchema = z.object({
  total_sessions: z.int(),
  success_rate: z.number(),
  avg_iterations: z.number(),
  avg_duration_secs: z.number(),
  sessions_over_time: z.array(dayCountSchema),
  by_project: z.array(projectStatsSchema),
});
export type SessionStats = z.infer<typeof sessionStatsSchema>;
export type DayCount = z.infer<typeof dayCountSchema>;
export type ProjectStats = z.infer<typeof projectStatsSchema>;
