import { spawn } from 'node:child_process';
import { doctorReportSchema, type AgentProblem, type DoctorReport } from '../../sessionFormat/doctorReport.js';

export interface DoctorProcessOptions {
  /** The bundled runner, `dist/cli.js`, and the program that runs it. */
  cliPath: string;
  nodePath: string;
  workingDir: string;
  /** The editor's settings for the folder, as a run gets them. */
  editorSettings?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * `codeloops doctor --json` in a folder, as the runner would see it (the same config,
 * the editor's settings included): what the editor asks when a run was refused or
 * failed for an agent's sake. Undefined when the check itself could not run.
 */
export function runAgentDoctor(options: DoctorProcessOptions): Promise<DoctorReport | undefined> {
  const args = [options.cliPath, 'doctor', '--json', '--working-dir', options.workingDir];
  if (options.editorSettings) args.push('--editor-settings', options.editorSettings);
  return new Promise((resolve) => {
    const child = spawn(options.nodePath, args, {
      cwd: options.workingDir,
      env: { ...(options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
      windowsHide: true,
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', () => resolve(undefined));
    child.on('close', () => {
      try {
        resolve(doctorReportSchema.parse(JSON.parse(stdout)));
      } catch {
        resolve(undefined);
      }
    });
  });
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
