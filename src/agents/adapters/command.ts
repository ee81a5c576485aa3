import type { AgentAdapter, StreamParser } from '../agentAdapter.js';
import { NO_DRIFT } from '../streamDrift.js';

/**
 * Any program named in config (`command = ["my-agent", "--flag"]`): the prompt on
 * stdin, its stdout as the transcript, exit 0 as success. Role, iteration and model
 * come as CODELOOPS_* variables. This is what makes the runner usable with tools
 * nobody has written an adapter for.
 */
export const commandAdapter: AgentAdapter = {
  kind: 'command',
  displayName: 'Command',
  defaultBinary: '',
  installHint: 'set command = ["program", "arg", …] under [actor], [critic] or [agents.command] in codeloops.toml',
  canResume: false,
  testedVersions: [],
  costCoversAgentSession: false,
  diagnose: () => null,

  invocation(request) {
    return {
      args: [],
      stdin: request.prompt,
      env: { CODELOOPS_ROLE: request.role, ...(request.model ? { CODELOOPS_MODEL: request.model } : {}) },
    };
  },

  createParser(): StreamParser {
    return {
      // Blank lines are kept: plain output is the transcript as printed.
      parseLine: (line) => [{ kind: 'text', text: line }],
      finish(exitCode) {
        // No separate final message: the whole transcript is the message.
        if (exitCode !== 0) return { succeeded: false, failureReason: `the command exited with code ${exitCode ?? 'none'}`, finalText: null, drift: NO_DRIFT };
        return { succeeded: true, failureReason: null, finalText: null, drift: NO_DRIFT };
      },
    };
  },
};
