import path from 'node:path';
import { findProjectConfig, parseConfigText, projectConfigSchema, readConfigText } from '../config/configFiles.js';
import { programsOf, setProjectTrust } from '../config/projectTrust.js';
import { openRepository } from '../git/repository.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { UsageError } from './usageError.js';

export interface TrustOptions {
  workingDir?: string;
  revoke?: boolean;
}

/**
 * `codeloops trust`: shows what the project's codeloops.toml would run and trusts the
 * file as it is now (a change to it needs trusting again); `--revoke` takes it back.
 */
export async function trustCommand(options: TrustOptions): Promise<number> {
  const workingDir = path.resolve(options.workingDir ?? process.cwd());
  const repository = await openRepository(workingDir).catch(() => undefined);
  const file = findProjectConfig(workingDir, repository?.root);
  if (!file) throw new UsageError(`There is no codeloops.toml in ${workingDir} or the folders above it${repository ? ` up to ${repository.root}` : ''}.`);
  if (options.revoke) {
    setProjectTrust(file, false);
    process.stdout.write(`${file} is no longer trusted: what it would run is refused until you trust it again.\n`);
    return 0;
  }
  const programs = programsOf(parseConfigText(file, readConfigText(file) ?? '', projectConfigSchema));
  setProjectTrust(file, true);
  const listed = programs.map((program) => `  ${sanitizeForTerminal(program.key)}: ${sanitizeForTerminal(program.runs)}`).join('\n');
  process.stdout.write(
    programs.length > 0
      ? `Trusted ${file} as it is now. Loops in this project may run:\n${listed}\nA change to the file needs trusting again.\n`
      : `Trusted ${file} as it is now. It runs no programs of its own (no commands, arguments or checks).\n`,
  );
  return 0;
}
