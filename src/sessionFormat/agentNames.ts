/**
 * The agent CLIs the runner can drive, by the name used in config, flags, the tools'
 * arguments and a queued task's flags. A wire name, so it lives here: the run options
 * (`runOptions.ts`) and the queue's file declare their agents with it, and this folder
 * imports nothing above it. What the runner knows of each agent is in `agents/`.
 */
export const AGENT_KINDS = ['claude', 'opencode', 'cursor', 'codex', 'gemini', 'command'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];
