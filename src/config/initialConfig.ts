import which from 'which';
import { AGENT_DISPLAY_NAMES, DEFAULT_BINARIES } from '../agents/agentKinds.js';
import type { AgentKind } from '../agents/agentKinds.js';
import { DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT_SECS } from './runSettings.js';

export interface DetectedAgent {
  kind: Exclude<AgentKind, 'command'>;
  path: string | null;
}

/** Which agent CLIs are on PATH. */
export function detectAgents(pathVariable: string | undefined = process.env.PATH): DetectedAgent[] {
  return (Object.keys(DEFAULT_BINARIES) as DetectedAgent['kind'][]).map((kind) => ({
    kind,
    path: which.sync(DEFAULT_BINARIES[kind], { path: pathVariable ?? '', nothrow: true }),
  }));
}

/** The global config `codeloops init` writes: every setting shown, the unusual ones commented out. */
export function renderInitialConfig(detected: readonly DetectedAgent[]): string {
  const installed = detected.filter((agent) => agent.path);
  const preferred = installed[0]?.kind ?? 'claude';
  const found = detected.map((agent) => `#   ${agent.kind.padEnd(9)} ${AGENT_DISPLAY_NAMES[agent.kind].padEnd(12)} ${agent.path ?? 'not found'}`).join('\n');
  return `# Codeloops global configuration.
# A project's codeloops.toml overrides this file; command-line flags override both.
#
# Agents found on PATH when this file was written:
${found}

[defaults]
# The agent for both roles unless [defaults.actor] / [defaults.critic] say otherwise.
agent = "${preferred}"
# model = "sonnet"
# Stop after this many iterations (0 = no limit).
max_iterations = ${DEFAULT_MAX_ITERATIONS}
# Seconds one agent run may take before it is stopped.
# timeout_secs = ${DEFAULT_TIMEOUT_SECS.actor}

[defaults.actor]
# agent = "${preferred}"
# model = "sonnet"
# timeout_secs = ${DEFAULT_TIMEOUT_SECS.actor}
# args = []            # extra arguments for the actor's agent

[defaults.critic]
# A reviewer from a different model catches what the actor's model misses.
# agent = "${preferred}"
# model = "opus"
# timeout_secs = ${DEFAULT_TIMEOUT_SECS.critic}

# Per-agent settings: where the binary is, extra arguments, environment.
${detected
  .map(
    (agent) => `# [agents.${agent.kind}]
# path = "${agent.path ?? `/path/to/${DEFAULT_BINARIES[agent.kind]}`}"
# args = []
# env = { }`,
  )
  .join('\n\n')}

# Any other program as an agent: it gets the prompt on stdin, prints its answer.
# [agents.command]
# command = ["my-agent", "--flag"]
`;
}
