import { forecastSchema } from './forecast.js';
import * as z from './zod.js';

/** What `run --dry-run --json-output` prints: what a run would do, checked and resolved, with nothing started. */

/** An agent as a plan shows it: which, its model, the program that runs it, its timeout. */
const plannedAgentSchema = z.object({ agent: z.string(), model: z.nullable(z.string()), program: z.string(), timeout_secs: z.number() });
export type PlannedAgent = z.infer<typeof plannedAgentSchema>;

const planOpeningShape = { working_dir: z.string(), repository: z.string(), prompt: z.string() };

/** `run --dry-run --json-output`: what one loop would do; nothing is started. */
export const runPlanSchema = z.object({
  ...planOpeningShape,
  max_iterations: z.nullable(z.int()),
  actor: plannedAgentSchema,
  critic: plannedAgentSchema,
  checks: z.array(
    z.object({
      name: z.string(),
      run: z.string(),
      required: z.boolean(),
      timeout_secs: z.nullable(z.number()),
      working_dir: z.string(),
      /** `each` iteration, or at `done` only. */
      when: z.string(),
      hidden: z.boolean(),
      isolated: z.boolean(),
    }),
  ),
  max_cost_usd: z.nullable(z.number()),
  max_tokens: z.nullable(z.number()),
  max_duration_secs: z.nullable(z.number()),
  forecast: forecastSchema,
  suggested_max_cost_usd: z.nullable(z.number()),
  stall: z.object({ unchanged_iterations: z.int(), action: z.string() }),
  review: z.string(),
  verify: z.nullable(z.object({ protected: z.array(z.string()), allow_test_changes: z.boolean(), require_evidence: z.boolean() })),
  sessions_dir: z.string(),
  config_files: z.array(z.string()),
});
export type RunPlan = z.infer<typeof runPlanSchema>;

/** `run --candidates … --dry-run --json-output`: what a candidate group would do. */
export const groupPlanSchema = z.object({
  ...planOpeningShape,
  candidates: z.array(z.object({ label: z.string(), actor: plannedAgentSchema })),
  critic: plannedAgentSchema,
  jobs: z.int(),
  judge: z.boolean(),
  worktrees_dir: z.string(),
  copy: z.array(z.string()),
  setup: z.nullable(z.string()),
  max_iterations: z.nullable(z.int()),
  checks: z.array(z.object({ name: z.string(), run: z.string(), required: z.boolean() })),
});
export type GroupPlan = z.infer<typeof groupPlanSchema>;
