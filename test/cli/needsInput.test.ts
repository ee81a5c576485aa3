import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runSummarySchema } from '../../src/sessionFormat/runEvents.js';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { followRunEvents, runCli, startCli, startCliAtTerminal } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { carryOnNaming, decision, done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { removeTempDirs } from '../support/testEnvironment.js';

const QUESTION = 'Should the greeting be formal or casual?';
const blocked = decision({ type: 'blocked', question: QUESTION });

/** The one session a run at the terminal wrote (its id is on the screen, not on a stdout of its own), and its sidecar's events. */
function onlySession(sessionsDir: string, env: Record<string, string>) {
  const files = fs.readdirSync(sessionsDir).filter((name) => name.endsWith('.jsonl'));
  assert.equal(files.length, 1, files.join(', '));
  const id = files[0]!.replace(/\.jsonl$/, '');
  const session = assertValidSessionFile(path.join(sessionsDir, files[0]!));
  const events = readJsonLines(path.join(sidecarDirOf(id, env), 'events.jsonl'));
  return { id, session, events };
}

describe('"needs you" through the CLI', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it('at a terminal: the CLI shows the question, the answer typed goes to the next actor as the user’s words, and the loop ends success', async () => {
    const { repo, env, agent, home } = scriptedCliSetup({
      actor: [[{ write: { path: 'greeting.txt', content: 'Hi\n' } }], [{ write: { path: 'greeting.txt', content: 'Good day\n' } }]],
      critic: [[blocked], [done('formal greeting')]],
    });
    const run = startCliAtTerminal(['-p', 'Write a greeting'], { cwd: repo, env });
    await run.waitForScreen(/Type your answer and press Enter/);
    assert.equal(agent.calls('actor'), 1, 'the loop waits for the answer');
    run.type('Formal, please.\n');
    const result = await run.done;
    assert.equal(result.timedOut, false, result.stdout);
    assert.equal(result.code, 0, result.stdout);
    assert.match(result.stdout, /Iteration 1: The critic needs you: Should the greeting be formal or casual\?/);
    assert.match(
      agent.prompt('actor', 2),
      /The reviewer asked the user: Should the greeting be formal or casual\?\nTheir answer, in their words:\n```\nFormal, please\.\n```/,
    );
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Good day\n');
    const { session, events } = onlySession(home.sessionsDir, env);
    assert.equal(session.end?.outcome, 'success');
    assert.deepEqual(session.iterations[0]!.needs_input, { from: 'critic', question: QUESTION });
    assert.ok(events.some((event) => event.type === 'needs_input' && event.iteration === 1));
    assert.ok(events.some((event) => event.type === 'needs_input_answered' && event.iteration === 1 && event.answer === 'Formal, please.'));
  });

  for (const [key, name] of [
    ['\x04', 'Ctrl+D (the end of input)'],
    ['\x03', 'Ctrl+C'],
  ] as const) {
    it(`at a terminal, ${name} at the question ends the loop interrupted, the work and the question kept for resume --answer`, async () => {
      const { repo, env, agent, home } = scriptedCliSetup({
        actor: [[{ write: { path: 'greeting.txt', content: 'Hi\n' } }], [{ write: { path: 'greeting.txt', content: 'Good day\n' } }]],
        critic: [[blocked], [done('formal greeting')]],
      });
      const run = startCliAtTerminal(['-p', 'Write a greeting'], { cwd: repo, env });
      await run.waitForScreen(/Type your answer and press Enter/);
      run.type(key);
      const result = await run.done;
      assert.equal(result.timedOut, false, result.stdout);
      assert.equal(result.code, 130, result.stdout);
      assert.match(result.stdout, /Answer it and carry on: codeloops resume \S+ --answer "<your answer>"/);
      assert.equal(agent.calls('actor'), 1, 'no actor ran without the answer');
      assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hi\n', 'the first iteration’s work is kept');
      const { id, session, events } = onlySession(home.sessionsDir, env);
      assert.equal(session.end?.outcome, 'interrupted');
      assert.ok(!events.some((event) => event.type === 'needs_input_answered'));

      const resumed = await runCli(['resume', id, '--answer', 'Formal, please.', '--json-output'], { cwd: repo, env });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(agent.prompt('actor', 2), /Their answer, in their words:\n```\nFormal, please\.\n```/);
    });
  }

  it('headless (--json-output, no terminal): ends failed with needs_input and the question; resume --answer carries it on with the answer as the user’s words', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [[{ write: { path: 'greeting.txt', content: 'Hi\n' } }], [{ write: { path: 'greeting.txt', content: 'Good day\n' } }]],
      critic: [[blocked], [done('formal greeting')]],
    });
    const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 2, run.stderr);
    const summary = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(summary.status, 'failed');
    assert.equal(summary.error_code, 'needs_input');
    assert.equal(summary.stop_reason, 'needs_input');
    assert.equal(summary.error, QUESTION);
    assert.ok(run.stderr.includes(`codeloops resume ${summary.session_id} --answer "<your answer>"`), run.stderr);
    const ended = assertValidSessionFile(summary.session_file);
    assert.equal(ended.end?.error_code, 'needs_input');
    assert.deepEqual(ended.iterations[0]!.needs_input, { from: 'critic', question: QUESTION });

    const shown = await runCli(['sessions', 'show', summary.session_id], { cwd: repo, env });
    assert.match(shown.stdout, /the critic needs you: Should the greeting be formal or casual\?/);
    assert.match(shown.stdout, /stopped by a question only you can answer: Should the greeting be formal or casual\?/);

    const resumed = await runCli(['resume', summary.session_id, '--answer', 'Formal, please.', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(runSummarySchema.parse(JSON.parse(resumed.stdout)).status, 'success');
    const second = agent.prompt('actor', 2);
    assert.match(second, /The reviewer asked the user: Should the greeting be formal or casual\?\nTheir answer, in their words:\n```\nFormal, please\.\n```/);
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Good day\n');

    // The replay tells the question, the headless end and the answer given on resume.
    const replay = await runCli(['sessions', 'replay', 'latest'], { cwd: repo, env });
    assert.match(replay.stdout, /you answered: Formal, please\./);
  });

  it('a question asked in iteration 2, answered with resume --answer: the answer belongs to iteration 2 and reaches the next actor', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [
        [{ write: { path: 'greeting.txt', content: 'Hi\n' } }],
        [{ write: { path: 'greeting.txt', content: 'Hello\n' } }],
        [{ write: { path: 'greeting.txt', content: 'Good day\n' } }],
      ],
      critic: [[carryOnNaming('Make it a full word.', [], { file: 'greeting.txt', line: 1 })], [blocked], [done('formal greeting')]],
    });
    const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    const summary = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.deepEqual([summary.error_code, summary.iterations], ['needs_input', 2], run.stderr);

    const resumed = await runCli(['resume', summary.session_id, '--answer', 'Formal, please.', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    const carried = runSummarySchema.parse(JSON.parse(resumed.stdout));
    assert.equal(carried.status, 'success');
    const third = agent.prompt('actor', 3);
    assert.match(third, /The reviewer asked the user: Should the greeting be formal or casual\?\nTheir answer, in their words:\n```\nFormal, please\.\n```/);
    assert.doesNotMatch(third, /went on without answering/);
    const answered = readJsonLines(path.join(sidecarDirOf(carried.session_id, env), 'events.jsonl')).filter((event) => event.type === 'needs_input_answered');
    assert.deepEqual(
      answered.map((event) => [event.iteration, event.answer]),
      [[2, 'Formal, please.']],
    );
    // The replay shows the answer with the iteration that asked.
    const replay = await runCli(['sessions', 'replay', carried.session_id], { cwd: repo, env });
    assert.match(replay.stdout, /\bit 2 +you answered: Formal, please\./);
  });

  it('resume --answer is refused for a session that asked nothing', async () => {
    const { repo, env } = scriptedCliSetup({
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]],
      critic: [[decision({ type: 'continue', feedback: 'more' })]],
    });
    const run = await runCli(['-p', 'Write a', '-n', '1', '--json-output'], { cwd: repo, env });
    const id = runSummarySchema.parse(JSON.parse(run.stdout)).session_id;
    const refused = await runCli(['resume', id, '--answer', 'yes', '-n', '3'], { cwd: repo, env });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /is not waiting for an answer/);
  });

  it('the control channel (--events ndjson, a piped stdin): the loop pauses with the question, and an answer message carries it on', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [[{ print: 'Stuck.\n<needs_input>Which port should the server listen on?</needs_input>' }], [{ write: { path: 'port.txt', content: '8080\n' } }]],
      critic: [[done('listens on 8080')]],
    });
    const run = startCli(['-p', 'Start a server', '--events', 'ndjson'], { cwd: repo, env, stdin: 'pipe' });
    const { events, until } = followRunEvents(run);
    await until((seen) => seen.some((event) => event.type === 'review_paused'));
    const paused = events.find((event) => event.type === 'review_paused');
    assert.deepEqual(paused?.type === 'review_paused' ? paused.needs_input : undefined, { from: 'actor', question: 'Which port should the server listen on?' });
    assert.ok(!fs.existsSync(path.join(repo, 'port.txt')), 'the loop waits for the answer');
    run.child.stdin!.write(`${JSON.stringify({ type: 'answer', text: 'Port 8080.' })}\n`);
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      agent.prompt('actor', 2),
      /You asked the user: Which port should the server listen on\?\nTheir answer, in their words:\n```\nPort 8080\.\n```/,
    );
    assert.equal(agent.calls('critic'), 1);
  });
});
