import type { AgentAdapter } from './agentAdapter.js';
import type { AgentKind } from './agentKinds.js';
import { claudeAdapter } from './adapters/claude.js';
import { codexAdapter } from './adapters/codex.js';
import { commandAdapter } from './adapters/command.js';
import { cursorAdapter } from './adapters/cursor.js';
import { geminiAdapter } from './adapters/gemini.js';
import { opencodeAdapter } from './adapters/opencode.js';

const ADAPTERS: Readonly<Record<AgentKind, AgentAdapter>> = {
  claude: claudeAdapter,
  opencode: opencodeAdapter,
  cursor: cursorAdapter,
  codex: codexAdapter,
  gemini: geminiAdapter,
  command: commandAdapter,
};

export function adapterFor(kind: AgentKind): AgentAdapter {
  return ADAPTERS[kind];
}
