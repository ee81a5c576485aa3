import { checkDirectory, timingOf } from '../checks/runCheck.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { budgetSuggestion, forecastLine, suggestedMaxCostUsd, type Forecast } from '../sessionFormat/forecast.js';
import { worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { sessionsDir } from '../sessionFormat/sessionFiles.js';
import type { GroupPlan, RunPlan } from '../sessionFormat/runPlans.js';
import { printAnswer } from './answers.js';

/**
 * `--dry-run`: what a run would do, as JSON (`--json-output`) or a few lines on
 * stderr, for one loop and for a candidate group. Nothing is started.
 */

type Role = PreparedRun['actor'];

/** An agent as the plan shows it: which, its model, the program that runs it, its timeout. */
function describeRole(role: Role) {
  return {
    agent: role.launch.adapter.displayName,
    model: role.model,
    program: [role.launch.program.program, ...role.launch.program.leadingArgs].join(' '),
    timeout_secs: role.launch.timeoutSecs,
  };
}

const agentText = (role: ReturnType<typeof describeRole>) => `${role.agent}${role.model ? ` (${role.model})` : ''}: ${role.program}`;

/** The rows of a plan as words on stderr. */
function printPlanRows(rows: readonly (readonly [label: string, value: string])[]): number {
  process.stderr.write(`Dry run: nothing was started.\n${rows.map(([label, value]) => `  ${label.padEnd(12)} ${value}\n`).join('')}`);
  return 0;
}

/** What every plan opens with. */
function planOf(prepared: PreparedRun, prompt: string) {
  return { working_dir: prepared.workingDir, repository: prepared.repository.root, prompt };
}

/**
 * One loop's plan: its agents, checks, budget, stall detection and review, where its
 * session and config come from, and what past tasks with its agents took (`forecast`),
 * with the budget that suggests when none is set.
 */
export function printRunPlan(options: { jsonOutput?: boolean }, prepared: PreparedRun, prompt: string, forecast: Forecast): number {
  const { settings } = prepared;
  const plan: RunPlan = {
    ...planOf(prepared, prompt),
    max_iterations: settings.maxIterations,
    actor: describeRole(prepared.actor),
    critic: describeRole(prepared.critic),
    checks: settings.checks.map((check) => ({
      name: check.name,
      run: check.run,
      required: check.required,
      timeout_secs: check.timeoutSecs,
      working_dir: checkDirectory(check, { root: prepared.repository.root, workingDir: prepared.workingDir }),
      when: timingOf(check),
      hidden: check.hidden === true,
      isolated: check.isolated === true,
    })),
    max_cost_usd: settings.budget.maxCostUsd,
    max_tokens: settings.budget.maxTokens,
    max_duration_secs: settings.budget.maxDurationSecs,
    forecast,
    suggested_max_cost_usd: settings.budget.maxCostUsd === null ? suggestedMaxCostUsd(forecast) : null,
    stall: { unchanged_iterations: settings.stall.unchangedIterations, action: settings.stall.action },
    review: settings.review,
    verify: settings.verify && {
      protected: [...settings.verify.protected],
      allow_test_changes: settings.verify.allowTestChanges,
      require_evidence: settings.verify.requireEvidence,
    },
    sessions_dir: sessionsDir(),
    config_files: settings.sources,
  };
  const budget = [
    plan.max_cost_usd === null ? null : `$${plan.max_cost_usd}`,
    plan.max_tokens === null ? null : `${plan.max_tokens.toLocaleString('en-US')} tokens`,
    plan.max_duration_secs === null ? null : `${plan.max_duration_secs} s`,
  ].filter(Boolean);
  const suggestion = budgetSuggestion(forecast, settings.budget.maxCostUsd);
  const checks = plan.checks.map((check) => {
    const traits = [
      check.required ? 'required' : 'advisory',
      check.when === 'done' ? 'at DONE only' : '',
      check.hidden ? 'hidden from the agents' : '',
      check.isolated ? 'in a clean worktree' : '',
    ];
    return `${check.name} (${traits.filter(Boolean).join(', ')}): ${check.run} in ${check.working_dir}`;
  });
  if (options.jsonOutput) return (printAnswer('run --dry-run', plan), 0);
  return printPlanRows([
    ['repository', plan.repository],
    ['actor', `${agentText(plan.actor)} (timeout ${plan.actor.timeout_secs}s)`],
    ['critic', `${agentText(plan.critic)} (timeout ${plan.critic.timeout_secs}s)`],
    ['iterations', `${plan.max_iterations ?? 'no limit'}`],
    ['checks', checks.length > 0 ? checks.join('; ') : 'none'],
    ['budget', budget.length > 0 ? budget.join(', ') : `none${suggestion ? `; suggested: ${suggestion}` : ''}`],
    ['forecast', forecastLine(forecast)],
    ['stall', plan.stall.unchanged_iterations === 0 ? 'off' : `${plan.stall.action} after ${plan.stall.unchanged_iterations} iterations without progress`],
    ['review', plan.review === 'pause' ? 'pause after each iteration that goes on, for your review' : 'off'],
    ['verify', verifyText(plan.verify)],
    ['sessions in', plan.sessions_dir],
    ['config from', plan.config_files.length > 0 ? plan.config_files.join(', ') : 'built-in defaults'],
  ]);
}

function verifyText(verify: { protected: readonly string[]; allow_test_changes: boolean; require_evidence: boolean } | null): string {
  if (!verify) return 'off: the actor may change tests and what the checks run (the checks still gate)';
  const extra = verify.protected.length > 0 ? ` and ${verify.protected.join(', ')}` : '';
  return `tests, CI, codeloops.toml and what the checks run are protected${extra}${verify.allow_test_changes ? '; removing or skipping tests allowed' : ''}${verify.require_evidence ? '; DONE needs evidence' : ''}`;
}

/** A candidate group's plan: each candidate's actor, the one critic, how many at once, the worktrees and their setup. */
export function printGroupPlan(
  options: { jsonOutput?: boolean },
  group: { base: PreparedRun; prompt: string; candidates: readonly { label: string; prepared: PreparedRun }[]; jobs: number; judge: boolean },
): number {
  const { base } = group;
  const plan: GroupPlan = {
    ...planOf(base, group.prompt),
    candidates: group.candidates.map(({ label, prepared }) => ({ label, actor: describeRole(prepared.actor) })),
    critic: describeRole(base.critic),
    jobs: group.jobs,
    judge: group.judge,
    worktrees_dir: worktreesDir(),
    copy: base.settings.worktree.copy,
    setup: base.settings.worktree.setup,
    max_iterations: base.settings.maxIterations,
    checks: base.settings.checks.map((check) => ({ name: check.name, run: check.run, required: check.required })),
  };
  if (options.jsonOutput) return (printAnswer('run --candidates --dry-run', plan), 0);
  return printPlanRows([
    ['repository', plan.repository],
    ...plan.candidates.map((candidate) => ['candidate', `${candidate.label}: ${candidate.actor.program}`] as const),
    ['critic', agentText(plan.critic)],
    ['at once', String(plan.jobs)],
    ['worktrees in', plan.worktrees_dir],
    ['copy', plan.copy.length > 0 ? plan.copy.join(', ') : 'nothing'],
    ['setup', plan.setup ?? 'none'],
    ['checks', plan.checks.length > 0 ? plan.checks.map((check) => check.name).join(', ') : 'none'],
  ]);
}
