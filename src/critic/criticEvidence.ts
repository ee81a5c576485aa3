import type { AgentKind } from '../agents/agentKinds.js';
import type { AgentEvent } from '../sessionFormat/agentEvents.js';
import type { CriticCommand, CriticEvidence } from '../sessionFormat/verification.js';

/**
 * What the critic did to judge, folded from its own stream (every agent's tool calls
 * in one event model): the commands it ran, each with whether it succeeded (a tool
 * result marked as an error is a failure; Codex says so from the exit code), and the
 * files it read. Evidence of the record, not of the critic's account.
 */

/**
 * Each agent CLI's tools whose calls are evidence, as its adapter names them in the
 * event model: the shell it runs commands with and the tools it reads files with. A
 * new agent must say its own (an agent missing here is a type error); wrong names would
 * leave every DONE its critic gives unverified, which `test/unit/agentKinds.test.ts`
 * catches by replaying each agent's recorded shell call.
 */
export const EVIDENCE_TOOLS: Readonly<Record<AgentKind, { commands: readonly string[]; reads: readonly string[] }>> = {
  claude: { commands: ['Bash'], reads: ['Read'] },
  opencode: { commands: ['bash'], reads: ['read'] },
  cursor: { commands: ['shell'], reads: ['read'] },
  // Its adapter calls every command execution `shell`; Codex reads files with its shell.
  codex: { commands: ['shell'], reads: [] },
  gemini: { commands: ['run_shell_command'], reads: ['read_file', 'read_many_files'] },
  // Plain output, no tool calls.
  command: { commands: [], reads: [] },
};

/** The names of every agent's tools of one sort, lower-cased: a stream is folded without knowing whose it is. */
const toolsOf = (sort: 'commands' | 'reads') => new Set(Object.values(EVIDENCE_TOOLS).flatMap((tools) => tools[sort].map((name) => name.toLowerCase())));
const COMMAND_TOOLS = toolsOf('commands');
const READ_TOOLS = toolsOf('reads');

export class CriticEvidenceFold {
  private readonly commands: (CriticCommand & { id?: string })[] = [];
  private readonly reads = new Set<string>();

  add(event: AgentEvent): void {
    if (event.kind === 'tool_use' && COMMAND_TOOLS.has(event.name.toLowerCase()) && event.summary.trim()) {
      this.commands.push({ tool: event.name, command: event.summary, ok: null, id: event.id });
    } else if (event.kind === 'tool_use' && READ_TOOLS.has(event.name.toLowerCase()) && event.summary.trim()) {
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
