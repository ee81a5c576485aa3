import fs from 'node:fs';
import path from 'node:path';
import { createRepo, isolateHome, repoRoot, tempDir, type IsolatedHome } from './testEnvironment.js';

/** One step of the scripted agent (test/fixtures/agents/scriptedAgent.mjs). */
export type ScriptStep =
  | { write: { path: string; content: string } }
  | { delete: string }
  | { shell: string[] }
  /** Runs a program whose stdout is the agent's own output. */
  | { run: string[] }
  | { commit: string }
  | { print: string }
  | { stderr: string }
  | { sleep: number }
  | { hang: true }
  | { spawnChild: true }
  | { flood: number; floodLine?: string }
  | { exit: number }
  | { kill: NodeJS.Signals };

export interface AgentScript {
  /** Steps per actor call, in order; the last entry repeats. */
  actor?: ScriptStep[][];
  critic?: ScriptStep[][];
  /** Scripts of a group's candidates, by label (the agent sees its label in CODELOOPS_CANDIDATE); roles are then `<label>-actor`, `<label>-critic`. */
  candidates?: Record<string, { actor?: ScriptStep[][]; critic?: ScriptStep[][] }>;
}

export interface ScriptedAgent {
  dir: string;
  command: string[];
  env: Record<string, string>;
  /** The prompt the role got on its n-th call (1-based); a candidate's roles are `<label>-actor`, `<label>-critic`. */
  prompt(role: ScriptedRole, call: number): string;
  /** How many times the role was started. */
  calls(role: ScriptedRole): number;
  envSeen(role: ScriptedRole, call: number): Record<string, string | number | undefined>;
  /** The arguments the role was started with on its n-th call. */
  argsSeen(role: ScriptedRole, call: number): string[];
}

export type ScriptedRole = 'actor' | 'critic' | `${string}-actor` | `${string}-critic`;

export const SCRIPTED_AGENT = (): string => path.join(repoRoot(), 'test', 'fixtures', 'agents', 'scriptedAgent.mjs');

export function scriptedAgent(script: AgentScript): ScriptedAgent {
  const dir = tempDir('codeloops-agent-');
  fs.writeFileSync(path.join(dir, 'script.json'), JSON.stringify(script));
  return {
    dir,
    command: [process.execPath, SCRIPTED_AGENT()],
    env: { SCRIPTED_AGENT_DIR: dir },
    prompt: (role, call) => fs.readFileSync(path.join(dir, `${role}-${call}.prompt`), 'utf8'),
    // The calls' claims, not the counter: two calls at once may write the counter in either order.
    calls: (role) => fs.readdirSync(dir).filter((name) => new RegExp(`^${role}-\\d+\\.claim$`).test(name)).length,
    envSeen: (role, call) => JSON.parse(fs.readFileSync(path.join(dir, `${role}-${call}.env`), 'utf8')) as Record<string, string | number | undefined>,
    argsSeen: (role, call) => JSON.parse(fs.readFileSync(path.join(dir, `${role}-${call}.args`), 'utf8')) as string[],
  };
}

/** A decision block as a critic would print it. */
export function decision(json: Record<string, unknown>): ScriptStep {
  return { print: `Reviewed the change.\n<decision>${JSON.stringify(json)}</decision>` };
}

export const done = (summary = 'All done', confidence = 0.9): ScriptStep => decision({ type: 'done', summary, confidence });
export const carryOn = (feedback: string, remaining: string[] = []): ScriptStep => decision({ type: 'continue', feedback, remaining_issues: remaining });
/**
 * A CONTINUE that names its reason as a finding (at a file when `at` is given), as a
 * critic keeping the decision contract does. A bare `carryOn` names nothing concrete,
 * and a verifying loop asks its critic once to be specific before it counts.
 */
export const carryOnNaming = (feedback: string, remaining: string[] = [], at: { file: string; line?: number } | null = null): ScriptStep =>
  decision({ type: 'continue', feedback, remaining_issues: remaining, findings: [{ ...at, severity: 'error', message: feedback }] });

/**
 * Lines of Claude Code's stream-json (`claude -p --output-format stream-json
 * --verbose`), for the scripted agent to print when it plays Claude Code through the
 * `claude` adapter: each model call's usage as it arrives, then the turn's result.
 */
