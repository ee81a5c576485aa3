import { execa } from 'execa';
import path from 'node:path';
import { enableMemoryRelease } from '../process/memoryRelease.js';
import { sessionsDir, sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { startUiServer, type UiServer } from '../server/uiServer.js';
import { UsageError } from './usageError.js';

export interface UiOptions {
  /** Given with --port; without it the default, or any free port when that is taken. */
  port?: number;
  /** commander's `--no-open`: false when given. */
  open: boolean;
}

export const DEFAULT_UI_PORT = 3100;

/**
 * `codeloops ui`: serves the sessions API and the browser viewer on 127.0.0.1 until
 * Ctrl+C. The URL goes to stdout (one line, for scripts); everything else to stderr.
 */
export async function uiCommand(options: UiOptions, assetsDirectory = path.join(__dirname, 'webview')): Promise<number> {
  // Listening for Ctrl+C before anything else: whenever it comes, the server is closed properly.
  const stop = whenStopped();
  // A server that has sent a 50 MB line goes back to its own size afterwards, not to the line's several copies.
  enableMemoryRelease();
  let server: UiServer;
  try {
    server = await listen(options.port, assetsDirectory);
  } catch (error) {
    stop.dispose();
    throw error;
  }
  process.stdout.write(`${server.url}\n`);
  process.stderr.write(`Codeloops sessions at ${server.url} (read-only, this machine only). Ctrl+C to stop.\n`);
  if (options.open) openInBrowser(server.url);
  await stop.signalled;
  await server.close();
  process.stderr.write('Stopped.\n');
  return 0;
}

async function listen(port: number | undefined, assetsDirectory: string): Promise<UiServer> {
  const start = (chosen: number) =>
    startUiServer({
      port: chosen,
      sessionsDirectory: sessionsDir(),
      sidecarDirOf: (id) => sidecarDirOf(id),
      assetsDirectory,
      warn: (message) => process.stderr.write(`warning: ${message}\n`),
    });
  try {
    return await start(port ?? DEFAULT_UI_PORT);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw error;
    if (port !== undefined)
      throw new UsageError(
        `Port ${port} on 127.0.0.1 is ${code === 'EACCES' ? 'not allowed' : 'in use'}: pick another with --port, or --port 0 for any free one.`,
      );
    const server = await start(0);
    process.stderr.write(`Port ${DEFAULT_UI_PORT} is in use; using ${server.port} instead.\n`);
    return server;
  }
}

/** Resolves on Ctrl+C, SIGTERM or a closed terminal. */
function whenStopped(): { signalled: Promise<void>; dispose(): void } {
  const signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  let stop = (): void => {};
  const dispose = (): void => {
    for (const signal of signals) process.off(signal, stop);
  };
  const signalled = new Promise<void>((resolve) => {
    stop = () => {
      dispose();
      resolve();
    };
  });
  for (const signal of signals) process.on(signal, stop);
  return { signalled, dispose };
}

/** The program that opens a URL in the user's browser, as an argument list: no shell ever parses the URL. */
export function browserOpener(url: string, platform: NodeJS.Platform = process.platform): [string, string[]] {
  if (platform === 'darwin') return ['open', [url]];
  // `start` is a cmd.exe built-in and would need a shell; explorer.exe opens URLs itself.
  if (platform === 'win32') return ['explorer.exe', [url]];
  return ['xdg-open', [url]];
}

/** Opens the browser without waiting for it; if that fails, the printed URL is enough. */
export function openInBrowser(url: string): void {
  const [command, args] = browserOpener(url);
  const explain = (reason: string): void => {
    process.stderr.write(`Could not open a browser (${reason}); open ${url} yourself.\n`);
  };
  try {
    const child = execa(command, args, { stdio: 'ignore', detached: true, cleanup: false, reject: false });
    child.unref();
    void child.then(
      // explorer.exe answers 1 even when it opened the page.
      (result) => {
        if (result.failed && process.platform !== 'win32')
          explain(result.code === 'ENOENT' ? `${command} was not found` : (result.shortMessage ?? `${command} failed`));
      },
      (error: Error) => explain(error.message),
    );
  } catch (error) {
    explain((error as Error).message);
  }
}
