import type { AgentKind } from '../agents/agentKinds.js';
import { DEFAULT_PRICES, type ModelPrice, type PriceTable } from '../budget/prices.js';
import { assertNoPermissionArgs, contentHash, isProjectTrusted, ProjectUntrustedError, programsOf } from './projectTrust.js';
import type { Budget } from '../budget/spendTracker.js';
import type { ReviewMode } from '../sessionFormat/reviewRecords.js';
import { timingOf, type CheckSpec } from '../checks/runCheck.js';
import type { RunOptionValues } from '../sessionFormat/runOptions.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';
import { DEFAULT_NOTIFY_INCLUDE, DEFAULT_NOTIFY_ON, type NotifyEventName, type NotifyInclude } from '../sessionFormat/notifications.js';
import path from 'node:path';
import { realFolderOf } from '../files/regularFile.js';
import {
  assertNoMachineSettings,
  findProjectConfig,
  globalConfigPath,
  globalConfigSchema,
  locateProgram,
  parseConfigText,
  projectConfigSchema,
  readConfigFile,
  readConfigText,
  type AgentTable,
  type CheckTable,
  type LimitsTable,
  type GlobalConfigFile,
  type NotifyTable,
  type ProjectConfigFile,
  type RoleTable,
  type VerifyTable,
  type WorktreeTable,
} from './configFiles.js';

export type Role = 'actor' | 'critic';

/** `[stall]`: how many iterations in a row without progress make a stall (0: off), and what then. */
export interface StallSettings {
  unchangedIterations: number;
  action: 'stop' | 'nudge';
}

/** `[limits]`: whether an agent's usage limit, a rate limit or an API down is waited out, for how long in all, and whether waiting uses the time budget. */
export interface LimitSettings {
  wait: boolean;
  maxWaitSecs: number;
  countWait: boolean;
}

/** `[verify]`: what the actor must not weaken to pass the gate, and what a task about the tests may. */
export interface VerifySettings {
  /** The user's gitignore-style patterns, from the repository's top, added to the defaults (tests, CI, codeloops.toml, what the checks run). */
  protected: readonly string[];
  /** `allow_test_changes`: deleting, removing or skipping tests does not refuse DONE (it is still shown). */
  allowTestChanges: boolean;
  /** `require_evidence`: a DONE that nothing verified (no passing required check, no command the critic ran that succeeded) is refused. */
  requireEvidence: boolean;
}

/** Everything one role needs to start its agent, fully resolved. */
export interface RoleSettings {
  agent: AgentKind;
  model: string | null;
  timeoutSecs: number;
  /** Extra arguments appended to the adapter's own. */
  extraArgs: string[];
  env: Record<string, string>;
  /** For the `command` agent: the program and its arguments. */
  command: string[] | null;
  /** The configured binary path, or null to look the adapter's default name up on PATH. */
  binaryPath: string | null;
  /** Where `binaryPath`/`command` came from, for error messages ("[agents.claude] path in …"). */
  binarySetting: string;
}

/** `[worktree]`: what each candidate's worktree gets before its first iteration. */
export interface WorktreeSettings {
  /** Paths from the repository's top, copied from the user's tree when present. */
  copy: string[];
  /** A shell command run in each worktree, or null. */
  setup: string | null;
  setupTimeoutSecs: number;
}

/** `[notify]` of the global config, resolved: where word goes, of which events, with what. */
export interface NotifySettings {
  /** The program and its arguments, placeholders unfilled; null: none. */
  command: string[] | null;
  webhook: string | null;
  /** Sent with the webhook's POST (a token, a login): secrets, never shown. */
  webhookHeaders: Readonly<Record<string, string>>;
  on: readonly NotifyEventName[];
  include: readonly NotifyInclude[];
  timeoutSecs: number;
}

/** A notifying program or webhook that takes longer is given up: the loop's end does not wait for it. */
export const DEFAULT_NOTIFY_TIMEOUT_SECS = 10;

export interface RunSettings {
  actor: RoleSettings;
  critic: RoleSettings;
  /** null: no limit. */
  maxIterations: number | null;
  /** The checks every iteration runs before the critic, in order. */
  checks: CheckSpec[];
  budget: Budget;
  stall: StallSettings;
  limits: LimitSettings;
  /** `pause`: wait for the user's review after each iteration that goes on. */
  review: ReviewMode;
  prices: PriceTable;
  worktree: WorktreeSettings;
  /** What the actor may not weaken; null: not verified (`--no-verify`). */
  verify: VerifySettings | null;
  /** `[notify]`, from the global config only; null: nothing is sent. */
  notify: NotifySettings | null;
  /** The config files that were read, lowest precedence first. */
  sources: string[];
}

