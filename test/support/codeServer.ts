import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import type { VsCodeTools } from './vscodeTools.js';

/** Chromium as this machine allows it: no sandbox as root, no GPU, no calls home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
    server.on('error', reject);
  });
}

export interface RunningServer {
  output(): string;
  stop(): void;
}

/** Starts a VS Code server (with Node 24) and resolves once it prints `ready`; output goes to `logFile` too. */
export async function startServer(
  tools: VsCodeTools,
  args: string[],
  options: { env: NodeJS.ProcessEnv; ready: RegExp; logFile?: string },
): Promise<RunningServer> {
  const child = spawn(tools.node24, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const record = (chunk: string): void => {
    output += chunk;
    if (options.logFile) fs.appendFileSync(options.logFile, chunk);
  };
  child.stdout.setEncoding('utf8').on('data', record);
  child.stderr.setEncoding('utf8').on('data', record);
  const started = Date.now();
  while (!options.ready.test(output)) {
    if (child.exitCode !== null) throw new Error(`the VS Code server exited (${child.exitCode}):\n${output}`);
    if (Date.now() - started > 60_000) throw new Error(`the VS Code server did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    output: () => output,
    stop() {
      try {
        // The whole group: the server, its extension host and whatever that started.
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    },
  };
}

export function launchChromium(tools: VsCodeTools): Promise<Browser> {
  return chromium.launch({ executablePath: tools.chromium, args: CHROMIUM_ARGS });
}
