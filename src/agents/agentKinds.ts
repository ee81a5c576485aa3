import { AGENT_KINDS, type AgentKind } from '../sessionFormat/agentNames.js';

// The names are declared with the wire formats that carry them (a lower folder); the runner's modules keep importing them from here.
export { AGENT_KINDS, type AgentKind };

/** Names stored in the session file's `actor_agent`/`critic_agent`, as the original wrote them. */
export const AGENT_DISPLAY_NAMES: Readonly<Record<AgentKind, string>> = {
  claude: 'Claude Code',
  opencode: 'OpenCode',
  cursor: 'Cursor',
  codex: 'Codex',
  gemini: 'Gemini CLI',
  command: 'Command',
};

/** The program each adapter runs unless `[agents.<name>] path` says otherwise. */
export const DEFAULT_BINARIES: Readonly<Record<Exclude<AgentKind, 'command'>, string>> = {
  claude: 'claude',
  opencode: 'opencode',
  cursor: 'cursor-agent',
  codex: 'codex',
  gemini: 'gemini',
};

export function isAgentKind(value: string): value is AgentKind {
  return (AGENT_KINDS as readonly string[]).includes(value);
}

/** The kind behind a stored display name, for sessions written by any version. */
export function agentKindFromDisplayName(name: string): AgentKind | undefined {
  const lowered = name.trim().toLowerCase();
  if (isAgentKind(lowered)) return lowered;
  for (const kind of AGENT_KINDS) {
    if (AGENT_DISPLAY_NAMES[kind].toLowerCase() === lowered) return kind;
  }
  return undefined;
}
