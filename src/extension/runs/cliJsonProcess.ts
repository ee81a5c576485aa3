import { spawn } from 'node:child_process';

export interface CliJsonOptions {
  /** The bundled runner, `dist/cli.js`, and the program that runs it. */
  cliPath: string;
  nodePath: string;
  workingDir: string;
  /** The editor's settings for the folder, as a run gets them. */
  editorSettings?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * A runner command that answers in JSON (`doctor --json`, `forecast --json`), run in a
 * folder as a run there would be (the same config, the editor's settings included):
 * its answer as `parse` reads it, or undefined when the command could not run or
 * answered otherwise. Never rejects: what it answers is extra, never in the way.
 */
export function readCliJson<T>(options: CliJsonOptions, command: readonly string[], parse: (json: unknown) => T): Promise<T | undefined> {
  const args = [options.cliPath, ...command, '--working-dir', options.workingDir];
  if (options.editorSettings) args.push('--editor-settings', options.editorSettings);
  return new Promise((resolve) => {
    const child = spawn(options.nodePath, args, {
      cwd: options.workingDir,
      env: { ...(options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
      windowsHide: true,
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.on('error', () => resolve(undefined));
    child.on('close', () => {
      try {
        resolve(parse(JSON.parse(stdout)));
      } catch {
        resolve(undefined);
      }
    });
  });
}
