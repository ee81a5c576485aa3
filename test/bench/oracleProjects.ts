/**
 * The real projects the oracle's benchmarks run on, fetched from Debian as the tests
 * fetch them (`test/support/debianSources.ts`): bytes (mocha) and toolz (pytest).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { CheckSpec } from '../../src/checks/runCheck.js';
import { debianSource, type DebianSource } from '../support/debianSources.js';

export interface Project {
  source: DebianSource;
  check: CheckSpec;
  /** A change of the library's code that keeps its tests passing: the final code. */
  edit: { file: string; append: string };
}

export const PROJECTS: Project[] = [
  {
    source: { name: 'node-bytes', version: '3.1.2-1', licence: 'LICENSE' },
    check: { name: 'tests', run: 'npm test', timeoutSecs: 300, required: true },
    edit: { file: 'index.js', append: '\n// refactored\n' },
  },
  {
    source: { name: 'toolz', version: '0.12.0-1', licence: 'LICENSE.txt' },
    check: { name: 'tests', run: '/usr/bin/python3 -m pytest -q -p no:cacheprovider toolz/tests', timeoutSecs: 300, required: true },
    edit: { file: 'toolz/itertoolz.py', append: '\n# refactored\n' },
  },
];

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** The project in a fresh repository under the benchmark's folder, with the final code committed on top: [start, final]. */
export async function projectRepository(project: Project, root: string): Promise<{ repo: string; start: string; final: string }> {
  const fetched = await debianSource(project.source);
  const repo = path.join(root, project.source.name);
  fs.rmSync(repo, { recursive: true, force: true });
  fs.cpSync(fetched.tree, repo, { recursive: true });
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, '-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'add', '-A');
  git(repo, '-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-m', 'start');
  const start = git(repo, 'rev-parse', 'HEAD');
  fs.appendFileSync(path.join(repo, project.edit.file), project.edit.append);
  git(repo, '-c', 'user.name=bench', '-c', 'user.email=bench@localhost', 'commit', '-q', '-am', 'final');
  return { repo, start, final: git(repo, 'rev-parse', 'HEAD') };
}

/** bytes' `npm test` runs mocha, which its tree does not install: this repository's own, on PATH, as the tests give it. */
export function mochaOnPath(): void {
  process.env.PATH = `${path.join(process.cwd(), 'node_modules', '.bin')}${path.delimiter}${process.env.PATH ?? ''}`;
}
