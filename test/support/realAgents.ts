import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runEventSchema, type RunEvent, type RunEventOf } from '../../src/sessionFormat/runEvents.js';
import { claudeEnvironment } from './modelApi/anthropicMessages.js';
import { geminiEnvironment } from './modelApi/geminiApi.js';
import { openCodeEnvironment } from './modelApi/openAiChat.js';
import { codexEnvironment } from './modelApi/openAiResponses.js';
import type { ModelApi } from './modelApi/scripted.js';
import { readJsonLines } from './scriptedLoop.js';
import { isolateHome, repoRoot, tempDir, type IsolatedHome } from './testEnvironment.js';

/**
 * Where the real agent CLIs live: Claude Code, Codex and Gemini CLI are
 * devDependencies (node_modules/.bin); OpenCode is installed into .cache/agents by
 * test/run.mjs (see CACHED_TOOLS there).
 */
export type RealAgent = 'claude' | 'opencode' | 'codex' | 'gemini';

const fromNpm = () => path.join(repoRoot(), 'node_modules', '.bin');
const fromCache = () => path.join(repoRoot(), '.cache', 'agents', 'node_modules', '.bin');
const BIN_DIR: Readonly<Record<RealAgent, () => string>> = { claude: fromNpm, codex: fromNpm, gemini: fromNpm, opencode: fromCache };

export function agentBinDirs(needed: readonly RealAgent[] = ['claude', 'opencode']): string[] {
  for (const name of needed) {
    const dir = BIN_DIR[name]();
    if (!fs.existsSync(path.join(dir, name))) throw new Error(`${name} is not installed in ${dir}: run npm ci, then the tests through npm test`);
  }
  return [fromNpm(), fromCache()];
}

/** The real CLI's program, for a test that runs it directly (`--version`). */
export function agentBinary(name: RealAgent): string {
  return path.join(BIN_DIR[name](), name);
}

export interface RealAgentHome {
  home: IsolatedHome;
  /** The whole environment for a `codeloops` child process. */
  env: Record<string, string>;
  /** The home the agents see (`HOME`): their own config and sessions. */
  agentsHome: string;
}

/** The scripted model APIs a loop's agents talk to, by protocol. */
export interface ScriptedApis {
  /** Claude Code's (Messages API). */
  anthropic?: ModelApi;
  /** Codex's (Responses API). */
  responses?: ModelApi;
  /** Gemini CLI's. */
  gemini?: ModelApi;
}

/**
 * An isolated home for a loop with the real CLIs: the agents find the fake APIs,
 * none of the user's own config, and the binaries on PATH as a user's would be.
 * Codeloops' own data and config live in the same isolated home. OpenCode's API is
 * named in the project's own opencode.json (`writeOpenCodeProjectConfig`).
 */
export function realAgentHome(apis: ScriptedApis, needed: readonly RealAgent[] = ['claude', 'opencode']): RealAgentHome {
  const home = isolateHome();
  home.restore(); // only the child process uses it
  const agentsHome = tempDir('codeloops-agent-home-');
  const openCode = openCodeEnvironment(agentsHome);
  // The adapter itself sets OPENCODE_PERMISSION per role: do not hand it one.
  delete openCode.OPENCODE_PERMISSION;
  const env: Record<string, string> = {
    ...openCode,
    ...(apis.anthropic ? claudeEnvironment(apis.anthropic, agentsHome) : {}),
    ...(apis.responses ? codexEnvironment(apis.responses, path.join(agentsHome, '.codex')) : {}),
    ...(apis.gemini ? geminiEnvironment(apis.gemini, agentsHome) : {}),
    ...home.env,
    PATH: [...agentBinDirs(needed), process.env.PATH ?? ''].join(path.delimiter),
  };
  return { home, env, agentsHome };
}

/** A session's sidecar folder: its record of events and each agent run's raw output (`iteration-<n>-<role>.stdout`). */
export function sidecarFolder(home: IsolatedHome, sessionId: string): string {
  return path.join(home.dataHome, 'codeloops', 'sidecars', sessionId);
}

/** A session's sidecar record (`events.jsonl`), every event checked against its schema. */
export function sidecarEvents(home: IsolatedHome, sessionId: string): RunEvent[] {
  return readJsonLines(path.join(sidecarFolder(home, sessionId), 'events.jsonl')).map((event) => runEventSchema.parse(event));
}

/** The `agent_finished` events of a session's record, in order. */
export function agentRuns(home: IsolatedHome, sessionId: string): RunEventOf<'agent_finished'>[] {
  return sidecarEvents(home, sessionId).filter((event): event is RunEventOf<'agent_finished'> => event.type === 'agent_finished');
}

/** What the CLI prints for `--version`. */
export function installedVersion(name: RealAgent): string {
  return execFileSync(agentBinary(name), ['--version'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } }).trim();
}

/** The start of the critic's prompt: how a scripted model API tells the critic's requests from the actor's. */
export const CRITIC_MARK = 'You are the critic in an actor–critic coding loop';
