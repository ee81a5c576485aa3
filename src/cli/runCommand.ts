import fs from 'node:fs';
import path from 'node:path';
import { checkDirectory } from '../checks/runCheck.js';
import { ConfigError, projectConfigSchema } from '../config/configFiles.js';
import { layerFromProjectFile, type ConfigLayer, type FlagOverrides } from '../config/runSettings.js';
import { describeEvent } from '../sessionFormat/eventWording.js';
import { endRunningLoopsNow, runLoop, type Continuation } from '../loop/loopRunner.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { failureReportOf } from '../sessionFormat/failures.js';
import { stampEvent, type RunEvent, type RunSummary } from '../sessionFormat/runEvents.js';
import { sessionsDir, sidecarDir } from '../sessionFormat/sessionFiles.js';
import { writeLines } from './terminal.js';
import { stdinReviewControl } from './reviewControl.js';
import { runFromTerminal, writeStderr } from './terminalRun.js';
import { prepareRunAsking } from './trustPrompt.js';
import { EXIT_CODES } from './exitCodes.js';
import { UsageError } from './usageError.js';

export interface RunOptions extends FlagOverrides {
  prompt?: string;
  promptFile?: string;
  workingDir?: string;
  jsonOutput?: boolean;
  dryRun?: boolean;
  events?: 'ndjson';
  quiet?: boolean;
  /** Settings from an editor, as JSON in the project file's shape: ranked between the global and the project config. */
  editorSettings?: string;
  /** Run what the project file adds without asking (`--trust`). */
  trust?: boolean;
  /** `--candidates claude,codex:gpt-5,…`: a candidate group instead of one loop (see `candidatesCommand.ts`). */
  candidates?: string;
  /** `--parallel N`: the candidates (or the configured actor) N times. */
  parallel?: number;
  /** `--jobs N`: candidates running at once (default: the number of cores). */
  jobs?: number;
  /** `--no-judge`: rank candidates by checks and outcome only. */
  judge?: boolean;
}

export const DEFAULT_PROMPT_FILE = 'prompt.md';

export function readPrompt(options: Pick<RunOptions, 'prompt' | 'promptFile'>, workingDir: string): string {
  if (options.prompt !== undefined) {
    if (options.prompt.trim() === '') throw new UsageError('The prompt given with -p is empty.');
    return options.prompt;
  }
  // A file named on the command line is where the user says, from where they stand;
  // the default prompt.md belongs to the project.
  const file = options.promptFile ? path.resolve(options.promptFile) : path.join(workingDir, DEFAULT_PROMPT_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!options.promptFile && code === 'ENOENT') {
      throw new UsageError(`No prompt: pass -p "<task>", or --prompt-file <file>, or write the task in ${file}.`);
    }
    const reason =
      code === 'ENOENT' ? 'it does not exist' : code === 'EISDIR' ? 'it is a folder' : code === 'EACCES' ? 'permission denied' : (error as Error).message;
    throw new UsageError(`Cannot read the prompt file ${file}: ${reason}.`);
  }
  if (text.trim() === '') throw new UsageError(`The prompt file ${file} is empty.`);
  return text.replace(/^\uFEFF/, '');
}

/**
 * `codeloops run`: checks everything first, then runs the loop, printing progress
 * on stderr and, with --json-output, one JSON object on stdout (or, with
 * --events ndjson, every run event as a JSON line on stdout).
 */
