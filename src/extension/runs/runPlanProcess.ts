import { readCliJson, type CliJsonOptions } from './cliJsonProcess.js';
import { overrideArgs, type RunOverrides } from './loopProcess.js';

/** What a run would use, as `codeloops run --dry-run` resolves it: the agents and the guards. */
export interface RunPlan {
  actor: PlannedAgent;
  critic: PlannedAgent;
  /** null: no limit. */
  max_iterations: number | null;
  checks: { name: string; required: boolean }[];
  max_cost_usd: number | null;
  max_tokens: number | null;
  max_duration_secs: number | null;
  /** Iterations in a row without progress that stop the loop (0: never). */
  stall_after: number;
  review: string;
}

export interface PlannedAgent {
  agent: string;
  model: string | null;
}

/** Why the run would not start (`--json-output`'s failure): a missing agent, an untrusted `codeloops.toml`… */
export interface RunPlanRefusal {
  refused: string;
}

/**
 * `codeloops run --dry-run --json-output` in a folder, as a run there would go (the
 * editor's settings, the workspace's trust, the run's own choices): the plan, why it
 * would not start, or undefined when the runner could not say. Runs nothing.
 */
export function runPlan(
  options: CliJsonOptions & { trusted: boolean },
  task: string,
  overrides: RunOverrides = {},
): Promise<RunPlan | RunPlanRefusal | undefined> {
  const command = ['run', '--dry-run', '--json-output', `--prompt=${task}`, ...overrideArgs(overrides), ...(options.trusted ? ['--trust'] : [])];
  return readCliJson(options, command, planOf);
}

function planOf(json: unknown): RunPlan | RunPlanRefusal {
  const plan = json as Record<string, unknown>;
  if (plan.status === 'failed') return { refused: String(plan.error) };
  const agent = (role: unknown): PlannedAgent => {
    const { agent, model } = role as { agent: unknown; model: unknown };
    return { agent: String(agent), model: typeof model === 'string' ? model : null };
  };
  const numberOrNull = (value: unknown) => (typeof value === 'number' ? value : null);
  return {
    actor: agent(plan.actor),
    critic: agent(plan.critic),
    max_iterations: numberOrNull(plan.max_iterations),
    checks: (plan.checks as { name: string; required: boolean }[]).map(({ name, required }) => ({ name, required })),
    max_cost_usd: numberOrNull(plan.max_cost_usd),
    max_tokens: numberOrNull(plan.max_tokens),
    max_duration_secs: numberOrNull(plan.max_duration_secs),
    stall_after: (plan.stall as { unchanged_iterations: number }).unchanged_iterations,
    review: String(plan.review),
  };
}
