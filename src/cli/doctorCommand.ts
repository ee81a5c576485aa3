import path from 'node:path';
import type { AgentKind } from '../agents/agentKinds.js';
import { checkAgents } from '../loop/agentDoctor.js';
import type { AgentCheck, AgentProblem, DoctorReport } from '../sessionFormat/doctorReport.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { userLayersOf } from './runSetup.js';
import { colorEnabled, paint } from './terminal.js';
import { printAnswer } from './answers.js';

export interface DoctorOptions {
  workingDir?: string;
  agent?: AgentKind;
  actorAgent?: AgentKind;
  criticAgent?: AgentKind;
  json?: boolean;
  editorSettings?: string;
}

/** `codeloops doctor`'s exit code when it found a problem that would make a run fail or be refused. */
export const DOCTOR_PROBLEM_EXIT = 1;

/**
 * `codeloops doctor`: checks the agents a run here would use (both roles, the same
 * config a run reads) and says how to fix what is wrong. Exit 0 when a run could
 * start, 1 when something would stop it; warnings (an untested version) do not count.
 */
export async function doctorCommand(options: DoctorOptions): Promise<number> {
  const report = await checkAgents({
    workingDir: path.resolve(options.workingDir ?? process.cwd()),
    flags: { agent: options.agent, actorAgent: options.actorAgent, criticAgent: options.criticAgent },
    userLayers: userLayersOf(options),
  });
  if (options.json) printAnswer('doctor', report);
  else process.stdout.write(renderReport(report, colorEnabled(process.stdout)));
  return report.ok ? 0 : DOCTOR_PROBLEM_EXIT;
}

export function renderReport(report: DoctorReport, color: boolean): string {
  const clean = sanitizeForTerminal;
  const out: string[] = [
    paint(`Agents for ${clean(report.working_dir)}`, 'heading', color),
    `  config from ${report.config_files.length > 0 ? clean(report.config_files.join(', ')) : 'built-in defaults'}`,
    '',
  ];
  for (const problem of report.problems) out.push(...problemLines(problem, color), '');
  for (const agent of report.agents) out.push(...agentLines(agent, color), '');
  const all = [...report.problems, ...report.agents.flatMap((agent) => agent.problems)];
  const errors = all.filter((problem) => problem.severity === 'error').length;
  const warnings = all.length - errors;
  out.push(
    errors > 0
      ? paint(
          `${errors} problem${errors === 1 ? '' : 's'} would stop a run: fix ${errors === 1 ? 'it' : 'them'} and run "codeloops doctor" again.`,
          'error',
          color,
        )
      : paint(`Ready to run${warnings > 0 ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''}.`, 'success', color),
  );
  return out.join('\n') + '\n';
}

function agentLines(agent: AgentCheck, color: boolean): string[] {
  const clean = sanitizeForTerminal;
  const version = agent.version
    ? `${agent.version}${agent.tested ? ' (tested)' : agent.tested_versions.length > 0 ? ` (tested: ${agent.tested_versions.join(', ')})` : ' (no version tested)'}`
    : '';
  const facts = [agent.program ? clean(agent.program) : 'not found', version].filter(Boolean).join('  ');
  const ok = agent.problems.every((problem) => problem.severity !== 'error');
  return [
    `${paint(ok ? '✓' : '✗', ok ? 'success' : 'error', color)} ${agent.roles.join(' and ')}: ${paint(agent.display_name, 'heading', color)}  ${facts}`,
    ...agent.problems.flatMap((problem) => problemLines(problem, color).map((line) => `  ${line}`)),
  ];
}

function problemLines(problem: AgentProblem, color: boolean): string[] {
  const clean = sanitizeForTerminal;
  return [
    paint(`${problem.severity === 'error' ? 'problem' : 'warning'}: ${clean(problem.message)}`, problem.severity === 'error' ? 'error' : 'warning', color),
    `  fix: ${clean(problem.fix)}`,
  ];
}
