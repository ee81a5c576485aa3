import path from 'node:path';
import { findProjectConfig, readConfigText } from '../config/configFiles.js';
import { contentHash, ProjectUntrustedError, setProjectTrust } from '../config/projectTrust.js';
import { loadRunSettings } from '../config/runSettings.js';
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
 * A file that a loop would refuse anyway (a key no project may set) is not trusted.
 */
export async function trustCommand(options: TrustOptions): Promise<number> {
  const workingDir = path.resolve(options.workingDir ?? process.cwd());
  const repository = await openRepository(workingDir).catch(() => undefined);
  const file = findProjectConfig(workingDir, repository?.root);
  if (!file) throw new UsageError(`There is no codeloops.toml in ${workingDir} or the folders above it${repository ? ` up to ${repository.root}` : ''}.`);
  if (options.revoke) {
    setProjectTrust(file, null);
    process.stdout.write(`${sanitizeForTerminal(file)} is no longer trusted: what it would run is refused until you trust it again.\n`);
    return 0;
  }
  // Read as a loop reads it, refusals and all; what it runs is what the refusal lists.
  let refusal: ProjectUntrustedError | undefined;
  try {
    loadRunSettings({ workingDir, repositoryRoot: repository?.root });
  } catch (error) {
    if (!(error instanceof ProjectUntrustedError)) throw error;
    refusal = error;
  }
  const hash = refusal?.hash ?? contentHash(readConfigText(file) ?? '');
  setProjectTrust(file, hash);
  const listed = (refusal?.programs ?? []).map((program) => `  ${sanitizeForTerminal(program.key)}: ${sanitizeForTerminal(program.runs)}`).join('\n');
  process.stdout.write(
    listed
      ? `Trusted ${sanitizeForTerminal(file)} as it is now. Loops in this project may run:\n${listed}\nA change to the file needs trusting again.\n`
      : `Trusted ${sanitizeForTerminal(file)} as it is now. It runs no programs of its own (no commands, arguments or checks).\n`,
  );
  return 0;
}
