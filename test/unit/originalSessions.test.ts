import assert from 'node:assert/strict';
import { errorFeedbackParts } from '../../src/resume/resumePlan.js';
import { criticDecisionKind, normalizeSessionLine } from '../../src/sessionFormat/sessionLines.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { buildSessionView } from '../../src/sessionView/sessionViewBuilder.js';
import { SessionWriter } from '../../src/sessionWriter/sessionWriter.js';
import { ORIGINAL_SESSIONS, writeOriginalSessions } from '../support/originalSessions.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

describe("reading the original codeloops' sessions", () => {
  let store: SessionStore;
  const warnings: string[] = [];
  before(() => {
    const dir = tempDir();
    writeOriginalSessions(dir);
    store = new SessionStore(dir, (message) => warnings.push(message), { indexFile: null });
  });
  after(removeTempDirs);

  it('keeps every line: no warning for any of its files', async () => {
    for (const session of Object.values(ORIGINAL_SESSIONS)) await store.load(session.id);
    await store.list();
    assert.deepEqual(warnings, []);
  });

  it('maps each decision to DONE, CONTINUE or ERROR and keeps its words; outcomes and a failed session’s error as documented', async () => {
    const success = await store.load(ORIGINAL_SESSIONS.success.id);
    assert.deepEqual(
      success.iterations.map((line) => [line.iteration_number, line.critic_decision, line.critic_decision_text, line.actor_duration_secs]),
      [
        [0, 'CONTINUE', 'CONTINUE (2 issues)', 62],
        [1, 'ERROR', undefined, 45],
        [2, 'DONE', 'DONE (confidence: 95%)', 30],
      ],
    );
    assert.equal(success.iterations[2]!.feedback, 'The discount is applied and tested.', 'the summary the original kept as feedback on DONE');
    const failed = await store.load(ORIGINAL_SESSIONS.failed.id);
    assert.equal(failed.end!.outcome, 'failed');
    assert.equal(failed.end!.error, 'Actor failed twice: exit code 101');
    assert.equal(failed.end!.summary, 'Actor failed twice: exit code 101', 'the line as written, too');
    assert.equal((await store.load(ORIGINAL_SESSIONS.interrupted.id)).end!.outcome, 'interrupted');
  });

  it('gives the viewer each iteration, marking its diff and files as the whole change since HEAD', async () => {
    const view = buildSessionView(await store.load(ORIGINAL_SESSIONS.success.id), []);
    assert.deepEqual(
      view.iterations.map((iteration) => [iteration.iteration_number, iteration.diff_since_head, iteration.files.map((file) => file.path)]),
      [
        [0, true, ['src/cart.rs']],
        [1, true, ['src/cart.rs', 'tests/cart.rs']],
        [2, true, ['src/cart.rs', 'tests/cart.rs']],
      ],
    );
    assert.equal(view.iterations[0]!.critic_decision_text, 'CONTINUE (2 issues)');
    // This runner's own lines (with its extra fields) are each iteration's own diff.
    const dir = tempDir();
    const own = writeSession(dir, [startLine(), iterationLine(1, { git_insertions: 1, git_deletions: 0 }), endLine()]);
    assert.equal(buildSessionView(await new SessionStore(dir).load(own), []).iterations[0]!.diff_since_head, false);
  });

  it('reads the words of decisions, and keeps a line whose word nobody defined (as ERROR)', async () => {
    const words: [string, string][] = [
      ['DONE (confidence: 95%)', 'DONE'],
      ['approve', 'DONE'],
      ['Approved', 'DONE'],
      ['APPROVE', 'DONE'],
      ['CONTINUE (2 issues)', 'CONTINUE'],
      ['continue', 'CONTINUE'],
      ['fail', 'ERROR'],
      ['FAIL', 'ERROR'],
      ['ERROR', 'ERROR'],
      ['maybe later', 'ERROR'],
      ['', 'ERROR'],
    ];
    assert.deepEqual(
      words.map(([word]) => [word, criticDecisionKind(word)]),
      words,
    );
    const dir = tempDir();
    const id = writeSession(dir, [startLine(), iterationLine(0, { critic_decision: 'maybe later' })]);
    const warned: string[] = [];
    const session = await new SessionStore(dir, (message) => warned.push(message)).load(id);
    assert.deepEqual([session.iterations[0]!.critic_decision, session.iterations[0]!.critic_decision_text], ['ERROR', 'maybe later']);
    assert.deepEqual(warned, []);
  });

  it('leaves this runner’s own lines exactly as they are', () => {
    for (const line of [startLine(), iterationLine(1, { git_insertions: 1 }), iterationLine(2, { critic_decision: 'DONE', feedback: null }), endLine()]) {
      assert.deepEqual(normalizeSessionLine(line), line);
    }
  });

  it('splits an error’s feedback for resume, in both writers’ words', () => {
    assert.deepEqual(errorFeedbackParts('Error encountered: cargo test failed\n\nRecovery suggestion: add the import'), {
      description: 'cargo test failed',
      recovery: 'add the import',
    });
    assert.deepEqual(errorFeedbackParts('The build broke.\n\nRecovery: fix the import'), { description: 'The build broke.', recovery: 'fix the import' });
    assert.deepEqual(errorFeedbackParts('Just broken'), { description: 'Just broken', recovery: '' });
  });

  it('our writer still writes the documented format only: never an iteration 0, never other words', () => {
    const writer = SessionWriter.create(tempDir(), { ...startLine(), prompt: 'x' } as never, new Date());
    const iteration = {
      iteration_number: 1,
      actor_output: '',
      actor_stderr: '',
      actor_exit_code: 0,
      actor_duration_secs: 1,
      git_diff: '',
      git_files_changed: 0,
      critic_decision: 'DONE' as const,
      feedback: null,
    };
    assert.throws(() => writer.writeIteration({ ...iteration, iteration_number: 0 }), /refusing to write an invalid iteration line: iteration_number/);
    assert.throws(() => writer.writeIteration({ ...iteration, critic_decision: 'approved' as never }), /critic_decision/);
    writer.close();
  });
});
