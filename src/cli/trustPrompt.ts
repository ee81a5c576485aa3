import readline from 'node:readline/promises';
import { setProjectTrust, type ProjectUntrustedError } from '../config/projectTrust.js';
import { prepareRun, type PrepareOptions, type PreparedRun } from '../loop/prepareRun.js';
import { isCodeloopsError } from '../sessionFormat/failures.js';
import { sanitizeForTerminal } from '../text/terminalText.js';

/**
 * Prepares a run; when the project file would run programs the user has not trusted,
 * asks at the terminal (showing exactly what would run) and, on yes, trusts the file
 * as it is and goes on. Without a terminal to ask at, the refusal stands.
 */
export async function prepareRunAsking(options: PrepareOptions, interactive: boolean): Promise<PreparedRun> {
  try {
    return await prepareRun(options);
  } catch (error) {
    if (!isCodeloopsError(error) || error.code !== 'project_untrusted' || !interactive || !process.stdin.isTTY || !process.stderr.isTTY) throw error;
    if (!(await askToTrust(error as ProjectUntrustedError))) throw error;
    return prepareRun(options);
  }
}

async function askToTrust(error: ProjectUntrustedError): Promise<boolean> {
  const file = sanitizeForTerminal(error.file);
  const programs = error.programs.map((program) => `  ${sanitizeForTerminal(program.key)}: ${sanitizeForTerminal(program.runs)}`).join('\n');
  const prompt = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${file} would run these programs on this machine:\n${programs}\nTrust this file as it is now, and run them? [y/N] `);
    if (!/^\s*y(es)?\s*$/i.test(answer)) return false;
    // Exactly the content that was shown: if the file changed meanwhile, the run is refused again.
    setProjectTrust(error.file, error.hash);
    process.stderr.write(`Trusted ${file} (a change to it needs trusting again; "codeloops trust --revoke" takes it back).\n`);
    return true;
  } finally {
    prompt.close();
  }
}
