import assert from 'node:assert/strict';
import { describeEvent } from '../../src/sessionFormat/eventWording.js';
import type { NeedsInput } from '../../src/sessionFormat/needsInput.js';
import { runEventSchema, type RunEvent, type RunEventOf } from '../../src/sessionFormat/runEvents.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { buildTimeline } from '../../src/replay/timeline.js';
import { decision, done } from '../support/scriptedAgent.js';
import { readJsonLines, runScriptedLoop } from '../support/scriptedLoop.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { stopRunners } from '../support/processes.js';
import { createRepo, removeTempDirs } from '../support/testEnvironment.js';

const QUESTION = 'Which database should the app use, Postgres or SQLite?';
const ANSWER = 'SQLite: it ships as one file.';
const blocked = decision({ type: 'blocked', question: QUESTION });

function ofType<T extends RunEvent['type']>(events: readonly RunEvent[], type: T): RunEventOf<T>[] {
  return events.filter((event): event is RunEventOf<T> => event.type === type);
}

describe('"needs you": the critic or the actor asks the user instead of burning iterations', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it('the critic answers blocked: the loop asks, pauses as for review, and the answer reaches the next actor as the user’s words', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const asked: { iteration: number; needs: NeedsInput }[] = [];
    const loop = await runScriptedLoop(
      repo,
      {
        actor: [[{ write: { path: 'db.txt', content: 'undecided\n' } }], [{ write: { path: 'db.txt', content: 'sqlite\n' } }]],
        critic: [[blocked], [done('SQLite it is')]],
      },
      {
        askUser: async (iteration, needs) => {
          asked.push({ iteration, needs });
          return { type: 'answer', text: ANSWER };
        },
      },
    );
    assert.equal(loop.summary.status, 'success');
    assert.deepEqual(asked, [{ iteration: 1, needs: { from: 'critic', question: QUESTION } }]);
    const second = loop.agent.prompt('actor', 2);
    assert.match(second, /## From the user \(the person you work for\)\nThe reviewer asked the user: Which database/);
    assert.ok(second.includes(`Their answer, in their words:\n\`\`\`\n${ANSWER}\n\`\`\``), second);
    // Not fed back as the critic's feedback: the answer is the user's, the question is not work to do.
    assert.doesNotMatch(second, /Reviewer feedback on iteration 1/);
    // A CONTINUE with the extra field, not a fourth decision; critic_verdict keeps its meaning (a DONE refused).
    const [first] = assertValidSessionFile(loop.summary.session_file).iterations;
    assert.equal(first!.critic_decision, 'CONTINUE');
    assert.deepEqual(first!.needs_input, { from: 'critic', question: QUESTION });
    assert.equal(first!.critic_verdict, undefined);
    // The pause is a review pause that carries the question; the answer is recorded.
    const sidecar = readJsonLines(`${loop.sidecarDir}/events.jsonl`).map((line) => runEventSchema.parse(line));
    assert.deepEqual(
      sidecar.filter((event) => ['needs_input', 'review_paused', 'needs_input_answered', 'review_resumed'].includes(event.type)).map((event) => event.type),
      ['needs_input', 'review_paused', 'needs_input_answered', 'review_resumed'],
    );
    assert.deepEqual(ofType(sidecar, 'review_paused')[0]!.needs_input, { from: 'critic', question: QUESTION });
    assert.equal(ofType(sidecar, 'critic_decision')[0]!.needs_input?.question, QUESTION);
    assert.deepEqual(
      describeEvent(ofType(sidecar, 'needs_input')[0]!, { showAgentText: false }).map((line) => line.text),
      [`the critic needs you: ${QUESTION}`],
    );
    // The replay shows the question and the answer.
    const session = await new SessionStore(loop.sessionsDir).load(loop.summary.session_id);
    const kinds = buildTimeline(session, sidecar).map((entry) => entry.kind);
    assert.ok(kinds.includes('needs_input') && kinds.includes('needs_input_answered'), kinds.join(' '));
  });

  it('the actor ends with <needs_input>: the critic does not run for that iteration, and the answer reaches the next actor', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const loop = await runScriptedLoop(
      repo,
      {
        actor: [
          [{ print: 'I need the API key to go on.\n<needs_input>What is the staging API key?</needs_input>' }],
          [{ write: { path: 'key.txt', content: 'configured\n' } }],
        ],
        critic: [[done('configured')]],
      },
      { askUser: async () => ({ type: 'answer', text: 'It is in 1Password under "staging".' }) },
    );
    assert.equal(loop.summary.status, 'success');
    assert.equal(loop.summary.iterations, 2);
    assert.equal(loop.agent.calls('critic'), 1, 'the critic ran for the second iteration only');
    assert.deepEqual(
      ofType(loop.events, 'phase')
        .filter((event) => event.phase === 'critic' && event.status === 'started')
        .map((event) => event.iteration),
      [2],
    );
    const second = loop.agent.prompt('actor', 2);
    assert.match(second, /You asked the user: What is the staging API key\?/);
    assert.ok(second.includes('It is in 1Password under "staging".'));
    const [first] = assertValidSessionFile(loop.summary.session_file).iterations;
    assert.equal(first!.critic_decision, 'CONTINUE');
    assert.deepEqual(first!.needs_input, { from: 'actor', question: 'What is the staging API key?' });
    assert.equal(ofType(loop.events, 'critic_decision')[0]!.source, 'actor_asked');
  });

  it('a <needs_input> the actor quotes (in a code block, in inline code, in the middle of its report) asks nothing: the critic judges the iteration', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const report = [
      'I documented how an agent asks the user: it ends its answer with',
      '```',
      '<needs_input>What is the staging API key?</needs_input>',
      '```',
      'as in `<needs_input>Which port?</needs_input>`, and <needs_input>this one</needs_input> is mid-sentence.',
      'Done: docs/asking.md explains it.',
    ].join('\n');
    const asked: NeedsInput[] = [];
    const loop = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'docs/asking.md', content: 'End with the tag.\n' } }, { print: report }]], critic: [[done('documented')]] },
      {
        askUser: async (_iteration, needs) => {
          asked.push(needs);
          return { type: 'answer', text: 'unused' };
        },
      },
    );
    assert.equal(loop.summary.status, 'success', loop.summary.error ?? '');
    assert.equal(loop.summary.iterations, 1);
    assert.deepEqual(asked, [], 'nobody was asked');
    assert.equal(loop.agent.calls('critic'), 1, 'the critic judged the iteration');
    assert.deepEqual(ofType(loop.events, 'needs_input'), []);
    assert.equal(ofType(loop.events, 'critic_decision')[0]!.source, 'block');
  });

  it('an iteration that asks the user counts toward no stall: it changed nothing because it waited for the answer', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const loop = await runScriptedLoop(
      repo,
      {
        actor: [
          [{ write: { path: 'a.txt', content: '1\n' } }],
          [{ print: 'Which number do you want?\n<needs_input>Should a.txt say 2 or two?</needs_input>' }],
          [{ print: 'Thinking it over; no change yet.' }],
          [{ write: { path: 'a.txt', content: '2\n' } }],
        ],
        critic: [
          [decision({ type: 'continue', feedback: 'Make it 2' })],
          [decision({ type: 'continue', feedback: 'Nothing was written: put the digit in a.txt' })],
          [done()],
        ],
      },
      { stall: { unchangedIterations: 2, action: 'stop' }, askUser: async () => ({ type: 'answer', text: 'The digit 2.' }) },
    );
    assert.equal(loop.summary.status, 'success', loop.summary.error ?? '');
    assert.equal(loop.summary.iterations, 4);
    assert.deepEqual(ofType(loop.events, 'stall'), [], 'iteration 3 alone changed nothing while not waiting: no stall of two');
    assert.deepEqual(
      ofType(loop.events, 'needs_input').map((event) => event.iteration),
      [2],
    );
  });

  it('tells the actor from its second prompt on that it may ask, and leaves the first prompt as the user wrote it', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const loop = await runScriptedLoop(
      repo,
      {
        actor: [[{ write: { path: 'a.txt', content: '1\n' } }], [{ write: { path: 'a.txt', content: '2\n' } }]],
        critic: [[decision({ type: 'continue', feedback: 'Make it 2' })], [done()]],
      },
      { prompt: 'Write a.txt' },
    );
    assert.equal(loop.agent.prompt('actor', 1), 'Write a.txt');
    assert.match(loop.agent.prompt('actor', 2), /end your answer with `<needs_input>your one question<\/needs_input>`/);
  });

  it('headless (nobody to ask): ends failed with stop_reason and error code needs_input, the question as the error', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const loop = await runScriptedLoop(repo, { actor: [[{ write: { path: 'a.txt', content: '1\n' } }]], critic: [[blocked]] });
    assert.equal(loop.summary.status, 'failed');
    assert.equal(loop.summary.error_code, 'needs_input');
    assert.equal(loop.summary.stop_reason, 'needs_input');
    assert.equal(loop.summary.error, QUESTION);
    assert.equal(loop.summary.iterations, 1);
    const file = assertValidSessionFile(loop.summary.session_file);
    assert.equal(file.end?.stop_reason, 'needs_input');
    assert.equal(file.iterations[0]!.critic_decision, 'CONTINUE');
    assert.equal(ofType(loop.events, 'review_paused').length, 0, 'no pause: nobody could answer');
  });

  it('a closed channel while the loop waits ends it as headless; "stop" ends it interrupted', async () => {
    const script = { actor: [[{ write: { path: 'a.txt', content: '1\n' } }]], critic: [[blocked]] };
    const closed = await runScriptedLoop(createRepo({ files: { 'README.md': '# demo\n' } }), script, { askUser: async () => null });
    assert.equal(closed.summary.error_code, 'needs_input');
    const stopped = await runScriptedLoop(createRepo({ files: { 'README.md': '# demo\n' } }), script, { askUser: async () => ({ type: 'stop' }) });
    assert.equal(stopped.summary.status, 'interrupted');
  });
});