/** A check as a layer gives it: a project file's run in that file's folder (`folder`, from the repository's top). */
export type LayerCheck = CheckTable & Pick<CheckSpec, 'folder'>;

/** One level of configuration: built-in defaults, a file, editor settings or flags. */
export interface ConfigLayer {
  source: string;
  /** Relative paths in this layer are relative to here (a file's folder); absent: the working directory. */
  baseDir?: string;
  agent?: AgentKind;
  model?: string;
  maxIterations?: number;
  timeoutSecs?: number;
  maxCostUsd?: number;
  maxTokens?: number;
  maxDurationSecs?: number;
  stall?: { unchanged_iterations?: number; action?: 'stop' | 'nudge' };
  limits?: LimitsTable;
  review?: ReviewMode;
  /** Replace the checks of lower layers (a project names its own). */
  checks?: LayerCheck[];
  /** Added to the checks of lower layers (`--check`). */
  extraChecks?: CheckTable[];
  /** No checks at all (`--no-checks`). */
  noChecks?: boolean;
  prices?: Record<string, ModelPrice>;
  actor?: RoleTable;
  critic?: RoleTable;
  agents?: Partial<Record<AgentKind, AgentTable>>;
  worktree?: WorktreeTable;
  verify?: VerifyTable;
  /** No verification of protected files (`--no-verify`); the checks still gate. */
  noVerify?: boolean;
  /** `[notify]`: only the global file's layer has one (a project's is refused when read). */
  notify?: NotifyTable;
}

/** Command-line flags, the highest layer: the run options (`sessionFormat/runOptions.ts`) by key; `checks` and `verify` are false for `--no-checks`, `--no-verify`. */
export type FlagOverrides = RunOptionValues;

export const DEFAULT_AGENT: AgentKind = 'claude';
/** Runaway loops are the most reported problem in this space: a limit by default. */
export const DEFAULT_MAX_ITERATIONS = 10;
export const DEFAULT_TIMEOUT_SECS: Readonly<Record<Role, number>> = { actor: 30 * 60, critic: 10 * 60 };
export const DEFAULT_CHECK_TIMEOUT_SECS = 600;
/** Three iterations in a row without progress is a stall, by default: stopped, not left running overnight. */
export const DEFAULT_STALL: StallSettings = { unchangedIterations: 3, action: 'stop' };
/** A usage limit is waited out, by default, for up to six hours in all: a night's loop outlasts a 5-hour limit. */
export const DEFAULT_LIMITS: LimitSettings = { wait: true, maxWaitSecs: 21_600, countWait: false };
/** A worktree's setup installs dependencies: longer than a check may take. */
export const DEFAULT_SETUP_TIMEOUT_SECS = 1800;

export function layerFromGlobalFile(file: GlobalConfigFile, source: string): ConfigLayer {
  const defaults = file.defaults ?? {};
  return {
    source,
    baseDir: path.dirname(source),
    agent: defaults.agent,
    model: defaults.model,
    maxIterations: defaults.max_iterations,
    timeoutSecs: defaults.timeout_secs,
    maxCostUsd: defaults.max_cost_usd,
    maxTokens: defaults.max_tokens,
    maxDurationSecs: defaults.max_duration_secs,
    stall: defaults.stall,
    limits: defaults.limits,
    review: defaults.review,
    checks: defaults.checks,
    prices: file.prices,
    actor: defaults.actor,
    critic: defaults.critic,
    agents: file.agents,
    worktree: defaults.worktree,
    verify: defaults.verify,
    notify: file.notify,
  };
}

export function layerFromProjectFile(file: ProjectConfigFile, source: string, baseDir?: string): ConfigLayer {
  return {
    source,
    baseDir,
    agent: file.agent,
    model: file.model,
    maxIterations: file.max_iterations,
    timeoutSecs: file.timeout_secs,
    maxCostUsd: file.max_cost_usd,
    maxTokens: file.max_tokens,
    maxDurationSecs: file.max_duration_secs,
    stall: file.stall,
    limits: file.limits,
    review: file.review,
    checks: file.checks,
    prices: file.prices,
    actor: file.actor,
    critic: file.critic,
    agents: file.agents,
    worktree: file.worktree,
    verify: file.verify,
  };
}

