import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { doctorReportSchema, type DoctorReport } from '../../src/sessionFormat/doctorReport.js';
import { runCli, stopCliRuns } from '../support/cliProcess.js';
import { installedVersion, realAgentHome } from '../support/realAgents.js';
import { createRepo, removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

const isRoot = process.getuid?.() === 0;
/** Keys the agents would find, so that only what a test changes is wrong. */
const LOGGED_IN = { ANTHROPIC_API_KEY: 'sk-test', OPENAI_API_KEY: 'sk-test', GEMINI_API_KEY: 'test', IS_SANDBOX: '1' };

async function doctor(args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; report: DoctorReport; stderr: string }> {
  const result = await runCli(['doctor', '--json', ...args], { cwd, env });
  return { code: result.code, report: doctorReportSchema.parse(JSON.parse(result.stdout)), stderr: result.stderr };
}

function globalConfig(env: Record<string, string>, toml: string): string {
  const file = path.join(env.XDG_CONFIG_HOME!, 'codeloops', 'config.toml');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, toml);
  return file;
}

/** A stand-in binary (a shell script) that prints what `--version` should say. */
function fakeBinary(name: string, versionOutput: string): string {
  const file = path.join(tempDir('codeloops-fake-bin-'), name);
  fs.writeFileSync(file, `#!/bin/sh\necho ${JSON.stringify(versionOutput)}\n`, { mode: 0o755 });
  return file;
}

describe('codeloops doctor (the built CLI, the real agent CLIs)', () => {
  afterEach(stopCliRuns);
  after(removeTempDirs);

  it('finds each configured agent, its version and that the version is tested; exit 0 when a run could start', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { env } = realAgentHome({}, ['codex', 'gemini']);
    const config = globalConfig(env, '[defaults]\nagent = "claude"\n\n[defaults.critic]\nagent = "codex"\n');
    const { code, report } = await doctor([], repo, { ...env, ...LOGGED_IN });
    assert.equal(code, 0, JSON.stringify(report, null, 2));
    assert.equal(report.ok, true);
    assert.deepEqual(report.config_files, [config]);
    assert.deepEqual(
      report.agents.map((agent) => [agent.roles, agent.agent, path.basename(agent.program ?? ''), agent.tested, agent.problems]),
      [
        [['actor'], 'claude', 'claude', true, []],
        [['critic'], 'codex', 'codex', true, []],
      ],
    );
    const [claude, codex] = report.agents;
    assert.equal(claude!.version, /\d+\.\d+\.\d+/.exec(installedVersion('claude'))![0]);
    assert.equal(codex!.version_output, installedVersion('codex'));
    assert.deepEqual(codex!.tested_versions, adapterFor('codex').testedVersions);

    // The flags a run takes choose the agents here too; one program for both roles is one entry.
    const gemini = await doctor(['-a', 'gemini'], repo, { ...env, ...LOGGED_IN });
    assert.deepEqual(
      gemini.report.agents.map((agent) => [agent.roles, agent.agent, agent.version, agent.tested]),
      [[['actor', 'critic'], 'gemini', installedVersion('gemini'), true]],
    );
  });

  it('says what is wrong and how to fix it: not logged in, root without IS_SANDBOX, a binary not on PATH; exit 1', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { env } = realAgentHome({}, ['codex']);
    const result = await runCli(['doctor', '--actor-agent', 'claude', '--critic-agent', 'cursor'], {
      cwd: repo,
      // No keys and no logins in the agents' home; IS_SANDBOX empty is unset.
      env: { ...env, ANTHROPIC_API_KEY: '', IS_SANDBOX: '' },
    });
    assert.equal(result.code, 1, result.stdout);
    assert.match(result.stdout, /✗ actor: Claude Code {2}\S+\/claude {2}\d+\.\d+\.\d+ \(tested\)/);
    assert.match(
      result.stdout,
      /problem: Claude Code has no login: no .*\.credentials\.json and no ANTHROPIC_API_KEY\.\n {4}fix: run "claude" once and log in/,
    );
    if (isRoot)
      assert.match(
        result.stdout,
        /problem: Running as root, Claude Code refuses to skip permission prompts .*\n {4}fix: on a disposable machine, set IS_SANDBOX = "1" under \[agents\.claude\.env\] in .*config\.toml/,
      );
    else assert.doesNotMatch(result.stdout, /IS_SANDBOX/);
    assert.match(
      result.stdout,
      /✗ critic: Cursor {2}not found\n {2}problem: "cursor-agent" was not found on PATH\.\n {4}fix: install it \(see https:\/\/cursor\.com\/cli\)/,
    );
    assert.match(result.stdout, /problems would stop a run/);
  });

  it('checks a configured path (not executable), warns about an untested version without failing, and never runs a project’s own command', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const { env } = realAgentHome({}, []);
    const notExecutable = path.join(tempDir(), 'gemini');
    fs.writeFileSync(notExecutable, '#!/bin/sh\n');
    const newerCodex = fakeBinary('codex', 'codex-cli 9.9.9');
    globalConfig(env, `[agents.codex]\npath = ${JSON.stringify(newerCodex)}\n\n[agents.gemini]\npath = ${JSON.stringify(notExecutable)}\n`);

    const untested = await doctor(['-a', 'codex'], repo, { ...env, ...LOGGED_IN });
    assert.equal(untested.code, 0, 'a warning does not stop a run');
    const [codex] = untested.report.agents;
    assert.equal(codex!.version, '9.9.9');
    assert.equal(codex!.tested, false);
    assert.deepEqual(
      codex!.problems.map((problem) => [problem.code, problem.severity]),
      [['untested_version', 'warning']],
    );
    assert.match(codex!.problems[0]!.fix, /npm install -g @openai\/codex@0\.169\.0/);

    const broken = await doctor(['-a', 'gemini'], repo, { ...env, ...LOGGED_IN });
    assert.equal(broken.code, 1);
    assert.deepEqual(
      broken.report.agents[0]!.problems.map((problem) => problem.code),
      ['not_executable'],
    );
    assert.match(broken.report.agents[0]!.problems[0]!.fix, /chmod \+x/);

    // A project file naming a program: reported as untrusted, and the program is never run (not even --version).
    const marker = path.join(tempDir(), 'ran');
    writeFile(repo, 'codeloops.toml', `[critic]\nagent = "command"\ncommand = ["sh", "-c", "touch ${marker}"]\n`);
    const project = await doctor(['--actor-agent', 'codex'], repo, { ...env, ...LOGGED_IN });
    assert.equal(project.code, 1);
    assert.deepEqual(
      project.report.problems.map((problem) => problem.code),
      ['project_untrusted'],
    );
    assert.equal(project.report.agents[1]!.agent, 'command');
    assert.match(project.report.agents[1]!.program ?? '', /\/sh$/);
    assert.equal(fs.existsSync(marker), false, 'the command was not run');
  });
});
