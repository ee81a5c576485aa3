import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CandidatesProcess } from '../../src/extension/runner/candidatesProcess.js';
import { QueueController } from '../../src/extension/queue/queueController.js';
import { RunnerClient, type RunnerAnswer } from '../../src/extension/runner/runnerClient.js';
import { doctorIn, forecastIn, planIn } from '../../src/extension/runner/runnerQueries.js';
import { LoopProcess } from '../../src/extension/runner/loopProcess.js';
import { forecastSchema } from '../../src/sessionFormat/forecast.js';
import { queueListAnswerSchema } from '../../src/sessionFormat/cliAnswers.js';
import * as z from '../../src/sessionFormat/zod.js';
import type { QueueTask } from '../../src/sessionFormat/queueRecords.js';
import { FakeEditor, folderAt, runnerClientFor } from '../support/fakeEditor.js';
import { stopRunners } from '../support/processes.js';
import { createRepo, isolateHome, removeTempDirs, tempDir } from '../support/testEnvironment.js';

/**
 * A stand-in for `dist/cli.js`: it records the argv it was given (one JSON line a call)
 * and then answers as `STANDIN_MODE` says: the hostile runner, the crashing one, the
 * one that never ends.
 */
const STANDIN = String.raw`
const fs = require('node:fs');
fs.appendFileSync(process.env.STANDIN_LOG, JSON.stringify(process.argv.slice(2)) + '\n');
const forecast = '{"ok":false}';
switch (process.env.STANDIN_MODE) {
  case 'garbage': process.stdout.write('\u0000\u00ff not json at all\n'); break;
  case 'wrong-shape': process.stdout.write('{"tasks": 42}\n'); break;
  case 'silent': break;
  case 'details-array':
    process.stdout.write(JSON.stringify({ failure: { code: 'usage', message: 'bad', details: [1, 2], hint: null } }) + '\n');
    process.exitCode = 2;
    break;
  case 'half-then-kill':
    process.stdout.write('{"failure":{"code":"usage","mess', () => process.kill(process.pid, 'SIGKILL'));
    break;
  case 'hang': fs.writeFileSync(process.env.STANDIN_LOG + '.pid', String(process.pid)); setInterval(() => {}, 1000); break;
  case 'flood': {
    const chunk = 'x'.repeat(1024 * 1024);
    let written = 0;
    const more = () => { while (written++ < 200) if (!process.stdout.write(chunk)) return process.stdout.once('drain', more); };
    more();
    break;
  }
  case 'huge': process.stdout.write(JSON.stringify({ pad: 'x'.repeat(30 * 1024 * 1024) }) + '\n'); break;
  default: break;
}
`;

function standIn(mode: string, trusted: boolean): { client: RunnerClient; calls: () => string[][]; pid: () => number } {
  const dir = tempDir('standin-');
  const cli = path.join(dir, 'cli.cjs');
  fs.writeFileSync(cli, STANDIN);
  const log = path.join(dir, 'argv.jsonl');
  fs.writeFileSync(log, '');
  const client = new RunnerClient({
    cliPath: cli,
    nodePath: process.execPath,
    env: { ...process.env, STANDIN_LOG: log, STANDIN_MODE: mode },
    isTrusted: () => trusted,
  });
  const pid = () => Number(fs.readFileSync(log + '.pid', 'utf8'));
  const calls = () =>
    fs
      .readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);
  return { client, calls, pid };
}

/** Where argv gives `--trust` as a flag: before any "--", and not the value of a flag that takes one (`-p --trust` is a prompt). */
function trustFlags(argv: readonly string[]): number[] {
  const end = argv.indexOf('--') < 0 ? argv.length : argv.indexOf('--');
  return argv.flatMap((arg, index) => (arg === '--trust' && index < end && argv[index - 1] !== '-p' ? [index] : []));
}

function queueFor(client: RunnerClient, answer = '--trust') {
  const editor = new FakeEditor();
  editor.answer(/asks:/, answer);
  editor.answer(/^Remove task/, 'Remove');
  return new QueueController({
    window: editor.window,
    commands: editor.commands,
    log: editor.log,
    runner: client,
    pickChecklist: async () => undefined,
    fileUri: (filePath) => filePath,
    blobUri: (_root, _commit, filePath) => filePath,
  });
}