export const claudeStream = {
  /** One model call's message, with its usage (the adapter sums the calls of a turn). */
  call: (id: string, model: string, usage: { input_tokens?: number; output_tokens?: number }, text: string): ScriptStep => ({
    print: JSON.stringify({ type: 'assistant', session_id: 'scripted-session', message: { id, model, content: [{ type: 'text', text }], usage } }),
  }),
  /** The turn's end: its text, and what it cost by the agent's own account. */
  result: (text: string, costUsd: number, usage: { input_tokens?: number; output_tokens?: number }): ScriptStep => ({
    print: JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: text,
      session_id: 'scripted-session',
      total_cost_usd: costUsd,
      usage,
    }),
  }),
  /**
   * A turn the account's usage limit refused: the rejected rate-limit event with its
   * reset, then the failed result, and exit code 1. `costUsd`: the agent session's
   * cost so far by its own account (a turn cut short after some work).
   */
  usageLimit: (resetsAt: Date, costUsd = 0): ScriptStep[] => {
    const resetsAtSecs = Math.ceil(resetsAt.getTime() / 1000);
    return [
      { print: JSON.stringify({ type: 'rate_limit_event', rate_limit_info: { status: 'rejected', resetsAt: resetsAtSecs }, session_id: 'scripted-session' }) },
      {
        print: JSON.stringify({
          type: 'result',
          subtype: 'success',
          is_error: true,
          api_error: 'usage_limit_reached',
          result: "You've hit your 5-hour limit · resets 3pm (UTC)",
          session_id: 'scripted-session',
          total_cost_usd: costUsd,
          usage: { input_tokens: 0, output_tokens: 0 },
        }),
      },
      { exit: 1 },
    ];
  },
};

/** A global config.toml that makes both roles the scripted agent. */
export function scriptedConfigToml(agent: ScriptedAgent, extra = ''): string {
  const command = agent.command.map((part) => JSON.stringify(part)).join(', ');
  return `[defaults]\nagent = "command"\nmax_iterations = 5\n\n[agents.command]\ncommand = [${command}]\nenv = { SCRIPTED_AGENT_DIR = ${JSON.stringify(agent.dir)} }\n${extra}`;
}

/** Makes the scripted agent both roles in the global config under `configHome`. */
export function configureScriptedAgent(configHome: string, script: AgentScript, extraToml = ''): ScriptedAgent {
  const agent = scriptedAgent(script);
  fs.mkdirSync(path.join(configHome, 'codeloops'), { recursive: true });
  fs.writeFileSync(path.join(configHome, 'codeloops', 'config.toml'), scriptedConfigToml(agent, extraToml));
  return agent;
}

/** A repository, an isolated data/config home (for child processes) and the scripted agent in both roles. */
export function scriptedCliSetup(script: AgentScript, extraToml = ''): { home: IsolatedHome; agent: ScriptedAgent; repo: string; env: Record<string, string> } {
  const home = isolateHome();
  home.restore(); // only children use it
  const agent = configureScriptedAgent(home.configHome, script, extraToml);
  const repo = createRepo({ files: { 'README.md': '# project\n' } });
  return { home, agent, repo, env: home.env };
}

/**
 * A repository and an isolated home whose global config makes the scripted agent play
 * Claude Code in both roles, through the `claude` adapter (which reads its usage
 * limit): it runs as itself (`#!/usr/bin/env node`), as a `claude` binary would, and
 * the critic's environment says the role, which Claude Code's arguments do not.
 */
export function scriptedClaudeSetup(
  script: AgentScript,
  extraToml = '',
): { agent: ScriptedAgent; repo: string; env: Record<string, string>; home: IsolatedHome } {
  const home = isolateHome();
  home.restore(); // only children use it
  const agent = scriptedAgent(script);
  fs.mkdirSync(path.join(home.configHome, 'codeloops'), { recursive: true });
  fs.writeFileSync(
    path.join(home.configHome, 'codeloops', 'config.toml'),
    `[defaults]\nagent = "claude"\nmax_iterations = 3\n[defaults.critic]\nenv = { CODELOOPS_ROLE = "critic" }\n\n` +
      `[agents.claude]\npath = ${JSON.stringify(SCRIPTED_AGENT())}\nenv = { SCRIPTED_AGENT_DIR = ${JSON.stringify(agent.dir)} }\n${extraToml}`,
  );
  return { agent, repo: createRepo({ files: { 'README.md': '# project\n' } }), env: home.env, home };
}
