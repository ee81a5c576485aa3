import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { repoRoot, tempDir } from './testEnvironment.js';
import { ensureVsCodeTools, vscodeTools, type VsCodeTools } from './vscodeTools.js';

/**
 * A real VS Code for the tests: the VS Code server inside npm `code-server`, run with
 * Node 24 (see vscodeTools.ts), for Chromium to open. One starter for both ways the
 * tests use it (see /work/shared/notes/vscode-testing.md for why these two):
 * - the packaged VSIX, installed and served by code-server's own CLI, as a user runs it;
 * - this checkout as the extension under development, its mocha suite run by the
 *   upstream server with the smoke-test driver (code-server's CLI refuses that flag).
 */

/** Chromium as this machine allows it: no sandbox as root, no GPU, no calls home. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];

export function launchChromium(tools: VsCodeTools = vscodeTools()): Promise<Browser> {
  return chromium.launch({ executablePath: tools.chromium, args: CHROMIUM_ARGS });
}

/** A workbench without the welcome page, the chat, tips and the command center: nothing between the test and Codeloops. */
const QUIET_WORKBENCH = {
  'workbench.startupEditor': 'none',
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'chat.disableAIFeatures': true,
  'workbench.tips.enabled': false,
  'window.commandCenter': false,
};

let packaged: string | undefined;

/** codeloops.vsix, packaged from this checkout once per test run (a VSIX left by an earlier run may be stale). */
export function packagedExtension(): string {
  if (!packaged) {
    execFileSync('npm', ['run', 'package'], { cwd: repoRoot(), stdio: 'inherit' });
    packaged = path.join(repoRoot(), 'codeloops.vsix');
  }
  return packaged;
}

export type ExtensionUnderTest =
  /** The packaged extension, installed into the server before it starts. */
  | { vsix: string }
  /** This checkout, with the mocha suite the workbench runs in its extension host once it opens. */
  | { developmentPath: string; testsPath: string };

export interface CodeServerOptions {
  extension: ExtensionUnderTest;
  /** The folder the workbench opens. */
  folder: string;
  /** The server's environment, which its extension host inherits (agents on PATH, isolated XDG folders). */
  env: NodeJS.ProcessEnv;
  /** User settings, over a quiet workbench. */
  settings?: Record<string, unknown>;
  /** Settings of the remote machine (Preferences: Open Remote Settings), which the extension host reads after a reload. */
  machineSettings?: Record<string, unknown>;
  /** false: workspace trust is on and the folder was never trusted, so it opens in Restricted Mode. Default true. */
  trusted?: boolean;
  /** Where the server's output goes too, for a post-mortem. */
  logFile?: string;
}

export interface CodeServer {
  /** The workbench's address, with the folder (and the extension under development) to open. */
  url: string;
  output(): string;
  /** Stops the server, its extension host and whatever they started, and removes the server's folders. */
  stop(): Promise<void>;
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const tools = ensureVsCodeTools();
  const scratch = tempDir('codeloops-vscode-');
  const userData = path.join(scratch, 'user-data');
  const extensions = path.join(scratch, 'extensions');
  writeSettings(path.join(userData, 'User'), { ...QUIET_WORKBENCH, ...options.settings });
  if (options.machineSettings) writeSettings(path.join(userData, 'Machine'), options.machineSettings);
  const trust = options.trusted === false ? [] : ['--disable-workspace-trust'];
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const common = ['--user-data-dir', userData, '--extensions-dir', extensions, ...trust];
  const { extension } = options;

  let args: string[];
  let ready: RegExp;
  let url: string;
  if ('vsix' in extension) {
    const codeServer = path.join(tools.codeServerDir, 'out', 'node', 'entry.js');
    const installed = runToEnd(tools.node24, [codeServer, ...common, '--install-extension', extension.vsix], options.env);
    if (options.logFile) fs.appendFileSync(options.logFile, installed);
    args = [codeServer, '--bind-addr', host, '--auth', 'none', '--disable-telemetry', '--disable-update-check', ...common, options.folder];
    ready = /HTTP server listening/;
    url = `http://${host}/?folder=${encodeURIComponent(options.folder)}`;
  } else {
    const remote = (absolute: string) => `vscode-remote://${host}${absolute}`;
    args = [
      path.join(tools.codeServerDir, 'lib', 'vscode', 'out', 'server-main.js'),
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--enable-smoke-test-driver',
      '--telemetry-level',
      'off',
      '--server-data-dir',
      path.join(scratch, 'server-data'),
      ...common,
    ];
    ready = /Web UI available at|Extension host agent listening/;
    const payload = [
      ['extensionDevelopmentPath', remote(extension.developmentPath)],
      ['extensionTestsPath', remote(extension.testsPath)],
      ['skipWelcome', 'true'],
    ];
    url = `http://${host}/?folder=${encodeURIComponent(remote(options.folder))}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  }
  const server = await startServerProcess(tools, args, { env: options.env, ready, logFile: options.logFile });
  return {
    url,
    output: server.output,
    async stop() {
      await server.stop();
      if (!process.env.KEEP_TEST_DIRS) fs.rmSync(scratch, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

function writeSettings(dir: string, settings: Record<string, unknown>): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'settings.json'), JSON.stringify(settings, null, 2));
}

/** Runs a program to its end and returns what it printed; its output is in the error when it fails. */
function runToEnd(program: string, args: string[], env: NodeJS.ProcessEnv): string {
  try {
    return execFileSync(program, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    throw new Error(`${path.basename(program)} ${args.join(' ')} failed:\n${stdout}${stderr}`, { cause: error });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
    server.on('error', reject);
  });
}

/** Starts a server with Node 24 in a process group of its own; resolves once its output matches `ready`. */
function startServerProcess(
  tools: VsCodeTools,
  args: string[],
  options: { env: NodeJS.ProcessEnv; ready: RegExp; logFile?: string },
): Promise<{ output(): string; stop(): Promise<void> }> {
  const child = spawn(tools.node24, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  const running = {
    output: () => output,
    async stop() {
      if (child.pid === undefined) return;
      try {
        // The whole group: the server, its extension host and whatever that started.
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
      await exited;
    },
  };
  return new Promise((resolve, reject) => {
    const giveUp = setTimeout(() => {
      void running.stop();
      reject(new Error(`the VS Code server did not start within a minute:\n${output}`));
    }, 60_000);
    const record = (chunk: string): void => {
      output += chunk;
      if (options.logFile) fs.appendFileSync(options.logFile, chunk);
      if (options.ready.test(output)) {
        clearTimeout(giveUp);
        resolve(running);
      }
    };
    child.stdout.setEncoding('utf8').on('data', record);
    child.stderr.setEncoding('utf8').on('data', record);
    child.once('error', (error) => {
      clearTimeout(giveUp);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(giveUp);
      reject(new Error(`the VS Code server exited (${code ?? signal}):\n${output}`));
    });
  });
}