/** Every way the extension starts the runner, each operand hostile: run, resume, candidates, the queue, the queries. */
async function everyPath(client: RunnerClient, dir: string): Promise<void> {
  const hostileId = '-rf \n🧨';
  const quiet = () => {};
  await new LoopProcess(client, { workingDir: dir, prompt: { text: '--trust' }, editorSettings: '{}' }, quiet).done;
  await new LoopProcess(client, { workingDir: dir, prompt: { file: path.join(dir, '-p.md') } }, quiet).done;
  await new LoopProcess(client, { workingDir: dir, prompt: { resume: hostileId, force: true, answer: '--trust' }, overrides: { maxIterations: 3 } }, quiet)
    .done;
  await new CandidatesProcess(client, { workingDir: dir, prompt: '--trust', candidates: 'claude,codex', times: 2 }, quiet).done;
  const queue = queueFor(client);
  const folder = folderAt(dir);
  const task = { id: 7, state: 'needs_input', question: 'which?', branch: 'codeloops/7-x' } as unknown as QueueTask;
  await queue.run(folder);
  await queue.answer(folder, task);
  await queue.list(folder);
  await queue.addPrompt(folder, '--trust');
  await queue.move(folder, task, { position: 1 });
  await queue.remove(folder, task);
  await queue.merge(folder, task);
  await planIn(client, { workingDir: dir }, '--trust', { check: ['--trust'] });
  await forecastIn(client, { workingDir: dir });
  await doctorIn(client, { workingDir: dir });
}

