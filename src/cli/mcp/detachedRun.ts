import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readCliAnswer } from '../../sessionFormat/cliAnswerReading.js';
import { runOutcomeSchema } from '../../sessionFormat/cliAnswers.js';
import { CodeloopsError } from '../../sessionFormat/failures.js';
import { runOptionArgs, type RunOptionValues } from '../../sessionFormat/runOptions.js';
import { dataHome, sessionsDir, sidecarDirOf } from '../../sessionFormat/sessionFiles.js';
import { loopRunnerPid } from '../../sessions/loopLiveness.js';
import { openStore } from '../openStore.js';

/**
 * A loop started for an MCP client runs as its own runner process (`codeloops run`),
 * detached, as the editor's loops do: it outlives the server (a client such as
 * `claude -p` exits after its turn, and its server with it), and any later server
 * finds it again through its session file and the repository lock. Its stdout and
 * stderr go to a log file, never to a pipe: a pipe closed with the server would stop
 * the loop. The log holds what `--json-output` prints (the outcome, or why it did not
 * start) and whatever a crash says; it moves into the session's sidecar once the
 * session exists.
 */

export interface DetachedLoopRequest {
  prompt: string;
  workingDir: string;
  /** What the client asked for above every config: the run options by key. */
  options: RunOptionValues;
}

/** In a session's sidecar: what its detached runner printed (the `--json-output` outcome, a crash's words). */
export const RUNNER_LOG_FILE = 'runner.log';

/** How long the runner may take to check everything and start its session (the agents' versions are asked on the way). */
const START_TIMEOUT_MS = 120_000;
const POLL_MS = 100;

/**
 * The runner's arguments, each one argument (`--name=value`: a value that starts with
 * `-` stays a value). The prompt is read from a file: one argument holds at most 128 KiB
 * on Linux, and a task can be longer.
 */
export function runArguments(request: DetachedLoopRequest, promptFile: string): string[] {
  return ['run', `--prompt-file=${promptFile}`, `--working-dir=${request.workingDir}`, '--json-output', '--quiet', ...runOptionArgs(request.options)];
}

/**
 * Starts the loop in a runner of its own and returns its session id once the session
 * exists; a refusal is thrown as the runner reported it. The prompt waits for the runner
 * in a file of this server's private folder, readable by this user alone, and goes once
 * the runner has started its session or ended (it reads the file first of all).
 */
export async function startDetachedLoop(request: DetachedLoopRequest, cliPath: string): Promise<string> {
  const logDir = path.join(dataHome(), 'codeloops', 'mcp');
  fs.mkdirSync(logDir, { recursive: true, mode: 0o700 });
  // Unique however many loops this server starts at once.
  const name = `${process.pid}-${Date.now()}-${randomBytes(4).toString('hex')}`;
  const logFile = path.join(logDir, `runner-${name}.log`);
  const promptFile = path.join(logDir, `prompt-${name}.md`);
  fs.writeFileSync(promptFile, request.prompt, { mode: 0o600, flag: 'wx' });
  try {
    return await runDetached(runArguments(request, promptFile), cliPath, logFile);
  } finally {
    fs.rmSync(promptFile, { force: true });
  }
}

/** Runs the runner with its output in the log and waits for the session it starts (or its refusal). */
async function runDetached(args: string[], cliPath: string, logFile: string): Promise<string> {
  const before = new Set(listSessionFiles());
  const log = fs.openSync(logFile, 'wx', 0o600);
  let exited = false;
  let child;
  try {
    child = spawn(process.execPath, [cliPath, ...args], { detached: true, stdio: ['ignore', log, log], windowsHide: true });
  } catch (error) {
    fs.rmSync(logFile, { force: true });
    throw new CodeloopsError('internal', `The runner could not be started: ${(error as Error).message}`, {});
  } finally {
    fs.closeSync(log);
  }
  child.once('exit', () => (exited = true));
  child.once('error', () => (exited = true));
  child.unref();
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    // Checked before the exit: a runner that ended at once still names its session in its outcome.
    const found = child.pid === undefined ? undefined : await sessionOfRunner(child.pid, before);
    if (found) return keepLog(logFile, found);
    if (exited) return keepLog(logFile, outcomeOfEndedRunner(logFile));
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new CodeloopsError(
    'internal',
    `The runner (pid ${child.pid ?? '?'}) did not start its session within ${START_TIMEOUT_MS / 1000} s; its output is in ${logFile}.`,
    {
      log_file: logFile,
    },
  );
}

/** The sessions folder's session files, by name. */
function listSessionFiles(): string[] {
  try {
    return fs.readdirSync(sessionsDir()).filter((name) => name.endsWith('.jsonl'));
  } catch {
    return [];
  }
}

/**
 * The session a runner started: a new session file whose loop that very runner holds the
 * lock for. Not the prompt's: two loops of one prompt may start at once, in two repositories.
 */
async function sessionOfRunner(pid: number, before: Set<string>): Promise<string | undefined> {
  const store = openStore(() => {});
  for (const name of listSessionFiles().filter((file) => !before.has(file))) {
    const id = name.slice(0, -'.jsonl'.length);
    try {
      if (loopRunnerPid(await store.startLine(id)) === pid) return id;
    } catch {
      // not written yet, or not a session
    }
  }
  return undefined;
}

/** What a runner that already ended said: its session (it ran and ended), or why it could not start. */
function outcomeOfEndedRunner(logFile: string): string {
  const text = fs.readFileSync(logFile, 'utf8');
  const outcome = text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => readCliAnswer(runOutcomeSchema, line))
    .findLast((value) => value !== undefined);
  if (outcome?.ok) return outcome.answer.session_id;
  if (outcome) {
    fs.rmSync(logFile, { force: true });
    throw new CodeloopsError(outcome.failure.code, outcome.failure.message, outcome.failure.details);
  }
  throw new CodeloopsError('internal', `The runner stopped without starting a session: ${text.trim().slice(-2000) || 'it printed nothing'}`, {
    log_file: logFile,
  });
}

/** The log goes with its session (deleted with it); where it cannot be moved, it stays where it is. */
function keepLog(logFile: string, sessionId: string): string {
  try {
    const sidecar = sidecarDirOf(sessionId);
    fs.mkdirSync(sidecar, { recursive: true, mode: 0o700 });
    fs.renameSync(logFile, path.join(sidecar, RUNNER_LOG_FILE));
  } catch {
    // kept in the mcp folder
  }
  return sessionId;
}
