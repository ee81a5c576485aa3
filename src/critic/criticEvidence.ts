import type { AgentEvent } from '../sessionFormat/agentEvents.js';
import type { CriticCommand, CriticEvidence } from '../sessionFormat/verification.js';

/**
 * What the critic did to judge, folded from its own stream (every agent's tool calls
 * in one event model): the commands it ran, each with whether it succeeded (a tool
 * result marked as an error is a failure; Codex says so from the exit code), and the
 * files it read. Evidence of the record, not of the critic's account.
 */

/** The shell tools of the agent CLIs: Claude Code's `Bash`, Codex's `shell`, Gemini's `run_shell_command`, OpenCode's `bash`, Cursor's `shell`. */
const COMMAND_TOOLS = /^(bash|shell|run_shell_command|exec_command|terminal)$/i;
/** Their file-reading tools. */
const READ_TOOLS = /^(read|read_file|read_many_files|view|view_file|open_file)$/i;

export class CriticEvidenceFold {
  private readonly commands: (CriticCommand & { id?: string })[] = [];
  private readonly reads = new Set<string>();

  add(event: AgentEvent): void {
    if (event.kind === 'tool_use' && COMMAND_TOOLS.test(event.name) && event.summary.trim()) {
      this.commands.push({ tool: event.name, command: event.summary, ok: null, id: event.id });
    } else if (event.kind === 'tool_use' && READ_TOOLS.test(event.name) && event.summary.trim()) {
      this.reads.add(event.summary);
    } else if (event.kind === 'tool_result') {
      // Its own call's result, by id; without ids, the latest command still waiting for one.
      const command = event.id !== undefined ? this.commands.find((each) => each.id === event.id) : this.commands.findLast((each) => each.ok === null);
      if (command) command.ok = !event.isError;
    }
  }

  result(): CriticEvidence {
    return { commands: this.commands.map(({ tool, command, ok }) => ({ tool, command, ok })), reads: [...this.reads] };
  }
}

/** Whether the critic ran anything that succeeded. */
export function ranSuccessfully(evidence: CriticEvidence): boolean {
  return evidence.commands.some((command) => command.ok === true);
}
