import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import type { AgentKind } from '../../src/agents/agentKinds.js';
import { DEFAULT_PRICES, type PriceTable } from '../../src/budget/prices.js';
import type { Budget } from '../../src/budget/spendTracker.js';
import type { CheckSpec } from '../../src/checks/runCheck.js';
import { DEFAULT_STALL, type StallSettings } from '../../src/config/runSettings.js';
import { openRepository } from '../../src/git/repository.js';
import type { LoopRequest, RoleLaunch } from '../../src/loop/loopRequest.js';
import { runLoop } from '../../src/loop/loopRunner.js';
import type { RunEvent, RunSummary } from '../../src/sessionFormat/runEvents.js';
import { scriptedAgent, type AgentScript, type ScriptedAgent } from './scriptedAgent.js';
import { tempDir } from './testEnvironment.js';

export interface ScriptedLoopResult {
  summary: RunSummary;
  events: RunEvent[];
  agent: ScriptedAgent;
  sidecarDir: string;
  sessionsDir: string;
}

export interface ScriptedLoopOptions {
  prompt?: string;
  maxIterations?: number | null;
  timeoutSecs?: { actor?: number; critic?: number };
  signal?: AbortSignal;
  onEvent?: (event: RunEvent) => void;
  sessionsDir?: string;
  /** Collect every event in `events` (default); off for runs that stream megabytes. */
  keepEvents?: boolean;
  checks?: CheckSpec[];
  /** Where isolated checks make their worktrees and how they are readied. */
  isolation?: LoopRequest['isolation'];
  budget?: Partial<Budget>;
  stall?: Partial<StallSettings>;
  prices?: PriceTable;
  /** Review before continuing: the loop waits on this after each iteration that goes on. */
  waitForReview?: LoopRequest['waitForReview'];
  /** Asked when the critic or the actor needs the user (absent: headless). */
  askUser?: LoopRequest['askUser'];
  continuation?: LoopRequest['continuation'];
  /** Where sidecar folders go (default: beside the sessions folder). */
  sidecarRoot?: string;
  /** Whose output format the scripted agent speaks, read by that agent's adapter (default: `command`, plain text). */
  agentKind?: AgentKind;
  /** The model both roles are given (default: none). */
  model?: string;
  /** Judge the actor's changes to protected files (default: not verified, as the engine's default). */
  verify?: LoopRequest['verify'];
}

/** Runs the real loop in-process with both roles played by the scripted agent. */
export async function runScriptedLoop(repoDir: string, script: AgentScript, options: ScriptedLoopOptions = {}): Promise<ScriptedLoopResult> {
  const agent = scriptedAgent(script);
  const data = tempDir('codeloops-data-');
  const sessionsDir = options.sessionsDir ?? path.join(data, 'sessions');
  const sidecarRoot = options.sidecarRoot ?? path.join(data, 'sidecars');
  const [program, ...leadingArgs] = agent.command as [string, ...string[]];
  // The role is said in the environment too: an adapter other than `command` does not say it.
  const role = (name: 'actor' | 'critic', timeoutSecs: number): RoleLaunch => ({
    model: options.model ?? null,
    launch: {
      adapter: adapterFor(options.agentKind ?? 'command'),
      program: { program, leadingArgs },
      extraArgs: [],
      env: { ...agent.env, CODELOOPS_ROLE: name },
      workingDir: repoDir,
      timeoutSecs,
    },
  });
  const events: RunEvent[] = [];
  const summary = await runLoop({
    prompt: options.prompt ?? 'Create hello.txt saying hello',
    workingDir: repoDir,
    repository: await openRepository(repoDir),
    actor: role('actor', options.timeoutSecs?.actor ?? 30),
    critic: role('critic', options.timeoutSecs?.critic ?? 30),
    maxIterations: options.maxIterations === undefined ? 5 : options.maxIterations,
    checks: options.checks ?? [],
    isolation: options.isolation,
    budget: { maxCostUsd: null, maxTokens: null, maxDurationSecs: null, ...options.budget },
    stall: { ...DEFAULT_STALL, ...options.stall },
    prices: options.prices ?? DEFAULT_PRICES,
    sessionsDirectory: sessionsDir,
    sidecarDirOf: (id) => path.join(sidecarRoot, id),
    signal: options.signal ?? new AbortController().signal,
    onEvent: (event) => {
      if (options.keepEvents !== false) events.push(event);
      options.onEvent?.(event);
    },
    waitForReview: options.waitForReview,
    askUser: options.askUser,
    continuation: options.continuation,
    verify: options.verify,
  });
  return { summary, events, agent, sidecarDir: path.join(sidecarRoot, summary.session_id), sessionsDir };
}

export function readJsonLines(file: string): Record<string, unknown>[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