export function layerFromFlags(flags: FlagOverrides): ConfigLayer {
  return {
    source: 'command-line flags',
    agent: flags.agent,
    model: flags.model,
    maxIterations: flags.maxIterations,
    maxCostUsd: flags.maxCost,
    maxTokens: flags.maxTokens,
    maxDurationSecs: flags.maxDuration,
    stall: flags.stallAfter === undefined ? undefined : { unchanged_iterations: flags.stallAfter },
    review: flags.review ? 'pause' : undefined,
    extraChecks: flags.check?.map((command) => ({ name: command, run: command })),
    noChecks: flags.checks === false,
    actor: { agent: flags.actorAgent, model: flags.actorModel },
    critic: { agent: flags.criticAgent, model: flags.criticModel },
    verify:
      flags.allowTestChanges || flags.requireEvidence ? { allow_test_changes: flags.allowTestChanges, require_evidence: flags.requireEvidence } : undefined,
    noVerify: flags.verify === false,
  };
}

export interface LoadOptions {
  workingDir: string;
  /** The repository's top: the project file is looked for up to here. */
  repositoryRoot?: string;
  env?: Environment;
  flags?: FlagOverrides;
  /** Layers between the global file and the project file, such as editor settings. */
  userLayers?: ConfigLayer[];
  /** A layer above the project file and below the flags: what a resumed session ran with. */
  recordedLayer?: ConfigLayer;
  /** Run what the project file adds (commands, arguments, checks) even though it is not trusted: `--trust`. */
  trust?: boolean;
}

/** Reads both files and resolves: flags > project > editor settings > global > defaults. */
export function loadRunSettings(options: LoadOptions): RunSettings {
  const env = options.env ?? process.env;
  const layers: ConfigLayer[] = [];
  const globalPath = globalConfigPath(env);
  const globalFile = readConfigFile(globalPath, globalConfigSchema);
  if (globalFile) layers.push(layerFromGlobalFile(globalFile, globalPath));
  layers.push(...(options.userLayers ?? []));
  const projectPath = findProjectConfig(options.workingDir, options.repositoryRoot);
  const projectText = projectPath ? readConfigText(projectPath) : undefined;
  const projectFile = projectPath && projectText !== undefined ? parseConfigText(projectPath, projectText, projectConfigSchema) : undefined;
  if (projectPath && projectFile) {
    assertNoMachineSettings(projectPath, projectFile);
    const layer = layerFromProjectFile(projectFile, projectPath, path.dirname(projectPath));
    // A project's checks run where its file is, whose relative paths they use, wherever the loop starts.
    const folder = fromRepositoryTop(options.repositoryRoot ?? options.workingDir, path.dirname(projectPath));
    layers.push({ ...layer, checks: layer.checks?.map((check) => ({ ...check, folder })) });
  }
  if (options.recordedLayer) layers.push(options.recordedLayer);
  if (options.flags) layers.push(layerFromFlags(options.flags));
  const settings = resolveLayers(layers, options.workingDir);
  if (projectPath && projectFile && projectText !== undefined) {
    const agents = { actor: settings.actor.agent, critic: settings.critic.agent };
    // Refused outright, trusted or not: a project may name its own programs, not widen what an agent may do.
    assertNoPermissionArgs(projectPath, projectFile, agents);
    const programs = programsOf(projectFile, path.dirname(projectPath), agents);
    const hash = contentHash(projectText);
    if (programs.length > 0 && !options.trust && !isProjectTrusted(projectPath, hash, env)) throw new ProjectUntrustedError(projectPath, programs, hash);
  }
  return settings;
}

/** A folder as a path from the repository's top, both read through their links (git names the top by its real path). */
function fromRepositoryTop(top: string, folder: string): string {
  return path.relative(realFolderOf(top), realFolderOf(folder));
}

/** A setting's value from the highest layer that sets it, with that layer; undefined when none does. */
type LayerPick = <T>(read: (layer: ConfigLayer) => T | undefined) => { value: NonNullable<T>; source: string; layer: ConfigLayer } | undefined;

function pickerOf(layersLowToHigh: readonly ConfigLayer[]): LayerPick {
  const highFirst = [...layersLowToHigh].reverse();
  return (read) => {
    for (const layer of highFirst) {
      const value = read(layer);
      if (value !== undefined && value !== null) return { value, source: layer.source, layer };
    }
    return undefined;
  };
}

