import { AGENT_KINDS, isAgentKind, type AgentKind } from '../agents/agentKinds.js';
import { CodeloopsError } from '../sessionFormat/failures.js';

/** A candidate as asked for: the actor's agent and model (null: as configured for that agent), and its label. */
export interface CandidateSpec {
  index: number;
  label: string;
  agent: AgentKind;
  model: string | null;
}

/** More candidates than this is a typo, not a plan: each one is a whole loop with its own worktree. */
export const MAX_CANDIDATES = 20;

/**
 * `--candidates claude,codex:gpt-5,opencode` (agents or `agent:model` pairs; a name
 * twice runs it twice) and `--parallel N` (the list, or the configured actor, N
 * times). A spec given more than once gets `#1`, `#2`… so every label is unique.
 */
export function planCandidates(list: string | undefined, parallel: number | undefined, configuredActor: AgentKind): CandidateSpec[] {
  const given: { agent: AgentKind; model: string | null; text: string }[] =
    list === undefined
      ? [{ agent: configuredActor, model: null, text: configuredActor }]
      : list
          .split(',')
          .map((part) => part.trim())
          .map((text) => {
            if (text === '') throw usage('--candidates has an empty entry: list agents separated by commas, such as claude,codex:gpt-5.');
            const colon = text.indexOf(':');
            const agent = colon < 0 ? text : text.slice(0, colon);
            const model = colon < 0 ? null : text.slice(colon + 1).trim();
            if (!isAgentKind(agent)) throw usage(`"${agent}" in --candidates is not an agent (expected one of: ${AGENT_KINDS.join(', ')}).`);
            if (model === '') throw usage(`"${text}" in --candidates names no model after the colon.`);
            return { agent: agent as AgentKind, model, text: model ? `${agent}:${model}` : agent };
          });
  const times = parallel ?? 1;
  const specs = Array.from({ length: times }, () => given).flat();
  if (specs.length < 2 && list === undefined) throw usage('--parallel needs at least 2: one candidate is an ordinary run.');
  if (specs.length > MAX_CANDIDATES) throw usage(`${specs.length} candidates is more than ${MAX_CANDIDATES}; each one is a whole loop in its own worktree.`);
  const counts = new Map<string, number>();
  for (const spec of specs) counts.set(spec.text, (counts.get(spec.text) ?? 0) + 1);
  const seen = new Map<string, number>();
  return specs.map((spec, position) => {
    const nth = (seen.get(spec.text) ?? 0) + 1;
    seen.set(spec.text, nth);
    return { index: position + 1, label: (counts.get(spec.text) ?? 0) > 1 ? `${spec.text}#${nth}` : spec.text, agent: spec.agent, model: spec.model };
  });
}

function usage(message: string): CodeloopsError {
  return new CodeloopsError('usage', message);
}
