import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { summaryIndexPath } from '../../src/sessions/summaryIndex.js';
import os from 'node:os';
import path from 'node:path';

/** The repository root, found from wherever the test bundle sits. */
export function repoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === 'codeloops') return dir;
    if (path.dirname(dir) === dir) throw new Error(`no codeloops package.json above ${__dirname}`);
  }
}

const created: string[] = [];

/** A fresh folder under the system temp dir, removed after the run. */
export function tempDir(prefix = 'codeloops-test-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

/** Removes the run's temp folders; KEEP_TEST_DIRS=1 keeps them for a post-mortem. */
export function removeTempDirs(): void {
  const dirs = created.splice(0);
  if (process.env.KEEP_TEST_DIRS) {
    process.stdout.write(`kept test folders:\n${dirs.map((dir) => `  ${dir}`).join('\n')}\n`);
    return;
  }
  for (const dir of dirs) {
    fs.rmSync(dir, { recursive: true, force: true });
    // A temp folder used as a sessions folder gets its summary index beside it.
    fs.rmSync(summaryIndexPath(dir), { force: true });
  }
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: 'Test User',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'Test User',
  GIT_COMMITTER_EMAIL: 'test@example.com',
};

/** Runs git in a folder as the test's "user" and returns stdout. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...GIT_IDENTITY }, stdio: ['ignore', 'pipe', 'pipe'] });
}

export interface RepoOptions {
  /** Files to create, by relative path. */
  files?: Record<string, string | Buffer>;
  /** Commit them (default true); false leaves an unborn HEAD with untracked files. */
  commit?: boolean;
  gitignore?: string;
}

export function createRepo(options: RepoOptions = {}): string {
  const dir = tempDir('codeloops-repo-');
  git(dir, 'init', '-q', '-b', 'main');
  if (options.gitignore !== undefined) fs.writeFileSync(path.join(dir, '.gitignore'), options.gitignore);
  for (const [file, content] of Object.entries(options.files ?? {})) writeFile(dir, file, content);
  if (options.commit !== false && (options.files || options.gitignore !== undefined)) {
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'initial');
  }
  return dir;
}

export function writeFile(dir: string, file: string, content: string | Buffer): void {
  const target = path.join(dir, file);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, content);
}

/**
 * `where.sh` at the repository's top and in its folder `sub`, each saying where it ran:
 * one exits 0, the other 1, so whether a check `./where.sh` passes tells which ran.
 * Returns the folder `sub`.
 */
export function twoProgramsOfOneName(repo: string, passing: 'top' | 'sub'): string {
  for (const [file, exit] of [
    ['where.sh', passing === 'top' ? 0 : 1],
    ['sub/where.sh', passing === 'sub' ? 0 : 1],
  ] as const) {
    writeFile(repo, file, `#!/bin/sh\necho "where.sh ran in $PWD"\nexit ${exit}\n`);
    fs.chmodSync(path.join(repo, file), 0o755);
  }
  return path.join(repo, 'sub');
}

/**
 * Every file under a folder (outside `.git`) with its content: what a user would
 * see on disk, for exact assertions. Nested repositories' `.git` folders are skipped too.
 */
export function treeOf(dir: string): Record<string, string> {
  const tree: Record<string, string> = {};
  const walk = (current: string): void => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const full = path.join(current, entry.name);
      const relative = path.relative(dir, full).split(path.sep).join('/');
      if (entry.isDirectory()) walk(full);
      else if (entry.isSymbolicLink()) tree[relative] = `symlink:${fs.readlinkSync(full)}`;
      else {
        const bytes = fs.readFileSync(full);
        const text = bytes.toString('utf8');
        tree[relative] = Buffer.from(text, 'utf8').equals(bytes) ? text : `binary:${bytes.toString('base64')}`;
      }
    }
  };
  walk(dir);
  return tree;
}

export interface IsolatedHome {
  dataHome: string;
  configHome: string;
  sessionsDir: string;
  /** Variables to give a child process so it uses these folders. */
  env: Record<string, string>;
  restore(): void;
}

/** Points XDG_DATA_HOME and XDG_CONFIG_HOME at temp folders for this process and its children. */
export function isolateHome(): IsolatedHome {
  const root = tempDir('codeloops-home-');
  const dataHome = path.join(root, 'data');
  const configHome = path.join(root, 'config');
  fs.mkdirSync(dataHome, { recursive: true });
  fs.mkdirSync(configHome, { recursive: true });
  const previous = { XDG_DATA_HOME: process.env.XDG_DATA_HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
  process.env.XDG_DATA_HOME = dataHome;
  process.env.XDG_CONFIG_HOME = configHome;
  return {
    dataHome,
    configHome,
    sessionsDir: path.join(dataHome, 'codeloops', 'sessions'),
    env: { XDG_DATA_HOME: dataHome, XDG_CONFIG_HOME: configHome },
    restore() {
      for (const [key, value] of Object.entries(previous)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    },
  };
}
