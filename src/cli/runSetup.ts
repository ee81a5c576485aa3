import fs from 'node:fs';
import path from 'node:path';
import { ConfigError, projectConfigSchema } from '../config/configFiles.js';
import { layerFromProjectFile, type ConfigLayer, type FlagOverrides } from '../config/runSettings.js';
import type { PrepareOptions, PreparedRun } from '../loop/prepareRun.js';
import type { NotifyFailure } from '../notify/notify.js';
import { formatRefusedRun } from '../sessionFormat/cliAnswerReading.js';
import { failureOf, isCodeloopsError, type Failure } from '../sessionFormat/failures.js';
import { cliHint } from './failureHints.js';
import { stampEvent } from '../sessionFormat/runEvents.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { prepareRunAsking } from './trustPrompt.js';
import { UsageError } from './usageError.js';

/**
 * What every command that runs loops does before one starts (`run`, `run
 * --candidates`, `resume`): its output flags checked, the editor's settings read as
 * a config layer, the project file trusted (asking at the terminal when there is
 * one), and a refusal told to whoever reads stdout. Commands share it through this
 * module, never by importing each other.
 */

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
  /** `--candidates claude,codex:gpt-5,…`: a candidate group instead of one loop (see `candidateRunCommand.ts`). */
  candidates?: string;
  /** `--parallel N`: the candidates (or the configured actor) N times. */
  parallel?: number;
  /** `--jobs N`: candidates running at once (default: the number of cores). */
  jobs?: number;
  /** `--no-judge`: rank candidates by checks and outcome only. */
  judge?: boolean;
}

/** How a run reports on stdout: one JSON object (`--json-output`), every event (`--events ndjson`), or nothing but words on stderr. */
export type OutputFlags = Pick<RunOptions, 'jsonOutput' | 'events'>;

/** `codeloops run` runs one loop, or a candidate group with `--candidates` or `--parallel`; flags of the one refused with the other. */
export function runModeOf(options: RunOptions): 'single' | 'candidates' {
  checkOutputFlags(options);
  if (options.candidates !== undefined || options.parallel !== undefined) {
    if (options.review)
      throw new UsageError('--review pauses one loop for you; candidates run side by side unattended. Review them in "codeloops candidates", then apply one.');
    return 'candidates';
  }
  if (options.jobs !== undefined || options.judge === false) throw new UsageError('--jobs and --no-judge go with --candidates or --parallel.');
  return 'single';
}

export function checkOutputFlags(options: OutputFlags): void {
  if (options.jsonOutput && options.events) throw new UsageError('--json-output and --events cannot be used together.');
}

export const DEFAULT_PROMPT_FILE = 'prompt.md';

export function readPrompt(options: Pick<RunOptions, 'prompt' | 'promptFile'>, workingDir: string): string {
  if (options.prompt !== undefined) {
    if (options.prompt.trim() === '') throw new UsageError('The prompt given with -p is empty.');
    return textPrompt(options.prompt, 'The prompt given with -p');
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
  return textPrompt(text.replace(/^\uFEFF/, ''), `The prompt file ${file}`);
}

/** A prompt is text: a NUL byte (a binary file given by mistake) could reach no agent that takes the prompt as an argument. */
function textPrompt(prompt: string, what: string): string {
  if (prompt.includes('\0')) throw new UsageError(`${what} holds a NUL byte: a prompt is text.`);
  return prompt;
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

/** The config layers the command line adds between the global and the project config: the editor's settings, when given. */
export function userLayersOf(options: Pick<RunOptions, 'editorSettings'>): ConfigLayer[] {
  return options.editorSettings ? [editorSettingsLayer(options.editorSettings)] : [];
}

/** Prepares a run with the command line's layers and trust, asking to trust the project file where a person can answer. */
export type PrepareAsking = (options: Omit<PrepareOptions, 'userLayers' | 'trust'>) => Promise<PreparedRun>;

/**
 * Everything a command checks before its loops start, done by `prepare`; whatever it
 * throws is told on stdout as the run's refusal (`reportRefusal`), then thrown on to
 * be said on stderr with what to do.
 */
export async function prepareOrRefuse<T>(
  options: OutputFlags & Pick<RunOptions, 'editorSettings' | 'trust'>,
  prepare: (prepareAsking: PrepareAsking) => Promise<T>,
): Promise<T> {
  // Nobody reads a question when stdout is for a program.
  const interactive = !options.jsonOutput && !options.events;
  try {
    return await prepare((prepareOptions) => prepareRunAsking({ ...prepareOptions, userLayers: userLayersOf(options), trust: options.trust }, interactive));
  } catch (error) {
    reportRefusal(options, error);
    throw error;
  }
}

/**
 * A run that could not start, told to whoever reads stdout: the one --json-output
 * object (no session was written), or a `run_refused` event on the --events stream.
 * The error itself goes on to be printed on stderr with what to do.
 */
export function reportRefusal(options: OutputFlags, error: unknown): void {
  writeRefusal(options, failureOf(error, isCodeloopsError(error) ? (cliHint(error) ?? null) : null));
}

/** A refusal in the envelope, on stdout as the run's output flags say; a command line commander refused is told this way too (`main.ts`). */
export function writeRefusal(options: OutputFlags, failure: Failure): void {
  const { code, message, details } = failure;
  if (options.jsonOutput) process.stdout.write(formatRefusedRun(failure));
  else if (options.events === 'ndjson') process.stdout.write(JSON.stringify(stampEvent({ type: 'run_refused', failure, code, message, details })) + '\n');
}

/** A notification that did not arrive, as a warning line on stderr: the loop and its outcome go on regardless. */
export function notifyFailureText(failure: NotifyFailure): string {
  return `warning: [notify] ${failure.channel}: ${sanitizeForTerminal(failure.message)}\n`;
}