export async function runCommand(options: RunOptions): Promise<number> {
  if (options.jsonOutput && options.events) throw new UsageError('--json-output and --events cannot be used together.');
  if (options.candidates !== undefined || options.parallel !== undefined) {
    if (options.review)
      throw new UsageError('--review pauses one loop for you; candidates run side by side unattended. Review them in "codeloops candidates", then apply one.');
    return (await import('./candidatesCommand.js')).runCandidatesCommand(options);
  }
  if (options.jobs !== undefined || options.judge === false) throw new UsageError('--jobs and --no-judge go with --candidates or --parallel.');
  const workingDir = path.resolve(options.workingDir ?? process.cwd());
  let prompt: string;
  let prepared: PreparedRun;
  try {
    prompt = readPrompt(options, workingDir);
    const userLayers = options.editorSettings ? [editorSettingsLayer(options.editorSettings)] : [];
    prepared = await prepareRunAsking({ workingDir, flags: options, userLayers, trust: options.trust }, !options.jsonOutput && !options.events);
  } catch (error) {
    reportRefusal(options, error);
    throw error;
  }

  if (options.dryRun) {
    const plan = {
      working_dir: prepared.workingDir,
      repository: prepared.repository.root,
      prompt,
      max_iterations: prepared.settings.maxIterations,
      actor: describeRole(prepared.actor.launch, prepared.actor.model),
      critic: describeRole(prepared.critic.launch, prepared.critic.model),
      checks: prepared.settings.checks.map((check) => ({
        name: check.name,
        run: check.run,
        required: check.required,
        timeout_secs: check.timeoutSecs,
        working_dir: checkDirectory(check, { root: prepared.repository.root, workingDir: prepared.workingDir }),
      })),
      max_cost_usd: prepared.settings.budget.maxCostUsd,
      max_tokens: prepared.settings.budget.maxTokens,
      max_duration_secs: prepared.settings.budget.maxDurationSecs,
      stall: { unchanged_iterations: prepared.settings.stall.unchangedIterations, action: prepared.settings.stall.action },
      review: prepared.settings.review,
      sessions_dir: sessionsDir(),
      config_files: prepared.settings.sources,
    };
    const budget = [
      plan.max_cost_usd === null ? null : `$${plan.max_cost_usd}`,
      plan.max_tokens === null ? null : `${plan.max_tokens.toLocaleString('en-US')} tokens`,
      plan.max_duration_secs === null ? null : `${plan.max_duration_secs} s`,
    ].filter(Boolean);
    if (options.jsonOutput) process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
    else {
      process.stderr.write(
        `Dry run: nothing was started.\n` +
          `  repository   ${plan.repository}\n` +
          `  actor        ${plan.actor.agent}${plan.actor.model ? ` (${plan.actor.model})` : ''}: ${plan.actor.program} (timeout ${plan.actor.timeout_secs}s)\n` +
          `  critic       ${plan.critic.agent}${plan.critic.model ? ` (${plan.critic.model})` : ''}: ${plan.critic.program} (timeout ${plan.critic.timeout_secs}s)\n` +
          `  iterations   ${plan.max_iterations ?? 'no limit'}\n` +
          `  checks       ${plan.checks.length > 0 ? plan.checks.map((check) => `${check.name} (${check.required ? 'required' : 'advisory'}): ${check.run} in ${check.working_dir}`).join('; ') : 'none'}\n` +
          `  budget       ${budget.length > 0 ? budget.join(', ') : 'none'}\n` +
          `  stall        ${plan.stall.unchanged_iterations === 0 ? 'off' : `${plan.stall.action} after ${plan.stall.unchanged_iterations} iterations without progress`}\n` +
          `  review       ${plan.review === 'pause' ? 'pause after each iteration that goes on, for your review' : 'off'}\n` +
          `  sessions in  ${plan.sessions_dir}\n` +
          `  config from  ${plan.config_files.length > 0 ? plan.config_files.join(', ') : 'built-in defaults'}\n`,
      );
    }
    return 0;
  }

  return driveLoop(options, { prompt, prepared });
}

/**
 * Runs a loop from the terminal (`runFromTerminal`: Ctrl+C interrupts it, a second
 * one quits at once); progress goes to stderr, and to stdout either one JSON object
 * (--json-output) or every run event (--events ndjson). Shared by `run` and `resume`.
 */
