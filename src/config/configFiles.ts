import fs from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { z } from 'zod';
import { AGENT_KINDS } from '../agents/agentKinds.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';

/**
 * The two TOML files, validated strictly: a misspelt key or an unknown agent is an
 * error that names the file and the key, never silently ignored.
 *
 * Global (`$XDG_CONFIG_HOME/codeloops/config.toml`), the original's layout plus more:
 *   [defaults] agent, model, max_iterations, timeout_secs
 *   [defaults.actor] / [defaults.critic]  agent, model, timeout_secs, args, env, command
 *   [agents.<name>] path, args, env, command
 * Project (`codeloops.toml` in the working directory): the same without `defaults`:
 *   agent, model, max_iterations, timeout_secs, [actor], [critic], [agents.<name>]
 */

const agentName = z.enum(AGENT_KINDS, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a known agent (expected one of: ${AGENT_KINDS.join(', ')})`,
});
const nonEmpty = z.string().min(1, 'must not be empty');
/** setTimeout's limit (about 24.8 days): anything longer would fire at once. */
export const MAX_TIMEOUT_SECS = 2_147_483;
const positiveSecs = z.number().positive('must be a positive number of seconds').max(MAX_TIMEOUT_SECS, `must be at most ${MAX_TIMEOUT_SECS} seconds (about 24 days)`);
const stringList = z.array(z.string());
const envTable = z.record(z.string(), z.string());
/** A program and its arguments, as an array: never a shell string. */
const commandLine = z.array(nonEmpty).min(1, 'needs at least the program name');

export const roleTableSchema = z.strictObject({
  agent: agentName.optional(),
  model: nonEmpty.optional(),
  timeout_secs: positiveSecs.optional(),
  args: stringList.optional(),
  env: envTable.optional(),
  command: commandLine.optional(),
});

export const agentTableSchema = z.strictObject({
  path: nonEmpty.optional(),
  args: stringList.optional(),
  env: envTable.optional(),
  command: commandLine.optional(),
});

const agentsTable = z.partialRecord(agentName, agentTableSchema);

const maxIterations = z.number().int().nonnegative('must be 0 (no limit) or more').max(1_000_000, 'must be at most 1,000,000');

export const globalConfigSchema = z.strictObject({
  defaults: z
    .strictObject({
      agent: agentName.optional(),
      model: nonEmpty.optional(),
      max_iterations: maxIterations.optional(),
      timeout_secs: positiveSecs.optional(),
      actor: roleTableSchema.optional(),
      critic: roleTableSchema.optional(),
    })
    .optional(),
  agents: agentsTable.optional(),
});

export const projectConfigSchema = z.strictObject({
  agent: agentName.optional(),
  model: nonEmpty.optional(),
  max_iterations: maxIterations.optional(),
  timeout_secs: positiveSecs.optional(),
  actor: roleTableSchema.optional(),
  critic: roleTableSchema.optional(),
  agents: agentsTable.optional(),
});

export type RoleTable = z.infer<typeof roleTableSchema>;
export type AgentTable = z.infer<typeof agentTableSchema>;
export type GlobalConfigFile = z.infer<typeof globalConfigSchema>;
export type ProjectConfigFile = z.infer<typeof projectConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    readonly filePath: string,
    detail: string,
  ) {
    super(`${filePath}: ${detail}`);
  }
}

export function configHome(env: Environment = process.env): string {
  const configured = env.XDG_CONFIG_HOME;
  return configured && path.isAbsolute(configured) ? configured : path.join(env.HOME || homedir(), '.config');
}

export function globalConfigPath(env: Environment = process.env): string {
  return path.join(configHome(env), 'codeloops', 'config.toml');
}

export const PROJECT_CONFIG_FILE = 'codeloops.toml';

/**
 * The project's `codeloops.toml`: in the working directory, or the nearest folder
 * above it up to the repository's top (a loop started in a subfolder still finds
 * the project's file). Undefined when there is none.
 */
export function findProjectConfig(workingDir: string, repositoryRoot: string = workingDir): string | undefined {
  const top = path.resolve(repositoryRoot);
  for (let folder = path.resolve(workingDir); ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, PROJECT_CONFIG_FILE);
    if (fs.existsSync(candidate)) return candidate;
    if (folder === top || path.dirname(folder) === folder || !folder.startsWith(top)) return undefined;
  }
}

/**
 * Settings that decide which programs run on this machine and with which secrets:
 * allowed in the global config and the editor's settings, not in a project file a
 * cloned repository could bring. (`command` stays: a project's own agent script is
 * like its build script.)
 */
export function assertNoMachineSettings(filePath: string, file: ProjectConfigFile): void {
  const offending: string[] = [];
  for (const [agent, table] of Object.entries(file.agents ?? {})) {
    if (table?.path !== undefined) offending.push(`[agents.${agent}] path`);
    if (table?.env !== undefined) offending.push(`[agents.${agent}] env`);
  }
  for (const role of ['actor', 'critic'] as const) if (file[role]?.env !== undefined) offending.push(`[${role}] env`);
  if (offending.length > 0) {
    throw new ConfigError(
      filePath,
      `${offending.join(', ')} can only be set in the global config or the editor's settings: a project must not choose which programs run on your machine, or with which environment. Move ${offending.length === 1 ? 'it' : 'them'} to ~/.config/codeloops/config.toml.`,
    );
  }
}

/** Reads and validates one config file; a missing file is an empty config. */
export function readConfigFile<T>(filePath: string, schema: z.ZodType<T>): T | undefined {
  let text: string;
  try {
    text = fs.readFileSync(filePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(filePath, `cannot be read: ${(error as Error).message}`);
  }
  return parseConfigText(filePath, text, schema);
}

export function parseConfigText<T>(filePath: string, text: string, schema: z.ZodType<T>): T {
  let data: unknown;
  try {
    data = parseToml(text);
  } catch (error) {
    if (error instanceof TomlError) {
      throw new ConfigError(filePath, `invalid TOML at line ${error.line}, column ${error.column}: ${firstLine(error.message)}`);
    }
    throw new ConfigError(filePath, `invalid TOML: ${(error as Error).message}`);
  }
  const result = schema.safeParse(data);
  if (!result.success) throw new ConfigError(filePath, describeConfigIssues(result.error.issues));
  return result.data;
}

function describeConfigIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const key = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys' && key === 'agents') {
        return issue.keys.map((name) => `[agents.${name}]: "${name}" is not a known agent (expected one of: ${AGENT_KINDS.join(', ')})`).join('; ');
      }
      if (issue.code === 'unrecognized_keys') {
        const keys = issue.keys.map((name) => (key ? `${key}.${name}` : name));
        return `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}`;
      }
      if (issue.code === 'invalid_key') return `${key ? `[${key}] ` : ''}${issue.issues[0]?.message ?? issue.message}`;
      return `${key ? `"${key}"` : 'the file'}: ${issue.message}`;
    })
    .join('; ');
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
