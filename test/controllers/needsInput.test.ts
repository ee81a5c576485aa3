import assert from 'node:assert/strict';
import { COMMANDS } from '../../src/extension/ids.js';
import { runStatusOf, type RunStatus } from '../../src/extension/runs/runStatus.js';
import { FakeEditor, folderAt, runControllerFor } from '../support/fakeEditor.js';
import { configureScriptedAgent, decision, done, type AgentScript } from '../support/scriptedAgent.js';
import { createRepo, isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';

const QUESTION = 'Should the README be in English or French?';

/**
 * "Needs you" as the editor offers it (the question notification and its answer box),
 * in plain Node: the real runner as a child process over its control channel, the
 * editor's window stubbed.
 */
describe('"needs you" in the editor: the question notification and its answer box (plain Node, the real runner, a stubbed editor)', () => {
  let home: IsolatedHome;
  before(() => (home = isolateHome()));
  after(() => {
    home.restore();
    removeTempDirs();
  });

  function setup(script: AgentScript) {
    const agent = configureScriptedAgent(home.configHome, script);
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const editor = new FakeEditor();
    const runs = runControllerFor(editor, home.env, { showAgentText: false });
    return { agent, editor, runs, folder: folderAt(repo) };
  }

  it('shows the critic’s question with Answer…; the answer typed in the box reaches the next actor and the loop carries on', async () => {
    const { agent, editor, runs, folder } = setup({
      actor: [[{ write: { path: 'README.md', content: '# demo\n\nHello\n' } }], [{ write: { path: 'README.md', content: '# demo\n\nBonjour\n' } }]],
      critic: [[decision({ type: 'blocked', question: QUESTION })], [done('in French')]],
    });
    let pausedSeen: number | null = null;
    runs.onEvent(({ event }) => {
      if (event.type === 'review_paused') pausedSeen = runs.runningLoops()[0]?.progress.pausedAfter ?? null;
    });
    editor.answer(/needs you/, 'Answer…').answer(/^Should the README be in English or French\?$/, 'French, please.');
    const end = await runs.start(folder, { text: 'write the README' });
    await editor.settled();
    assert.ok(end?.kind === 'finished', end?.kind);
    assert.equal(end.summary.status, 'success');
    assert.equal(pausedSeen, 1, 'the loop was known to wait');
    const asked = editor.shown.find((entry) => /needs you/.test(entry.text))!;
    assert.equal(asked.text, `Codeloops in ${folder.name} needs you (asked by the critic): ${QUESTION}`);
    assert.deepEqual(asked.actions, ['Answer…', 'Show Changes', 'Stop']);
    assert.deepEqual(editor.texts('input'), [QUESTION]);
    assert.match(agent.prompt('actor', 2), /Their answer, in their words:\n```\nFrench, please\.\n```/);
    assert.equal(editor.context.get('codeloops.pausedForReview'), false, 'not after it went on');
  });

  const README_SCRIPT: AgentScript = {
    actor: [[{ write: { path: 'README.md', content: '# demo\n\nHello\n' } }], [{ write: { path: 'README.md', content: '# demo\n\nBonjour\n' } }]],
    critic: [[decision({ type: 'blocked', question: QUESTION })], [done('in French')]],
  };

  it('a dismissed question stays in the status bar, “needs your answer”; clicking it opens the answer box and the loop carries on with the answer', async () => {
    const { agent, editor, runs, folder } = setup(README_SCRIPT);
    editor.answer(/^Should the README be in English or French\?$/, 'French, please.');
    let waiting: RunStatus | undefined;
    let afterAnswer: RunStatus | undefined;
    let clicked: Promise<void> | undefined;
    runs.onEvent(({ event }) => {
      if (event.type !== 'review_paused') return;
      const loop = runs.runningLoops()[0]!;
      waiting = runStatusOf(loop);
      // The click: the command the status bar item runs, with its arguments (the notification was dismissed).
      const [sessionId] = waiting.command.arguments as [string];
      clicked = runs.answerQuestion(sessionId).then(() => {
        afterAnswer = runStatusOf(loop);
        if (loop.progress.pausedAfter !== null) loop.process.interrupt(); // not answered: ended, for the assertions to say why
      });
    });
    const end = await runs.start(folder, { text: 'write the README' });
    await clicked;
    assert.ok(end?.kind === 'finished', end?.kind);
    assert.equal(end.summary.status, 'success');
    assert.equal(waiting?.text, '$(question) Codeloops: needs your answer');
    assert.match(waiting?.tooltip ?? '', /waits for your answer \(asked by the critic\): Should the README be in English or French\?/);
    assert.deepEqual(waiting?.command, { command: COMMANDS.answerQuestion, title: 'Answer…', arguments: [end.summary.session_id] });
    assert.deepEqual(editor.texts('warning'), [`Codeloops in ${folder.name} needs you (asked by the critic): ${QUESTION}`], 'dismissed, not asked again');
    assert.deepEqual(editor.texts('input'), [QUESTION], 'the box, from the status bar');
    assert.equal(afterAnswer?.command.command, COMMANDS.interrupt, 'answered: the loop runs again');
    assert.match(afterAnswer?.text ?? '', /Codeloops: iteration 1 · going on/);
    assert.match(agent.prompt('actor', 2), /Their answer, in their words:\n```\nFrench, please\.\n```/);
  });

  it('Continue After Review on a loop that waits for an answer opens the answer box: it goes on with the answer, not without one', async () => {
    const { agent, editor, runs, folder } = setup(README_SCRIPT);
    editor.answer(/^Should the README be in English or French\?$/, 'French, please.');
    let continued: Promise<void> | undefined;
    runs.onEvent(({ event, sessionId }) => {
      if (event.type === 'review_paused') continued = runs.resumeAfterReview('continue', sessionId);
    });
    const end = await runs.start(folder, { text: 'write the README' });
    await continued;
    assert.ok(end?.kind === 'finished', end?.kind);
    assert.equal(end.summary.status, 'success');
    assert.deepEqual(editor.texts('input'), [QUESTION]);
    assert.match(agent.prompt('actor', 2), /Their answer, in their words:\n```\nFrench, please\.\n```/);
  });

  it('Stop from the question ends the loop interrupted', async () => {
    const { editor, runs, folder } = setup({
      actor: [[{ print: 'Stuck.\n<needs_input>Which branch?</needs_input>' }]],
      critic: [[done()]],
    });
    editor.answer(/needs you \(asked by the actor\): Which branch\?/, 'Stop');
    const end = await runs.start(folder, { text: 'merge' });
    assert.ok(end?.kind === 'finished');
    assert.equal(end.summary.status, 'interrupted');
  });
});
