import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CodeloopsError, FAILURE_CODES, type FailureCode } from '../../sessionFormat/failures.js';
import { dataHome, promptHash, sessionsDir, sidecarDirOf } from '../../sessionFormat/sessionFiles.js';
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
  actorAgent?: string;
  criticAgent?: string;
  actorModel?: string;
  criticModel?: string;
  maxIterations?: number;
  checks?: string[];
}

/** In a session's sidecar: what its detached runner printed (the `--json-output` outcome, a crash's words). */
export const RUNNER_LOG_FILE = 'runner.log';

/** How long the runner may take to check everything and start its session (the agents' versions are asked on the way). */
const START_TIMEOUT_MS = 120_000;
const POLL_MS = 100;

/** The runner's arguments, each one argument (`--name=value`: a prompt that starts with `-` stays a value). */
export function runArguments(request: DetachedLoopRequest): string[] {
  const optional: [string, string | number | undefined][] = [
    ['--actor-agent', request.actorAgent],
    ['--critic-agent', request.criticAgent],
    ['--actor-model', request.actorModel],
    ['--critic-model', request.criticModel],
    ['--max-iterations', request.maxIterations],
  ];
  return [
    'run',
    `--prompt=${request.prompt}`,
    `--working-dir=${request.workingDir}`,
    '--json-output',
    '--quiet',
    ...optional.flatMap(([flag, value]) => (value === undefined ? [] : [`${flag}=${value}`])),
    ...(request.checks ?? []).map((check) => `--check=${check}`),
  ];
}

/** Starts the loop in a runner of its own and returns its session id once the session exists; a refusal is thrown as the runner reported it. */
export async function startDetachedLoop(request: DetachedLoopRequest, cliPath: string): Promise<string> {
  const logDir = path.join(dataHome(), 'codeloops', 'mcp');
  fs.mkdirSync(logDir, { recursive: true, mode: 0o700 });
  const logFile = path.join(logDir, `runner-${process.pid}-${Date.now()}.log`);
  const log = fs.openSync(logFile, 'w', 0o600);
  const suffix = `_${promptHash(request.prompt)}.jsonl`;
  const before = new Set(listSessionFiles(suffix));
  let exited = false;
  let child;
  try {
    child = spawn(process.execPath, [cliPath, ...runArguments(request)], { detached: true, stdio: ['ignore', log, log], windowsHide: true });
  } finally {
    fs.closeSync(log);
  }
  child.once('exit', () => (exited = true));
  child.once('error', () => (exited = true));
  child.unref();
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    // Checked before the exit: a runner that ended at once still names its session in its outcome.
    const found = child.pid === undefined ? undefined : await sessionOfRunner(child.pid, suffix, before);
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

function listSessionFiles(suffix: string): string[] {
  try {
    return fs.readdirSync(sessionsDir()).filter((name) => name.endsWith(suffix));
  } catch {
    return [];
  }
}

/** The session a runner started: a new file of the prompt's hash whose loop that very runner holds the lock for. */
async function sessionOfRunner(pid: number, suffix: string, before: Set<string>): Promise<string | undefined> {
  const store = openStore(() => {});
  for (const name of listSessionFiles(suffix).filter((file) => !before.has(file))) {
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
    .map((line) => {
      try {
        return JSON.parse(line) as { session_id?: unknown; error?: unknown; error_code?: unknown; error_details?: unknown };
      } catch {
        return undefined;
      }
    })
    .findLast((value) => value !== undefined);
  if (typeof outcome?.session_id === 'string') return outcome.session_id;
  if (outcome && typeof outcome.error === 'string') {
    const code = FAILURE_CODES.includes(outcome.error_code as FailureCode) ? (outcome.error_code as FailureCode) : 'internal';
    const details = typeof outcome.error_details === 'object' && outcome.error_details !== null ? (outcome.error_details as Record<string, unknown>) : {};
    fs.rmSync(logFile, { force: true });
    throw new CodeloopsError(code, outcome.error, details);
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