export async function driveLoop(
  options: Pick<RunOptions, 'jsonOutput' | 'events' | 'quiet'>,
  run: { prompt: string; prepared: PreparedRun; continuation?: Continuation },
): Promise<number> {
  const terminal = { events: options.events, stopping: 'stopping the agent and ending the session', endNow: endRunningLoopsNow };
  let stdoutOpen = () => true;
  let sessionId: string | undefined;
  const review =
    run.prepared.settings.review === 'pause'
      ? stdinReviewControl({ json: options.events === 'ndjson', sessionId: () => sessionId, say: writeStderr })
      : undefined;
  let summary: RunSummary;
  try {
    summary = await runFromTerminal(terminal, ({ signal, stdoutOpen: isOpen }) => {
      stdoutOpen = isOpen;
      const onEvent = (event: RunEvent): void => {
        if (event.type === 'run_started') sessionId = event.session_id;
        if (options.events === 'ndjson') {
          if (isOpen()) process.stdout.write(JSON.stringify(event) + '\n');
          return;
        }
        if (!options.quiet) writeLines(process.stderr, describeEvent(event, { showAgentText: true }));
      };
      return runLoop({
        prompt: run.prompt,
        workingDir: run.prepared.workingDir,
        repository: run.prepared.repository,
        actor: run.prepared.actor,
        critic: run.prepared.critic,
        maxIterations: run.prepared.settings.maxIterations,
        checks: run.prepared.settings.checks,
        budget: run.prepared.settings.budget,
        stall: run.prepared.settings.stall,
        prices: run.prepared.settings.prices,
        sessionsDirectory: sessionsDir(),
        sidecarDirectory: (sessionId) => sidecarDir(sessionId),
        signal,
        onEvent,
        continuation: run.continuation,
        waitForReview: review?.wait,
      });
    });
  } catch (error) {
    // Only failures before the session exists reach here (the repository is busy, the sessions folder cannot be written).
    reportRefusal(options, error);
    throw error;
  } finally {
    review?.close();
  }
  if (options.jsonOutput && stdoutOpen()) process.stdout.write(JSON.stringify(summary) + '\n');
  return EXIT_CODES[summary.status];
}

/** `--editor-settings`: the extension's settings, validated like a project file. */
export function editorSettingsLayer(json: string): ConfigLayer {
  let data: unknown;
  try {
    data = JSON.parse(json);
  } catch {
    throw new UsageError('--editor-settings is not valid JSON.');
  }
  const source = 'editor settings';
  const parsed = projectConfigSchema.safeParse(data);
  if (!parsed.success) throw new ConfigError(source, parsed.error.issues.map((issue) => `"${issue.path.join('.')}": ${issue.message}`).join('; '));
  return layerFromProjectFile(parsed.data, source);
}

/**
 * A run that could not start, told to whoever reads stdout: the one --json-output
 * object (no session was written), or a `run_refused` event on the --events stream.
 * The error itself goes on to be printed on stderr with what to do.
 */
export function reportRefusal(options: Pick<RunOptions, 'jsonOutput' | 'events'>, error: unknown): void {
  const refusal = failureReportOf(error);
  if (options.jsonOutput) {
    const summary = {
      status: 'failed',
      iterations: 0,
      summary: null,
      confidence: null,
      error: refusal.message,
      error_code: refusal.code,
      error_details: refusal.details,
      total_duration_secs: 0,
      session_id: null,
      session_file: null,
    };
    process.stdout.write(JSON.stringify(summary) + '\n');
  } else if (options.events === 'ndjson') {
    process.stdout.write(JSON.stringify(stampEvent({ type: 'run_refused', ...refusal, details: { ...refusal.details } })) + '\n');
  }
}

export function describeRole(
  launch: { adapter: { displayName: string }; program: { program: string; leadingArgs: string[] }; timeoutSecs: number },
  model: string | null,
) {
  return {
    agent: launch.adapter.displayName,
    model,
    program: [launch.program.program, ...launch.program.leadingArgs].join(' '),
    timeout_secs: launch.timeoutSecs,
  };
}
