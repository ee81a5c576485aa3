import { doctorReportSchema, type AgentProblem, type DoctorReport } from '../../sessionFormat/doctorReport.js';
import { readCliJson, type CliJsonOptions } from './cliJsonProcess.js';

export type DoctorProcessOptions = CliJsonOptions;

/**
 * `codeloops doctor --json` in a folder, as the runner would see it (the same config,
 * the editor's settings included): what the editor asks when a run was refused or
 * failed for an agent's sake. Undefined when the check itself could not run.
 */
export function runAgentDoctor(options: DoctorProcessOptions): Promise<DoctorReport | undefined> {
  return readCliJson(options, ['doctor', '--json'], (json) => doctorReportSchema.parse(json));
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
