import fs from 'node:fs';
import path from 'node:path';
import which from 'which';
import type { RoleSettings } from '../config/runSettings.js';
import type { AgentAdapter } from './agentAdapter.js';

/** The program to start for a role and the arguments that come before the adapter's. */
export interface AgentProgram {
  program: string;
  leadingArgs: string[];
}

export class AgentNotFoundError extends Error {
  override name = 'AgentNotFoundError';
}

/**
 * Finds the agent's binary before the loop starts, so a missing one is a clear
 * error up front, naming the binary and the setting that points to it.
 */
export function resolveAgentProgram(
  adapter: AgentAdapter,
  settings: RoleSettings,
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
