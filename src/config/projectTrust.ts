import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../agents/adapterRegistry.js';
import { AGENT_DISPLAY_NAMES, type AgentKind } from '../agents/agentKinds.js';
import { permissionFlagIn } from '../agents/permissionFlags.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';
import * as z from '../sessionFormat/zod.js';
import { timingOf } from '../checks/runCheck.js';
import { ConfigError, configHome, locateProgram, type CheckTable, type ProjectConfigFile } from './configFiles.js';

/**
 * A cloned repository must not run code without its user's say, as direnv and VS
 * Code's workspace trust have it: whatever a project's `codeloops.toml` adds that
 * runs a program (an agent's `command`, extra `args`, the `[[checks]]`, `[worktree] setup`) runs only
 * once the user has trusted that file's content. Trust is kept per file, by the hash
 * of its bytes: a changed file needs trusting again.
 */

/** One thing a project file would run, in the user's words. */
export interface ProjectProgram {
  /** Where in the file: `[actor] command`, `[[checks]] tests`. */
  key: string;
  /** What it runs. */
  runs: string;
}

export class ProjectUntrustedError extends CodeloopsError {
  override name = 'ProjectUntrustedError';
  constructor(
    readonly file: string,
    readonly programs: readonly ProjectProgram[],
    /** The hash of the content that was read: trusting it trusts exactly what was shown. */
    readonly hash: string,
  ) {
    super(
      'project_untrusted',
      `${file} would run programs on this machine, and you have not trusted it:\n${programs.map((program) => `  ${program.key}: ${program.runs}`).join('\n')}\n` +
        'Nothing was started. Read the file; if what it runs is what you want, trust it.',
      { file, programs: programs.map((program) => ({ ...program })) },
    );
  }
}

type RoleAgents = Readonly<Record<'actor' | 'critic', AgentKind>>;

