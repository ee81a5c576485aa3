import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import * as tar from 'tar';
import { runCli, type CliResult } from './cliProcess.js';
import { configureScriptedAgent, done, type AgentScript } from './scriptedAgent.js';
import { createRepo, git, isolateHome, tempDir } from './testEnvironment.js';

/** A machine of its own: its own codeloops data and config, the scripted agent in both roles. */
export function machine(script: AgentScript) {
  const home = isolateHome();
  home.restore();
  const agent = configureScriptedAgent(home.configHome, script);
  return { home, agent, env: home.env };
}

/** The repository on a laptop, and a clone of it on a CI runner. */
export function repositoryAndClone(files: Record<string, string> = {}) {
  const laptop = createRepo({ files: { 'README.md': '# project\n', 'src/app.txt': 'v1\n', ...files } });
  const ci = path.join(tempDir('codeloops-ci-'), 'project');
  git(path.dirname(ci), 'clone', '-q', laptop, ci);
  return { laptop, ci };
}

/** The snapshot refs of a repository. */
export function refsIn(repo: string): string[] {
  return git(repo, 'for-each-ref', '--format=%(refname)', 'refs/codeloops/').split('\n').filter(Boolean);
}

/** Every ref of a repository with what it points at: branches, tags, snapshots. */
export function allRefs(repo: string): string {
  return git(repo, 'for-each-ref', '--format=%(objectname) %(refname)');
}

/** One session run on the CI clone and exported: its id and its bundle. */
export async function exportedRun(ci: string, runner: { env: Record<string, string> }): Promise<{ sessionId: string; bundle: string }> {
  const run = await runCli(['-p', 'Make x', '--json-output'], { cwd: ci, env: runner.env });
  assert.equal(run.code, 0, run.stderr);
  const sessionId = JSON.parse(run.stdout).session_id as string;
  const bundle = path.join(tempDir('codeloops-bundle-'), 'bundle.tar.gz');
  const exported = await runCli(['sessions', 'export', sessionId, '-o', bundle], { cwd: ci, env: runner.env });
  assert.equal(exported.code, 0, exported.stderr);
  return { sessionId, bundle };
}

/** A machine whose actor writes one file and whose critic says it is done. */
export const oneStepRunner = () => machine({ actor: [[{ write: { path: 'x.txt', content: 'x\n' } }]], critic: [[done()]] });

/**
 * The same bundle, changed: `edit` gets its unpacked `codeloops-bundle/` folder and
 * may change anything in it (a crafted bundle, as an attacker or a broken tool
 * would make it); the result is packed again as `sessions export` packs it.
 */
export async function repack(bundle: string, name: string, edit: (root: string) => void | Promise<void>): Promise<string> {
  const folder = tempDir('codeloops-repack-');
  await tar.x({ file: bundle, cwd: folder });
  await edit(path.join(folder, 'codeloops-bundle'));
  const file = path.join(path.dirname(bundle), name);
  await tar.c({ gzip: true, file, cwd: folder, portable: true }, ['codeloops-bundle']);
  return file;
}

/** The error an import answered with `--json`. */
export function failureOf(result: CliResult): { code: string; message: string; hint: string | null; details: Record<string, unknown> } {
  assert.equal(result.code, 2, `expected a refusal, got exit ${result.code}: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /\n\s+at /, `no stack trace: ${result.stderr}`);
  return JSON.parse(result.stdout).error;
}

/** No session file and no sidecar record in a data home. */
export function assertNothingImported(home: { sessionsDir: string; dataHome: string }): void {
  for (const folder of [home.sessionsDir, path.join(home.dataHome, 'codeloops', 'sidecars')]) {
    const left = fs.existsSync(folder) ? fs.readdirSync(folder).filter((name) => name !== '_groups') : [];
    assert.deepEqual(left, [], `nothing in ${folder}`);
  }
}
