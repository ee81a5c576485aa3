import { VERIFICATIONS } from './verification.js';
import { CRITIC_DECISIONS, OUTCOMES } from './sessionLines.js';
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

/**
 * What stats need of one session beyond its summary, from its lines alone: computed
 * when the session is indexed (`sessions-index.json`), so that stats over thousands
 * of sessions read no session file. Counts are of this session's own iteration lines.
 */
export const sessionFiguresSchema = z.object({
  /** Its `session_start`'s `resumed_from`: the session it carries on, or null. */
  resumed_from: z.nullable(z.string()),
  /** Iterations recorded DONE, CONTINUE and ERROR. */
  done: z.int(),
  continued: z.int(),
  errors: z.int(),
  /** Iterations whose critic answered DONE, whether or not the gate let it stand (`critic_verdict`). */
  critic_done: z.int(),
  /** Of those, the ones the gate refused (recorded CONTINUE). */
  done_refused: z.int(),
  /** Characters (UTF-16 code units) of the feedback of CONTINUE and ERROR iterations. */
  feedback_chars: z.int(),
  /** CONTINUE or ERROR iterations whose next iteration was recorded DONE. */
  improvements: z.int(),
  /** The first and last iterations' recorded decisions: a task's improvements across a resume join them. */
  first_decision: z.nullable(z.enum(CRITIC_DECISIONS)),
  last_decision: z.nullable(z.enum(CRITIC_DECISIONS)),
  /** Its `session_end`'s `total_tokens` (a resumed session counts those of the sessions it carries on too), or null. */
  total_tokens: z.nullable(z.number()),
  /** Its `session_start`'s models (null: the agent's own default): a forecast compares a run with tasks of the same models. */
  actor_model: z.nullable(z.string()),
  critic_model: z.nullable(z.string()),
  /** Its success's `verified_by.start_tests.passed`: the start's tests its DONE rested on; null when no oracle judged it. */
  start_tests_passed: z.nullable(z.int()),
});
export type SessionFigures = z.infer<typeof sessionFiguresSchema>;

/**
 * The original codeloops' agentic metrics and ours, counted per task: sessions linked
 * by `resumed_from` are one task, with the iterations of all, dated by its first
 * session, its outcome its last session's. A rate whose denominator is 0 is null.
 */
export const taskFiguresSchema = z.object({
  total_tasks: z.int(),
  /** Tasks that ended `success` / tasks. */
  task_success_rate: z.nullable(z.number()),
  /** Successful tasks done in one iteration / successful tasks. */
  first_try_success_rate: z.nullable(z.number()),
  avg_iterations_to_success: z.nullable(z.number()),
  /** Of successful tasks: the sum of their sessions' `duration_secs`. */
  avg_cycle_time_secs: z.nullable(z.number()),
  /** Tasks that ended failed, interrupted or at the iteration limit / tasks. */
  waste_rate: z.nullable(z.number()),
  total_iterations: z.int(),
  /** Iterations recorded DONE / iterations (a DONE the gate refused is recorded CONTINUE). */
  critic_approval_rate: z.nullable(z.number()),
  /** Characters of feedback of CONTINUE and ERROR iterations / those iterations. */
  avg_feedback_length: z.nullable(z.number()),
  /** Rejections (CONTINUE or ERROR) whose next iteration of the task was recorded DONE / rejections. */
  improvement_rate: z.nullable(z.number()),
  /** Successful tasks whose last session's `verification` is `verified` / successful tasks. */
  verified_success_rate: z.nullable(z.number()),
  /** Successful tasks whose last session's DONE rested on the start's tests passing on the final code (the oracle) / successful tasks. */
  tests_verified_success_rate: z.nullable(z.number()),
  /** Iterations whose DONE the gate refused / iterations the critic answered DONE. */
  done_refused_rate: z.nullable(z.number()),
  /** What the tasks cost, where their sessions recorded it; null when none did. */
  total_cost_usd: z.nullable(z.number()),
  /** `total_cost_usd` / successful tasks. */
  cost_per_success_usd: z.nullable(z.number()),
  /** All tokens the tasks' agents used (input, output and cache, as `session_end` counts them). */
  total_tokens: z.number(),
});
export type TaskFigures = z.infer<typeof taskFiguresSchema>;

export const agentPairStatsSchema = z.extend(taskFiguresSchema, { actor_agent: z.string(), critic_agent: z.string() });
export type AgentPairStats = z.infer<typeof agentPairStatsSchema>;

export const sessionStatsSchema = z.object({
  /** Counted per session, as the original's. */
  total_sessions: z.int(),
  success_rate: z.number(),
  avg_iterations: z.number(),
  avg_duration_secs: z.number(),
  sessions_over_time: z.array(dayCountSchema),
  by_project: z.array(projectStatsSchema),
  ...taskFiguresSchema.shape,
  /** The task figures per actor and critic pair (as their sessions name them), most tasks first. */
  by_agents: z.array(agentPairStatsSchema),
});
export type SessionStats = z.infer<typeof sessionStatsSchema>;
export type DayCount = z.infer<typeof dayCountSchema>;
export type ProjectStats = z.infer<typeof projectStatsSchema>;
