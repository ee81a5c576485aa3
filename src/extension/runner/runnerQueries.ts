import { runPlanSchema, type RunPlan } from '../../sessionFormat/runPlans.js';
import { doctorReportSchema, type AgentProblem, type DoctorReport } from '../../sessionFormat/doctorReport.js';
import { forecastSchema, type Forecast } from '../../sessionFormat/forecast.js';
import { overrideArgs, type RunOverrides } from './loopProcess.js';
import { QUESTION_TIMEOUT_MS, type RunnerAnswer, type RunnerCall, type RunnerClient } from './runnerClient.js';

/**
 * What the editor asks the runner before or after a run, each in a folder as a run
 * there would go (the same config, the editor's settings included). What they answer
 * is extra, never in the way: a question the runner could not answer is undefined.
 */

/** `codeloops forecast --json`: what a run would take, for the actor and critic the runner resolves itself. */
export async function forecastIn(runner: RunnerClient, call: RunnerCall): Promise<Forecast | undefined> {
  const answered = await runner.ask(forecastSchema, ['forecast', '--json', '--working-dir', call.workingDir], { answerWithinMs: QUESTION_TIMEOUT_MS, ...call });
  return answered.ok ? answered.answer : undefined;
}

/** `codeloops doctor --json`: what the editor asks when a run was refused or failed for an agent's sake. */
export async function doctorIn(runner: RunnerClient, call: RunnerCall): Promise<DoctorReport | undefined> {
  const answered = await runner.ask(doctorReportSchema, ['doctor', '--json', '--working-dir', call.workingDir], {
    answerWithinMs: QUESTION_TIMEOUT_MS,
    ...call,
  });
  return answered.ok ? answered.answer : undefined;
}

/** The first problem that would stop a run, preferring the agent a failure named. */
export function blockingProblem(report: DoctorReport, agent?: unknown): AgentProblem | undefined {
  const ranked = [
    ...report.problems,
    ...report.agents.filter((check) => check.agent === agent).flatMap((check) => check.problems),
    ...report.agents.flatMap((check) => check.problems),
  ];
  return ranked.find((problem) => problem.severity === 'error');
}

/** `codeloops run --dry-run --json-output`, with the run's own choices: the plan, or why the run would not start. Runs nothing. */
export function planIn(runner: RunnerClient, call: RunnerCall, task: string, overrides: RunOverrides = {}): Promise<RunnerAnswer<RunPlan>> {
  const args = ['run', '--dry-run', '--json-output', '--working-dir', call.workingDir, `--prompt=${task}`, ...overrideArgs(overrides)];
  return runner.ask(runPlanSchema, args, { answerWithinMs: QUESTION_TIMEOUT_MS, ...call, runsProjectPrograms: true });
}
