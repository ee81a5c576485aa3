import fs from 'node:fs';
import path from 'node:path';
import which from 'which';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { AgentAdapter } from './agentAdapter.js';

/** The program to start for a role and the arguments that come before the adapter's. */
export interface AgentProgram {
  program: string;
  leadingArgs: string[];
}

/** Where a role's program comes from: the part of a role's settings this module reads. */
export interface ProgramSettings {
  env: Readonly<Record<string, string>>;
  /** For the `command` agent: the program and its arguments. */
  command: readonly string[] | null;
  /** The configured binary path, or null to look the adapter's default name up on PATH. */
  binaryPath: string | null;
  /** Where `binaryPath`/`command` came from, for error messages ("[agents.claude] path in …"). */
  binarySetting: string;
}

export class AgentNotFoundError extends CodeloopsError {
  override name = 'AgentNotFoundError';
  constructor(message: string, details: { agent: string; program?: string; setting?: string }) {
    super('agent_missing', message, details);
  }
}

/** Where a role's program is, or why it cannot be run and how to fix that. */
export type ProgramLookup =
  | { found: true; program: AgentProgram }
  | {
      found: false;
      problem: 'not_found' | 'not_executable' | 'no_command';
      /** The whole story, as the "not found" error says it. */
      message: string;
      /** What is wrong, in a few words. */
      summary: string;
      /** What to do, in one line. */
      fix: string;
      details: { agent: string; program?: string; setting?: string };
    };

/**
 * Finds the agent's binary before the loop starts, so a missing one is a clear
 * error up front, naming the binary and the setting that points to it.
 */
export function resolveAgentProgram(
  adapter: AgentAdapter,
  settings: ProgramSettings,
  workingDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): AgentProgram {
  const lookup = lookUpAgentProgram(adapter, settings, workingDir, env);
  if (lookup.found) return lookup.program;
  throw new AgentNotFoundError(lookup.message, lookup.details);
}

/**
 * `resolveAgentProgram` without throwing: what `codeloops doctor` reports.
 * `globalConfig` names the global config file in the fix.
 */
export function lookUpAgentProgram(
  adapter: AgentAdapter,
  settings: ProgramSettings,
  workingDir: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  globalConfig = 'the global config',
): ProgramLookup {
  const pathVariable = settings.env.PATH ?? env.PATH ?? '';
  if (adapter.kind === 'command') {
    const command = settings.command;
    if (!command || command.length === 0) {
      return notRunnable(adapter, 'no_command', {
        summary: 'no program is configured for the "command" agent',
        fix: 'set command = ["program", "arg", …] under [actor] or [critic] (or [agents.command]) in codeloops.toml or the global config',
        details: { agent: adapter.kind },
      });
    }
    const [program, ...leadingArgs] = command as [string, ...string[]];
    return withArgs(locate(program, workingDir, pathVariable, settings.binarySetting, adapter, globalConfig), leadingArgs);
  }
  const configured = settings.binaryPath;
  const program = configured ?? adapter.defaultBinary;
  return withArgs(locate(program, workingDir, pathVariable, configured ? settings.binarySetting : null, adapter, globalConfig), []);
}

function withArgs(lookup: ProgramLookup | string, leadingArgs: string[]): ProgramLookup {
  return typeof lookup === 'string' ? { found: true, program: { program: lookup, leadingArgs } } : lookup;
}

function locate(
  program: string,
  workingDir: string,
  pathVariable: string,
  setting: string | null,
  adapter: AgentAdapter,
  globalConfig: string,
): string | ProgramLookup {
  const looksLikePath = program.includes('/') || program.includes('\\');
  if (looksLikePath) {
    const absolute = path.resolve(workingDir, program);
    if (isExecutable(absolute)) return absolute;
    const exists = fs.existsSync(absolute);
    return notRunnable(adapter, exists ? 'not_executable' : 'not_found', {
      summary: `${absolute} ${exists ? 'is not executable' : 'does not exist'}${setting ? ` (set by ${setting})` : ''}`,
      fix: exists
        ? `make ${absolute} executable (chmod +x), or fix the path${setting ? ` in ${setting}` : ''}`
        : `fix the path${setting ? ` in ${setting}` : ''}, or remove the setting to look "${adapter.defaultBinary || program}" up on PATH`,
      details: { agent: adapter.kind, program: absolute, ...(setting ? { setting } : {}) },
    });
  }
  const found = which.sync(program, { path: pathVariable, nothrow: true });
  if (found) return found;
  return notRunnable(adapter, 'not_found', {
    summary: `"${program}" was not found on PATH${setting ? ` (named by ${setting})` : ''}`,
    fix:
      adapter.kind === 'command'
        ? 'install it, or give its full path in the command setting'
        : `install it (${adapter.installHint}), or set [agents.${adapter.kind}] path = "/path/to/${program}" in ${globalConfig}`,
    details: { agent: adapter.kind, program, ...(setting ? { setting } : {}) },
  });
}

/** A program that cannot run: what is wrong and what to do, and the error's message made of both. */
function notRunnable(
  adapter: AgentAdapter,
  problem: Extract<ProgramLookup, { found: false }>['problem'],
  { summary, fix, details }: Pick<Extract<ProgramLookup, { found: false }>, 'summary' | 'fix' | 'details'>,
): ProgramLookup {
  const message = `${adapter.displayName}: ${summary}. ${fix.charAt(0).toUpperCase()}${fix.slice(1)}.`;
  return { found: false, problem, message, summary, fix, details };
}

function isExecutable(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
