import path from 'node:path';
import type { AgentProblem, AgentProblemCode, DoctorReport } from '../../sessionFormat/doctorReport.js';
import type { FailureCode } from '../../sessionFormat/failures.js';
import type { RunSummary } from '../../sessionFormat/runEvents.js';
import type { EditorCommands, EditorWindow, FolderRef, RunLog } from '../editorPorts.js';
import { COMMANDS, SETTINGS_SECTION } from '../ids.js';
import type { LoopProcessEnd } from '../runner/loopProcess.js';
import { showErrorWithLog } from './loopLog.js';
import type { RunnerClient, RunnerFailure } from '../runner/runnerClient.js';
import { blockingProblem, doctorIn } from '../runner/runnerQueries.js';

/**
 * How a loop's end is told in the editor: a notification that opens the session, or
 * says what stopped it with the fix as a button when the editor can make it (decided
 * on failure codes and on what `codeloops doctor` finds, never on words).
 */

export interface LoopEndPorts<F extends FolderRef> {
  window: EditorWindow;
  commands: EditorCommands;
  log: RunLog;
  /** The runner, asked what `codeloops doctor` finds, as the loop ran. */
  runner: RunnerClient;
  editorSettingsJson: (folder: F) => string | undefined;
}

/** A fix the editor can make, as a button. */
interface Fix {
  action: string;
  run: () => Thenable<unknown>;
}

type EditorPorts = { window: EditorWindow; commands: EditorCommands };

/** Tells how a loop ended; a refusal in `handles` is left to the caller. Returns once told (not once answered). */
export async function reportLoopEnd<F extends FolderRef>(
  ports: LoopEndPorts<F>,
  folder: F,
  end: LoopProcessEnd,
  handles: readonly FailureCode[] = [],
): Promise<void> {
  if (end.kind === 'finished') return reportFinished(ports, folder, end.summary);
  if (end.kind === 'refused' && handles.includes(end.code)) return;
  ports.log.error(end.message);
  if (end.kind === 'crashed') void showErrorWithLog(ports, runnerCrashedText(end.message));
  else await reportRefusal(ports, folder, end);
}

/** A runner that died without saying how its loops ended. */
export function runnerCrashedText(message: string): string {
  return `The Codeloops runner stopped unexpectedly: ${message}`;
}

async function reportFinished<F extends FolderRef>(ports: LoopEndPorts<F>, folder: F, summary: RunSummary): Promise<void> {
  const { window, commands } = ports;
  const open = 'Open Session';
  const openIfChosen = (choice: string | undefined) => choice === open && commands.execute(COMMANDS.openViewer, summary.session_id);
  const after = `after ${summary.iterations} iteration${summary.iterations === 1 ? '' : 's'}`;
  if (summary.status === 'success')
    return void window.showInfo(`Codeloops finished in ${folder.name} ${after}: ${summary.summary ?? 'done'}`, open).then(openIfChosen);
  if (summary.status === 'interrupted') return void window.showWarning(`Codeloops loop in ${folder.name} interrupted ${after}.`, open).then(openIfChosen);
  if (summary.status === 'max_iterations_reached')
    return void window.showWarning(`Codeloops stopped at the iteration limit in ${folder.name} ${after}.`, open).then(openIfChosen);
  const failed = `Codeloops failed in ${folder.name} ${after}: ${summary.error ?? 'unknown error'}`;
  // An agent that failed may be one that cannot work here at all: ask the doctor what it finds.
  const found = summary.error_code && AGENT_FAILURES.has(summary.error_code) ? await askDoctor(ports, folder) : undefined;
  const fix = found && doctorFix(ports, found);
  void window.showError(found ? `${failed} ${problemText(found.problem)}` : failed, ...(fix ? [fix.action] : []), open).then((choice) => {
    if (fix && choice === fix.action) void fix.run();
    else openIfChosen(choice);
  });
}

async function reportRefusal<F extends FolderRef>(ports: LoopEndPorts<F>, folder: F, end: Extract<RunnerFailure, { kind: 'refused' }>): Promise<void> {
  const refusalFix = REFUSAL_FIXES[end.code];
  let message = `Codeloops could not start in ${folder.name}: ${end.message}`;
  let fix: Fix | undefined = refusalFix && { action: refusalFix.action, run: () => refusalFix.run(ports, end.details) };
  if (end.code === 'agent_missing') {
    // The same check as `codeloops doctor`: every agent of the run, and the fix for the first that cannot run.
    const found = await askDoctor(ports, folder, end.details.agent);
    if (found) {
      message = `Codeloops could not start in ${folder.name}: ${problemText(found.problem)}`;
      fix = doctorFix(ports, found);
    }
  }
  void showErrorWithLog(ports, message, ...(fix ? [fix.action] : [])).then((choice) => fix && choice === fix.action && fix.run());
}

