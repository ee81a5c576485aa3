import type { AgentAdapter, InvocationRequest } from './agentAdapter.js';
import type { AgentProgram } from './agentProgram.js';
import { AgentLogFile } from './agentLogFile.js';
import { runAgentProcess, type AgentExit } from './agentProcess.js';
import { AgentRunFold, type AgentRunFoldOptions, type AgentRunResult } from './agentRunFold.js';
import type { GroupRecorder } from '../process/processGroup.js';
import { GIT_LOCATION_VARIABLES } from '../process/gitLocationVariables.js';

/**
 * Running an agent is two parts joined here: its process (`agentProcess.ts`: the
 * process group, the timeout and the interrupt, the raw log) and the fold of what
 * it printed into a result (`agentRunFold.ts`, pure). Callers take both the
 * function and its result's type from here.
 */
export type { AgentRunResult } from './agentRunFold.js';

export interface AgentLaunch {
  adapter: AgentAdapter;
  program: AgentProgram;
  extraArgs: readonly string[];
  /** Variables from config; they win over the adapter's own. */
  env: Readonly<Record<string, string>>;
  workingDir: string;
  timeoutSecs: number;
}

export interface AgentRunOptions extends AgentRunFoldOptions {
  signal?: AbortSignal;
  /** Where the untouched stdout is kept, next to the session. */
  rawStdoutPath?: string;
  /** Per-run variables such as CODELOOPS_ITERATION. */
  runEnv?: Readonly<Record<string, string>>;
  /** Told of the agent's process group while it runs (the loop lock records it). */
  groups?: GroupRecorder;
}

/** What Linux accepts as one argument (MAX_ARG_STRLEN). */
const MAX_ARGUMENT_BYTES = 128 * 1024;

/**
 * Removed from every agent's environment: the variables that make Claude Code refuse
 * to start (set when the editor itself runs inside it), and git's location variables
 * (set inside git hooks), which would point the agent's git at another repository.
 */
const STRIPPED_VARIABLES: readonly string[] = ['CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT', ...GIT_LOCATION_VARIABLES];

export function agentEnvironment(...layers: Readonly<Record<string, string>>[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !STRIPPED_VARIABLES.includes(key)) env[key] = value;
  }
  env.NO_COLOR = '1';
  for (const layer of layers) Object.assign(env, layer);
  for (const key of STRIPPED_VARIABLES) delete env[key];
  return env;
}

/**
 * Starts an agent on a request and returns what came of it: the adapter builds the
 * command line, the process runs in its own group, and its stdout is folded into
 * the result as it streams.
 */
export async function runAgent(launch: AgentLaunch, request: InvocationRequest, options: AgentRunOptions = {}): Promise<AgentRunResult> {
  const { adapter } = launch;
  const invocation = adapter.invocation(request);
  // Config's extra arguments go before what must come last (a subcommand and its operands, `-- prompt`).
  const args = [...launch.program.leadingArgs, ...invocation.args, ...launch.extraArgs, ...(invocation.trailingArgs ?? [])];
  // An argument longer than the kernel takes (128 KiB on Linux) fails with E2BIG; say so plainly, before anything is opened.
  const oversized = args.find((arg) => Buffer.byteLength(arg) >= MAX_ARGUMENT_BYTES);
  if (oversized !== undefined) {
    return notStarted(
      adapter,
      `${adapter.displayName} takes its prompt as an argument, and this one is ${Buffer.byteLength(oversized).toLocaleString('en-US')} bytes: more than the ${MAX_ARGUMENT_BYTES.toLocaleString('en-US')} a single argument may hold. Shorten the task, or use an agent that reads the prompt from stdin.`,
    );
  }
  // A CLI whose own log shows it stuck retrying a refused request for ever is stopped as an interrupt would stop it.
  const stuck = new AbortController();
  const fold = new AgentRunFold(adapter, { ...options, onStuck: () => stuck.abort() });
  const log = invocation.logFileEnv ? { variable: invocation.logFileEnv, file: new AgentLogFile((text) => fold.readLog(text)) } : null;
  try {
    const exit = await runAgentProcess(
      {
        program: launch.program.program,
        args,
        cwd: launch.workingDir,
        // PWD too: some agents (OpenCode) find their project from $PWD, not from the real cwd.
        env: agentEnvironment(invocation.env, log ? { [log.variable]: log.file.path } : {}, launch.env, options.runEnv ?? {}, { PWD: launch.workingDir }),
        stdin: invocation.stdin,
        timeoutSecs: launch.timeoutSecs,
      },
      {
        onStdout: (text) => fold.readStdout(text),
        signal: options.signal ? AbortSignal.any([options.signal, stuck.signal]) : stuck.signal,
        groups: options.groups,
        rawStdoutPath: options.rawStdoutPath,
      },
    );
    return fold.finish(exit);
  } finally {
    log?.file.close();
  }
}

/** A run that never started: what the loop records instead of an agent's answer. */
function notStarted(adapter: AgentAdapter, reason: string): AgentRunResult {
  const exit: AgentExit = {
    startFailure: `could not start: ${reason}`,
    exitCode: 127,
    signal: null,
    stoppedFor: null,
    timeoutSecs: 0,
    stderr: reason,
    durationSecs: 0,
  };
  return new AgentRunFold(adapter).finish(exit);
}