/**
 * Resolves layers given lowest precedence first; within a layer the role's own
 * table beats the general key. A model belongs to its agent: a model chosen in a
 * layer that also chose another agent than the one that wins is not carried over.
 */
export function resolveLayers(layersLowToHigh: readonly ConfigLayer[], workingDir: string = process.cwd()): RunSettings {
  const pick = pickerOf(layersLowToHigh);
  const maxIterations = pick((layer) => layer.maxIterations)?.value ?? DEFAULT_MAX_ITERATIONS;
  const prices: Record<string, ModelPrice> = { ...DEFAULT_PRICES };
  for (const layer of layersLowToHigh) Object.assign(prices, layer.prices);
  return {
    actor: resolveRole('actor', layersLowToHigh, pick, workingDir),
    critic: resolveRole('critic', layersLowToHigh, pick, workingDir),
    maxIterations: maxIterations === 0 ? null : maxIterations,
    checks: resolveChecks(layersLowToHigh, pick),
    budget: {
      maxCostUsd: pick((layer) => layer.maxCostUsd)?.value ?? null,
      maxTokens: pick((layer) => layer.maxTokens)?.value ?? null,
      maxDurationSecs: pick((layer) => layer.maxDurationSecs)?.value ?? null,
    },
    stall: {
      unchangedIterations: pick((layer) => layer.stall?.unchanged_iterations)?.value ?? DEFAULT_STALL.unchangedIterations,
      action: pick((layer) => layer.stall?.action)?.value ?? DEFAULT_STALL.action,
    },
    limits: {
      wait: pick((layer) => layer.limits?.wait)?.value ?? DEFAULT_LIMITS.wait,
      maxWaitSecs: pick((layer) => layer.limits?.max_wait_secs)?.value ?? DEFAULT_LIMITS.maxWaitSecs,
      countWait: pick((layer) => layer.limits?.count_wait)?.value ?? DEFAULT_LIMITS.countWait,
    },
    review: pick((layer) => layer.review)?.value ?? 'off',
    prices,
    worktree: {
      copy: pick((layer) => layer.worktree?.copy)?.value ?? [],
      setup: pick((layer) => layer.worktree?.setup)?.value ?? null,
      setupTimeoutSecs: pick((layer) => layer.worktree?.setup_timeout_secs)?.value ?? DEFAULT_SETUP_TIMEOUT_SECS,
    },
    verify: resolveVerify(layersLowToHigh, pick),
    notify: resolveNotify(
      pick((layer) => layer.notify),
      workingDir,
    ),
    sources: layersLowToHigh.map((layer) => layer.source),
  };
}

/** One role's agent, model, timeout, arguments, environment and program, as the layers set them. */
function resolveRole(role: Role, layersLowToHigh: readonly ConfigLayer[], pick: LayerPick, workingDir: string): RoleSettings {
  const locate = (program: string, layer: ConfigLayer): string => locateProgram(program, layer.baseDir ?? workingDir);
  const fromRoleOrGeneral = <T>(roleValue: (table: RoleTable) => T | undefined, general: (layer: ConfigLayer) => T | undefined) =>
    pick((layer) => {
      const table = layer[role];
      const specific = table ? roleValue(table) : undefined;
      return specific !== undefined ? specific : general(layer);
    });
  const agent =
    fromRoleOrGeneral(
      (t) => t.agent,
      (l) => l.agent,
    )?.value ?? DEFAULT_AGENT;
  const agentOfLayer = (layer: ConfigLayer): AgentKind | undefined => layer[role]?.agent ?? layer.agent;
  const model = pick((layer) => {
    const chosen = layer[role]?.model ?? layer.model;
    const layerAgent = agentOfLayer(layer);
    return chosen !== undefined && (layerAgent === undefined || layerAgent === agent) ? chosen : undefined;
  });
  const agentValue = <K extends keyof AgentTable>(key: K) => pick((layer) => layer.agents?.[agent]?.[key]);
  const roleCommand = pick((layer) => layer[role]?.command);
  const agentCommand = agentValue('command');
  const command = roleCommand ?? agentCommand;
  const binaryPath = agentValue('path');
  const env: Record<string, string> = {};
  for (const layer of layersLowToHigh) Object.assign(env, layer.agents?.[agent]?.env, layer[role]?.env);
  const binarySetting = roleCommand
    ? `[${role}] command in ${roleCommand.source}`
    : agentCommand
      ? `[agents.${agent}] command in ${agentCommand.source}`
      : binaryPath
        ? `[agents.${agent}] path in ${binaryPath.source}`
        : `[agents.${agent}] path`;
  return {
    agent,
    model: model?.value ?? null,
    timeoutSecs:
      fromRoleOrGeneral(
        (t) => t.timeout_secs,
        (l) => l.timeoutSecs,
      )?.value ?? DEFAULT_TIMEOUT_SECS[role],
    extraArgs: [...(agentValue('args')?.value ?? []), ...(pick((layer) => layer[role]?.args)?.value ?? [])],
    env,
    command: command ? [locate(command.value[0]!, command.layer), ...command.value.slice(1)] : null,
    binaryPath: binaryPath ? locate(binaryPath.value, binaryPath.layer) : null,
    binarySetting,
  };
}

