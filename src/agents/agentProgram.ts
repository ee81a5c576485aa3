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
  const pathVariable = settings.env.PATH ?? env.PATH ?? '';
  if (adapter.kind === 'command') {
    const command = settings.command;
    if (!command || command.length === 0) {
      throw new AgentNotFoundError(
        'The "command" agent needs a program to run: set command = ["program", "arg", …] under [actor] or [critic] ' +
          '(or [agents.command]) in codeloops.toml or the global config.',
        { agent: adapter.kind },
      );
    }
    const [program, ...leadingArgs] = command as [string, ...string[]];
    return { program: locate(program, workingDir, pathVariable, settings.binarySetting, adapter), leadingArgs };
  }
  const configured = settings.binaryPath;
  const program = configured ?? adapter.defaultBinary;
  return { program: locate(program, workingDir, pathVariable, configured ? settings.binarySetting : null, adapter), leadingArgs: [] };
}

function locate(program: string, workingDir: string, pathVariable: string, setting: string | null, adapter: AgentAdapter): string {
  const looksLikePath = program.includes('/') || program.includes('\\');
  if (looksLikePath) {
    const absolute = path.resolve(workingDir, program);
    if (isExecutable(absolute)) return absolute;
    throw new AgentNotFoundError(
      `${adapter.displayName}: ${absolute} ${fs.existsSync(absolute) ? 'is not executable' : 'does not exist'}` +
        (setting ? ` (set by ${setting}).` : '.') +
        ` Fix the path, or remove the setting to look "${adapter.defaultBinary || program}" up on PATH.`,
      { agent: adapter.kind, program: absolute, ...(setting ? { setting } : {}) },
    );
  }
  const found = which.sync(program, { path: pathVariable, nothrow: true });
  if (found) return found;
  throw new AgentNotFoundError(
    `${adapter.displayName}: "${program}" was not found on PATH` +
      (setting ? ` (named by ${setting}).` : '.') +
      (adapter.kind === 'command'
        ? ' Install it or give its full path in the command setting.'
        : ` Install it (${adapter.installHint}) or set its full path with [agents.${adapter.kind}] path = "/path/to/${program}" in the config.`),
    { agent: adapter.kind, program, ...(setting ? { setting } : {}) },
  );
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