interface DoctorFinding {
  problem: AgentProblem;
  report: DoctorReport;
}

/** What `codeloops doctor` finds wrong with the folder's agents (logged), or undefined. */
async function askDoctor<F extends FolderRef>(ports: LoopEndPorts<F>, folder: F, agent?: unknown): Promise<DoctorFinding | undefined> {
  const report = await doctorIn(ports.runner, { workingDir: folder.uri.fsPath, editorSettings: ports.editorSettingsJson(folder) });
  const problem = report && blockingProblem(report, agent);
  if (!report || !problem) return undefined;
  ports.log.error(`codeloops doctor: ${problem.message} Fix: ${problem.fix}`);
  return { problem, report };
}

/** The doctor's fix as a button, when the editor can make it here. */
function doctorFix(ports: EditorPorts, { problem, report }: DoctorFinding): Fix | undefined {
  const fix = PROBLEM_FIXES[problem.code];
  return fix && fix.available(report) ? { action: fix.action, run: () => fix.run(ports, report) } : undefined;
}

/** A doctor's problem in a sentence, with its fix. */
function problemText(problem: AgentProblem): string {
  return `${problem.message} Fix: ${problem.fix}.`;
}

/** Failures of a loop that may come from an agent that cannot work here: the doctor is asked. */
const AGENT_FAILURES: ReadonlySet<FailureCode> = new Set(['agent_not_started', 'actor_failed', 'critic_failed', 'agent_auth']);

const openSettings = (commands: EditorCommands, setting: string) => commands.execute('workbench.action.openSettings', setting);

/** What the editor offers for a refusal it can help with, by code: the fix, as a button. */
const REFUSAL_FIXES: Partial<
  Record<FailureCode, { action: string; run: (ports: EditorPorts, details: Readonly<Record<string, unknown>>) => Thenable<unknown> }>
> = {
  agent_missing: { action: 'Set Agent Path', run: ({ commands }) => openSettings(commands, `${SETTINGS_SECTION}.agentPaths`) },
  config_invalid: {
    action: 'Open Config File',
    run: ({ window, commands }, details) =>
      typeof details.file === 'string' && path.isAbsolute(details.file) ? window.openFile(details.file) : openSettings(commands, SETTINGS_SECTION),
  },
  not_a_repository: { action: 'Initialize Repository', run: ({ commands }) => commands.execute('git.init') },
  // The workspace is not trusted, so neither is its codeloops.toml: trusting the workspace trusts the file.
  project_untrusted: { action: 'Manage Workspace Trust', run: ({ commands }) => commands.execute('workbench.trust.manage') },
};

/** What the editor offers for a problem `codeloops doctor` found, by its code. */
const PROBLEM_FIXES: Partial<
  Record<
    AgentProblemCode,
    { action: string; available: (report: DoctorReport) => boolean; run: (ports: EditorPorts, report: DoctorReport) => Thenable<unknown> }
  >
> = {
  not_found: { action: 'Set Agent Path', available: () => true, run: ({ commands }) => openSettings(commands, `${SETTINGS_SECTION}.agentPaths`) },
  not_executable: { action: 'Set Agent Path', available: () => true, run: ({ commands }) => openSettings(commands, `${SETTINGS_SECTION}.agentPaths`) },
  // Logging in happens in the agent's own CLI, in a terminal.
  not_logged_in: { action: 'Open Terminal', available: () => true, run: ({ commands }) => commands.execute('workbench.action.terminal.new') },
  // IS_SANDBOX goes under [agents.claude.env] in the global config: open it when there is one.
  root_needs_sandbox: {
    action: 'Open Global Config',
    available: (report) => report.config_files.includes(report.global_config),
    run: ({ window }, report) => window.openFile(report.global_config),
  },
  config_invalid: { action: 'Open Settings', available: () => true, run: ({ commands }) => openSettings(commands, SETTINGS_SECTION) },
};
