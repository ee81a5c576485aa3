import fs from 'node:fs';
import path from 'node:path';
import { claudeEnvironment } from './modelApi/anthropicMessages.js';
import { openCodeEnvironment } from './modelApi/openAiChat.js';
import type { ModelApi } from './modelApi/scripted.js';
import { isolateHome, repoRoot, tempDir, type IsolatedHome } from './testEnvironment.js';

/**
 * Where the real agent CLIs live: Claude Code is a devDependency; OpenCode is
 * installed into .cache/agents by test/run.mjs (see CACHED_TOOLS there).
 */
export type RealAgent = 'claude' | 'opencode';

export function agentBinDirs(needed: readonly RealAgent[] = ['claude', 'opencode']): string[] {
  const dirs = [path.join(repoRoot(), 'node_modules', '.bin'), path.join(repoRoot(), '.cache', 'agents', 'node_modules', '.bin')];
  for (const [name, dir] of [
    ['claude', dirs[0]!],
    ['opencode', dirs[1]!],
  ] as const) {
    if (needed.includes(name) && !fs.existsSync(path.join(dir, name)))
      throw new Error(`${name} is not installed in ${dir}: run npm ci, then the tests through npm test`);
  }
  return dirs;
}

export interface RealAgentHome {
  home: IsolatedHome;
  /** The whole environment for a `codeloops` child process. */
  env: Record<string, string>;
}

/**
 * An isolated home for a loop with the real CLIs: the agents find the fake APIs,
 * none of the user's own config, and the binaries on PATH as a user's would be.
 * Codeloops' own data and config live in the same isolated home.
 */
export function realAgentHome(apis: { anthropic?: ModelApi }, needed: readonly RealAgent[] = ['claude', 'opencode']): RealAgentHome {
  const home = isolateHome();
  home.restore(); // only the child process uses it
  const agentsHome = tempDir('codeloops-agent-home-');
  const openCode = openCodeEnvironment(agentsHome);
  // The adapter itself sets OPENCODE_PERMISSION per role: do not hand it one.
  delete openCode.OPENCODE_PERMISSION;
  const env: Record<string, string> = {
    ...openCode,
    ...(apis.anthropic ? claudeEnvironment(apis.anthropic, agentsHome) : {}),
    ...home.env,
    PATH: [...agentBinDirs(needed), process.env.PATH ?? ''].join(path.delimiter),
  };
  return { home, env };
}