/** An argument list as a shell would show it: words with spaces, quotes or shell characters quoted. */
function words(parts: readonly string[]): string {
  return parts.map((part) => (part === '' || /[\s"'\\$`;&|<>()*?]/.test(part) ? JSON.stringify(part) : part)).join(' ');
}

/**
 * The program a shell command starts first, when plain to see: its first word (after
 * any `NAME=value`), unquoted. Undefined when the shell would have to expand it.
 */
function firstProgram(command: string): string | undefined {
  const match = /^\s*(?:[A-Za-z_]\w*=[^\s"'`$\\]*\s+)*(?:"([^"`$\\]+)"|'([^']+)'|([^\s"'`$\\;&|<>(){}~*?[]+)(?=[\s;&|<>()]|$))/.exec(command);
  return match ? (match[1] ?? match[2] ?? match[3]) : undefined;
}

/**
 * A project's check as it will run: in the project file's folder, where its relative
 * paths point; a program it names by a path is shown resolved from there.
 */
function checkCommand(command: string, folder: string): string {
  const program = firstProgram(command);
  const located = program === undefined ? program : locateProgram(program, folder);
  return `sh -c ${JSON.stringify(command)} (in ${folder}${located !== program ? `: ${program} is ${located}` : ''})`;
}

/** How a check runs, when not as every check does: at DONE only, hidden from the agents, in a clean worktree. */
function checkTraits(check: CheckTable): string {
  const traits = [
    timingOf(check) === 'done' ? 'at DONE only' : '',
    check.hidden ? 'an acceptance check, hidden from the agents' : '',
    check.isolated ? "in a clean worktree of the iteration's snapshot, readied by [worktree]" : '',
  ].filter(Boolean);
  return traits.length > 0 ? ` [${traits.join('; ')}]` : '';
}

/**
 * What a project file would run, exactly: its agents' commands (a program named with
 * a path resolved from the file's folder, as it will run), the extra arguments each
 * agent would get, its checks (in the file's folder) and its worktree setup.
 */
export function programsOf(file: ProjectConfigFile, baseDir: string, agents?: RoleAgents): ProjectProgram[] {
  const programs: ProjectProgram[] = [];
  const command = (parts: readonly string[]) => words([locateProgram(parts[0]!, baseDir), ...parts.slice(1)]);
  for (const role of ['actor', 'critic'] as const) {
    const table = file[role];
    if (table?.command) programs.push({ key: `[${role}] command`, runs: command(table.command) });
    const agent = agents ? AGENT_DISPLAY_NAMES[agents[role]] : 'the agent';
    if (table?.args?.length) programs.push({ key: `[${role}] args`, runs: `${words(table.args)} (added to ${agent}'s command line as the ${role})` });
  }
  for (const [agent, table] of Object.entries(file.agents ?? {})) {
    if (table?.command) programs.push({ key: `[agents.${agent}] command`, runs: command(table.command) });
    if (table?.args?.length)
      programs.push({ key: `[agents.${agent}] args`, runs: `${words(table.args)} (added to ${AGENT_DISPLAY_NAMES[agent as AgentKind]}'s command line)` });
  }
  for (const check of file.checks ?? []) programs.push({ key: `[[checks]] ${check.name}`, runs: checkCommand(check.run, baseDir) + checkTraits(check) });
  if (file.worktree?.setup) programs.push({ key: '[worktree] setup', runs: `sh -c ${JSON.stringify(file.worktree.setup)}` });
  return programs;
}

/**
 * Project `args` that change what an agent may do (its permissions, sandbox, tools,
 * settings, folders, MCP servers) are refused whether the file is trusted or not: a
 * repository may bring its own scripts, never a wider licence for the agent. Role
 * arguments are checked against the agent the role runs, an agent's table against
 * that agent.
 */
export function assertNoPermissionArgs(filePath: string, file: ProjectConfigFile, agents: RoleAgents): void {
  const tables: Array<[key: string, agent: AgentKind, args: readonly string[] | undefined]> = [
    ['[actor] args', agents.actor, file.actor?.args],
    ['[critic] args', agents.critic, file.critic?.args],
    ...Object.entries(file.agents ?? {}).map(([agent, table]): [string, AgentKind, readonly string[] | undefined] => [
      `[agents.${agent}] args`,
      agent as AgentKind,
      table?.args,
    ]),
  ];
  for (const [key, agent, args] of tables) {
    const argument = args && permissionFlagIn(adapterFor(agent), args);
    if (argument === undefined) continue;
    throw new ConfigError(
      filePath,
      `${key}: ${JSON.stringify(argument)} changes what ${AGENT_DISPLAY_NAMES[agent]} may do (its permissions, sandbox, tools, settings, folders or MCP servers), ` +
        `and a project file may not set that, trusted or not. If you want it, put it in your own config: [agents.${agent}] args in ~/.config/codeloops/config.toml.`,
      { key, argument, agent },
    );
  }
}

const trustedSchema = z.object({ version: z.literal(1), files: z.record(z.string(), z.string()) });

/** `$XDG_CONFIG_HOME/codeloops/trusted-projects.json`: the project files the user trusted, by path, with their content's hash. */
export function trustStorePath(env: Environment = process.env): string {
  return path.join(configHome(env), 'codeloops', 'trusted-projects.json');
}

export function contentHash(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

function readStore(env: Environment): Record<string, string> {
  try {
    const parsed = trustedSchema.safeParse(JSON.parse(fs.readFileSync(trustStorePath(env), 'utf8')));
    return parsed.success ? { ...parsed.data.files } : {};
  } catch {
    return {}; // none yet, or damaged: nothing is trusted
  }
}

export function isProjectTrusted(file: string, hash: string, env: Environment = process.env): boolean {
  return readStore(env)[path.resolve(file)] === hash;
}

/**
 * Records the user's trust in a file's content, by the hash of what they were shown
 * (null takes it back). A file changed since it was shown is then simply not trusted.
 */
export function setProjectTrust(file: string, hash: string | null, env: Environment = process.env): void {
  const files = readStore(env);
  const absolute = path.resolve(file);
  if (hash !== null) files[absolute] = hash;
  else delete files[absolute];
  const store = trustStorePath(env);
  fs.mkdirSync(path.dirname(store), { recursive: true, mode: 0o700 });
  const temporary = `${store}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify({ version: 1, files }, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(temporary, store);
}
