import type { AgentKind } from '../agents/agentKinds.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';
import path from 'node:path';
import {
  assertNoMachineSettings,
  findProjectConfig,
  globalConfigPath,
  globalConfigSchema,
  projectConfigSchema,
  readConfigFile,
  type AgentTable,
  type GlobalConfigFile,
  type ProjectConfigFile,
  type RoleTable,
} from './configFiles.js';

export type Role = 'actor' | 'critic';

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

export interface RunSettings {
  actor: RoleSettings;
  critic: RoleSettings;
  /** null: no limit. */
  maxIterations: number | null;
  /** The config files that were read, lowest precedence first. */
  sources: string[];
}

/** One level of configuration: built-in defaults, a file, editor settings or flags. */
export interface ConfigLayer {
  source: string;
  /** Relative paths in this layer are relative to here (a file's folder); absent: the working directory. */
  baseDir?: string;
  agent?: AgentKind;
  model?: string;
  maxIterations?: number;
  timeoutSecs?: number;
  actor?: RoleTable;
  critic?: RoleTable;
  agents?: Partial<Record<AgentKind, AgentTable>>;
}

/** Command-line flags, the highest layer. */
export interface FlagOverrides {
  agent?: AgentKind;
  actorAgent?: AgentKind;
  criticAgent?: AgentKind;
  model?: string;
  actorModel?: string;
  criticModel?: string;
  maxIterations?: number;
}

export const DEFAULT_AGENT: AgentKind = 'claude';
/** Runaway loops are the most reported problem in this space: a limit by default. */
export const DEFAULT_MAX_ITERATIONS = 10;
export const DEFAULT_TIMEOUT_SECS: Readonly<Record<Role, number>> = { actor: 30 * 60, critic: 10 * 60 };

export function layerFromGlobalFile(file: GlobalConfigFile, source: string): ConfigLayer {
  const defaults = file.defaults ?? {};
  return {
    source,
    baseDir: path.dirname(source),
    agent: defaults.agent,
    model: defaults.model,
    maxIterations: defaults.max_iterations,
    timeoutSecs: defaults.timeout_secs,
    actor: defaults.actor,
    critic: defaults.critic,
    agents: file.agents,
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
    actor: file.actor,
    critic: file.critic,
    agents: file.agents,
  };
}

export function layerFromFlags(flags: FlagOverrides): ConfigLayer {
  return {
    source: 'command-line flags',
    agent: flags.agent,
    model: flags.model,
    maxIterations: flags.maxIterations,
    actor: { agent: flags.actorAgent, model: flags.actorModel },
    critic: { agent: flags.criticAgent, model: flags.criticModel },
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
  const projectFile = projectPath ? readConfigFile(projectPath, projectConfigSchema) : undefined;
  if (projectPath && projectFile) {
    assertNoMachineSettings(projectPath, projectFile);
    layers.push(layerFromProjectFile(projectFile, projectPath, path.dirname(projectPath)));
  }
  if (options.flags) layers.push(layerFromFlags(options.flags));
  return resolveLayers(layers, options.workingDir);
}

/**
 * Resolves layers given lowest precedence first; within a layer the role's own
 * table beats the general key. A model belongs to its agent: a model chosen in a
 * layer that also chose another agent than the one that wins is not carried over.
 */
export function resolveLayers(layersLowToHigh: readonly ConfigLayer[], workingDir: string = process.cwd()): RunSettings {
  const highFirst = [...layersLowToHigh].reverse();
  const pick = <T>(read: (layer: ConfigLayer) => T | undefined): { value: NonNullable<T>; source: string; layer: ConfigLayer } | undefined => {
    for (const layer of highFirst) {
      const value = read(layer);
      if (value !== undefined && value !== null) return { value, source: layer.source, layer };
    }
    return undefined;
  };
  /** A program named with a path is relative to the file that names it. */
  const locate = (program: string, layer: ConfigLayer): string =>
    program.includes('/') || program.includes('\\') ? path.resolve(layer.baseDir ?? workingDir, program) : program;
  const maxIterations = pick((layer) => layer.maxIterations)?.value ?? DEFAULT_MAX_ITERATIONS;

  const resolveRole = (role: Role): RoleSettings => {
    const fromRoleOrGeneral = <T>(roleValue: (table: RoleTable) => T | undefined, general: (layer: ConfigLayer) => T | undefined) =>
      pick((layer) => {
        const table = layer[role];
        const specific = table ? roleValue(table) : undefined;
        return specific !== undefined ? specific : general(layer);
      });
    const agent = fromRoleOrGeneral((t) => t.agent, (l) => l.agent)?.value ?? DEFAULT_AGENT;
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
      timeoutSecs: fromRoleOrGeneral((t) => t.timeout_secs, (l) => l.timeoutSecs)?.value ?? DEFAULT_TIMEOUT_SECS[role],
      extraArgs: [...(agentValue('args')?.value ?? []), ...(pick((layer) => layer[role]?.args)?.value ?? [])],
      env,
      command: command ? [locate(command.value[0]!, command.layer), ...command.value.slice(1)] : null,
      binaryPath: binaryPath ? locate(binaryPath.value, binaryPath.layer) : null,
      binarySetting,
    };
  };

  return {
    actor: resolveRole('actor'),
    critic: resolveRole('critic'),
    maxIterations: maxIterations === 0 ? null : maxIterations,
    sources: layersLowToHigh.map((layer) => layer.source),
  };
}