describe('the runner client under attack (a stand-in runner records what it is given and answers badly)', function () {
  this.timeout(60_000);
  afterEach(stopRunners);
  after(removeTempDirs);

  it('never gives an untrusted workspace --trust, on any path, whatever the operands hold', async () => {
    const { client, calls } = standIn('silent', false);
    await everyPath(client, tempDir('untrusted-'));
    const argvs = calls();
    assert.equal(argvs.length, 14, JSON.stringify(argvs));
    assert.deepEqual(
      argvs.filter((argv) => trustFlags(argv).length > 0),
      [],
      'an untrusted workspace was given --trust',
    );
  });

  it('gives a trusted workspace --trust only where the project may run programs, always as a flag before "--", the operands after it untouched', async () => {
    const { client, calls } = standIn('silent', true);
    await everyPath(client, tempDir('trusted-'));
    const argvs = calls();
    const trusting = argvs.filter((argv) => trustFlags(argv).length > 0);
    assert.ok(
      trusting.every((argv) => trustFlags(argv).length === 1),
      JSON.stringify(trusting),
    );
    // run, run from a file, resume, candidates, queue run, queue answer, the dry-run plan
    assert.equal(trusting.length, 7, JSON.stringify(argvs));
    for (const argv of trusting) {
      const end = argv.indexOf('--');
      assert.ok(end < 0 || argv.indexOf('--trust') < end, `--trust after "--": ${JSON.stringify(argv)}`);
      // A value that reads "--trust" stays glued to its flag.
      assert.ok(!argv.some((arg, index) => arg === '--trust' && index > 0 && /^--(prompt|answer|check)$/.test(argv[index - 1]!)), JSON.stringify(argv));
    }
    const resume = argvs.find((argv) => argv[0] === 'resume')!;
    assert.deepEqual(resume.slice(resume.indexOf('--')), ['--', '-rf \n🧨']);
    const answer = argvs.find((argv) => argv[1] === 'answer')!;
    assert.deepEqual(answer.slice(answer.indexOf('--')), ['--', '7', '--trust']);
    const forecast = argvs.find((argv) => argv[0] === 'forecast')!;
    assert.ok(!forecast.includes('--trust'));
  });

  for (const mode of ['garbage', 'wrong-shape', 'silent', 'half-then-kill', 'details-array']) {
    it(`a runner that answers ${mode}: ask resolves with runner_crashed, never rejects or hangs`, async () => {
      const { client } = standIn(mode, true);
      const answered: RunnerAnswer<unknown> = await client.ask(forecastSchema, ['forecast', '--json'], { workingDir: tempDir('ask-') });
      assert.equal(answered.ok, false);
      assert.ok(!answered.ok && answered.failure.code === 'runner_crashed', JSON.stringify(answered));
    });
  }

  it('an operand holding NUL (a task from a chat model) is a usage failure, never a throw', async () => {
    const { client, calls } = standIn('silent', true);
    const dir = tempDir('nul-');
    const plan = await planIn(client, { workingDir: dir }, 'fix\u0000this').catch((error: unknown) => ({ threw: String(error) }));
    assert.ok('ok' in plan && !plan.ok && plan.failure.code === 'usage', JSON.stringify(plan));
    let end: unknown;
    try {
      end = await new LoopProcess(client, { workingDir: dir, prompt: { text: 'fix\u0000this' } }, () => {}).done;
    } catch (error) {
      end = { threw: String(error) };
    }
    assert.ok(typeof end === 'object' && end !== null && 'kind' in end && (end as { code?: string }).code === 'usage', JSON.stringify(end));
    const job = await queueFor(client, 'use \u0000').answer(folderAt(dir), { id: 3, state: 'needs_input', question: '?' } as unknown as QueueTask);
    assert.equal(job, undefined, 'queue answer with a NUL did not throw');
    assert.equal(calls().length, 0, 'nothing was started');
  });

  it("the real runner: a flag it refuses while parsing (a chat model's maxIterations 2.5) is a usage refusal, not a crash", async () => {
    const home = isolateHome();
    home.restore();
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const client = runnerClientFor(home.env);
    const end = await new LoopProcess(client, { workingDir: repo, prompt: { text: 'x' }, overrides: { maxIterations: 2.5 } }, () => {}).done;
    assert.equal(end.kind, 'refused', JSON.stringify(end));
    assert.equal(end.kind === 'refused' && end.code, 'usage');
    const plan = await planIn(client, { workingDir: repo }, 'x', { maxIterations: -1 });
    assert.ok(!plan.ok && plan.failure.kind === 'refused' && plan.failure.code === 'usage', JSON.stringify(plan));
  });

  it('a runner that never answers: a question is given up after its time, the runner stopped, never a promise pending forever', async () => {
    const { client, pid } = standIn('hang', true);
    const asked = client.ask(forecastSchema, ['forecast', '--json'], { workingDir: tempDir('hang-'), answerWithinMs: 500 });
    const waited = await Promise.race([asked, new Promise<'pending'>((resolve) => setTimeout(() => resolve('pending'), 8_000))]);
    assert.notEqual(waited, 'pending', 'ask still waits on a runner that never answers');
    assert.ok(
      waited !== 'pending' && !waited.ok && waited.failure.code === 'runner_crashed' && /did not answer within/.test(waited.failure.message),
      JSON.stringify(waited),
    );
    assert.throws(() => process.kill(pid(), 0), 'the hung runner was left running');
  });

  it("a runner that answers the wrong shape is said so (what it printed), not 'without an answer'", async () => {
    const { client } = standIn('wrong-shape', true);
    const answered = await client.ask(forecastSchema, ['forecast', '--json'], { workingDir: tempDir('shape-') });
    assert.ok(!answered.ok && /cannot read: .*tasks/.test(answered.failure.message), JSON.stringify(answered));
  });

  it('a huge answer (30 MB) is read whole', async () => {
    const { client } = standIn('huge', true);
    const answered = await client.ask(z.object({ pad: z.string() }), ['forecast', '--json'], { workingDir: tempDir('huge-') });
    assert.ok(answered.ok && answered.answer.pad.length === 30 * 1024 * 1024, JSON.stringify(answered).slice(0, 300));
  });

  it("a workspace folder that is gone (deleted, unmounted): the runner says directory_missing, never a crash blaming the editor's Node", async () => {
    const home = isolateHome();
    home.restore();
    const gone = path.join(tempDir('gone-'), 'folder');
    const client = runnerClientFor(home.env);
    const listed = await client.ask(queueListAnswerSchema, ['queue', 'list', '--json', '--working-dir', gone], { workingDir: gone });
    assert.ok(!listed.ok && listed.failure.code === 'directory_missing', JSON.stringify(listed));
    const end = await new LoopProcess(client, { workingDir: gone, prompt: { text: 'x' } }, () => {}).done;
    assert.ok(end.kind === 'refused' && end.code === 'directory_missing', JSON.stringify(end));
    const queue = queueFor(client);
    assert.equal(await queue.list(folderAt(gone)), undefined);
  });

  it('a runner that floods stdout (200 MB) is stopped at the answer cap, never held whole in the editor', async () => {
    const { client } = standIn('flood', true);
    const answered = await client.ask(forecastSchema, ['forecast', '--json'], { workingDir: tempDir('flood-') });
    assert.ok(
      !answered.ok && answered.failure.code === 'runner_crashed' && /more than 64 MB/.test(answered.failure.message),
      JSON.stringify(answered).slice(0, 500),
    );
  });
});
