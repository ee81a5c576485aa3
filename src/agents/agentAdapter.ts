import type { AgentKind } from './agentKinds.js';
import type { AgentEvent, StreamDrift } from '../sessionFormat/agentEvents.js';
import type { AgentLimit } from './agentLimits.js';

export type AgentRole = 'actor' | 'critic';

export interface InvocationRequest {
  role: AgentRole;
  prompt: string;
  model: string | null;
  /** The agent's own session id to continue, where the agent supports it. */
  resumeSessionId: string | null;
}

/** How to start the agent: arguments after the binary, and the prompt's route in. */
export interface Invocation {
  args: string[];
  /**
   * Arguments that must come last, after the extra arguments from config: a
   * subcommand and its operands (`resume <id> -`), or `-- <prompt>`.
   */
  trailingArgs?: string[];
  /** Written to stdin and closed; null when the prompt travels in `args` after `--`. */
  stdin: string | null;
  /** Variables this adapter needs (permission switches); user env from config wins. */
  env: Record<string, string>;
  /**
   * The variable through which the CLI is told where to write its own log: the runner
   * names a file of its own there and reads it as it grows (`StreamParser.readLogLine`).
   */
  logFileEnv?: string;
}

export interface ParserVerdict {
  succeeded: boolean;
  /** Why not, in a sentence, when it did not succeed. */
  failureReason: string | null;
  /** The agent's last message, where the critic's decision block is looked for first. */
  finalText: string | null;
  /** What the stream held that the adapter did not know, ignored. */
  drift: StreamDrift;
  /** When it did not succeed: a usage or rate limit, an API down, a login refused, as the agent's output says (`agentLimits.ts`). */
  limit?: AgentLimit | null;
}

/**
 * Reads one agent CLI's stdout, line by line, into the shared event model. An
 * adapter for a JSON-lines stream builds its parser with `jsonLineParser`.
 */
export interface StreamParser {
  /** One line of stdout (without its newline). */
  parseLine(line: string): AgentEvent[];
  /** After exit: did the run succeed by the agent's own account, and its final message. */
  finish(exitCode: number | null): ParserVerdict;
  /**
   * One line of the CLI's own log (`Invocation.logFileEnv`), for a CLI that says only
   * there that it is stuck retrying a refused request for ever: the limit returned
   * stops the run, which ends with it (`AgentRunResult.limit`).
   */
  readLogLine?(line: string): AgentLimit | null;
}

/**
 * An agent CLI behind one interface. Adapters are pure: they build argv and parse
 * lines; starting, streaming and killing the process is `runAgent`'s job
 * (`agentProcess.ts`), and folding the events into a result `AgentRunFold`'s.
 */
export interface AgentAdapter {
  readonly kind: AgentKind;
  readonly displayName: string;
  /** What to run when no path is configured. */
  readonly defaultBinary: string;
  /** How a user installs it, for the "not found" error. */
  readonly installHint: string;
  /** Whether `resumeSessionId` is honoured. */
  readonly canResume: boolean;
  /**
   * The CLI versions this adapter was proven against (`<binary> --version`): the
   * versions the end-to-end tests drive for real, or whose recorded output the
   * adapter's tests replay. Empty for the `command` agent.
   */
  readonly testedVersions: readonly string[];
  /** True when a resumed run reports the cost of the whole agent session, earlier runs included (Claude Code). */
  readonly costCoversAgentSession: boolean;
  /**
   * The agent's own options that change what it may do: permissions, sandbox,
   * tools, settings and hooks, extra folders, MCP servers. A project file's `args`
   * may not hold them, trusted or not (`permissionFlags.ts`).
   */
  readonly permissionFlags: readonly string[];
  invocation(request: InvocationRequest): Invocation;
  createParser(): StreamParser;
  /** Recognises a known failure on stderr and says how to fix it, or returns null. */
  diagnose(stderr: string): string | null;
}