/** `[notify]` with its defaults; null when it sends nowhere (no command, no webhook). */
function resolveNotify(picked: { value: NotifyTable; layer: ConfigLayer } | undefined, workingDir: string): NotifySettings | null {
  const table = picked?.value;
  if (!table || (table.command === undefined && table.webhook === undefined)) return null;
  const [program, ...args] = table.command ?? [];
  return {
    // A program named with a path is the one beside the global config, as for an agent's `command`.
    command: program === undefined ? null : [locateProgram(program, picked.layer.baseDir ?? workingDir), ...args],
    webhook: table.webhook ?? null,
    webhookHeaders: table.webhook_headers ?? {},
    on: table.on ?? DEFAULT_NOTIFY_ON,
    include: table.include ?? DEFAULT_NOTIFY_INCLUDE,
    timeoutSecs: table.timeout_secs ?? DEFAULT_NOTIFY_TIMEOUT_SECS,
  };
}

/** The files among a run's config sources (the others are flags and editor settings): what an actor could edit. */
export function configFilesOf(settings: Pick<RunSettings, 'sources'>): string[] {
  return settings.sources.filter((source) => path.isAbsolute(source));
}

/** Every layer's protected patterns (each adds to the defaults); the highest `allow_test_changes`; null with `--no-verify`. */
function resolveVerify(layersLowToHigh: readonly ConfigLayer[], pick: LayerPick): VerifySettings | null {
  if (layersLowToHigh.some((layer) => layer.noVerify)) return null;
  return {
    protected: [...new Set(layersLowToHigh.flatMap((layer) => layer.verify?.protected ?? []))],
    allowTestChanges: pick((layer) => layer.verify?.allow_test_changes)?.value ?? false,
    requireEvidence: pick((layer) => layer.verify?.require_evidence)?.value ?? false,
  };
}

/**
 * The checks of the highest layer that lists any, with every layer's extra checks
 * (`--check`); none with `--no-checks`. Acceptance checks (hidden) of lower layers
 * are kept beside them: they live in the global config precisely so that the
 * project's file, which the actor can read, does not name them.
 */
function resolveChecks(layersLowToHigh: readonly ConfigLayer[], pick: LayerPick): CheckSpec[] {
  if (layersLowToHigh.some((layer) => layer.noChecks)) return [];
  const winning = pick((layer) => layer.checks);
  const chosen = winning?.value ?? [];
  const names = new Set(chosen.map((table) => table.name));
  const hiddenBelow = layersLowToHigh
    .slice(0, winning ? layersLowToHigh.indexOf(winning.layer) : layersLowToHigh.length)
    .flatMap((layer) => layer.checks ?? [])
    .filter((table) => table.hidden === true && !names.has(table.name));
  const checkTables: LayerCheck[] = [...chosen, ...hiddenBelow, ...layersLowToHigh.flatMap((layer) => layer.extraChecks ?? [])];
  return checkTables.map((table): CheckSpec => ({
    name: table.name,
    run: table.run,
    timeoutSecs: table.timeout_secs ?? DEFAULT_CHECK_TIMEOUT_SECS,
    required: table.required ?? true,
    ...(table.folder !== undefined && { folder: table.folder }),
    when: timingOf(table),
    hidden: table.hidden ?? false,
    // An acceptance check runs in a clean worktree unless it says otherwise: nothing the actor left outside git decides it.
    isolated: table.isolated ?? table.hidden ?? false,
    ...(table.runner !== undefined && { runner: table.runner }),
  }));
}
