import assert from 'node:assert/strict';
import path from 'node:path';
import { LoopTools, type LoopToolsDeps } from '../../src/extension/chat/loopTools.js';
import type { FolderRef } from '../../src/extension/editorPorts.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { describeProgress, listModelSessions, readModelSession } from '../../src/sessionView/modelSession.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { createRepo, removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** The language model tools with only what reading sessions needs: anything else they touched would throw. */
function toolsReading(store: SessionStore): LoopTools<FolderRef> {
  return new LoopTools({ store } as unknown as LoopToolsDeps<FolderRef>);
}

describe('a session as a model is told it (sessionView/modelSession.ts), one view for the MCP server, the language model tools and the chat', () => {
  after(removeTempDirs);

  it('a session without an end whose runner is gone is `crashed` (as resume and the README say), one that ended `ended` with its outcome', async () => {
    const dir = tempDir();
    const repo = createRepo({});
    const crashed = writeSession(dir, [startLine({ working_dir: repo, prompt: 'left behind' }), iterationLine(1, { unmet_requirements: [] })]);
    const ended = writeSession(dir, [startLine({ working_dir: repo, prompt: 'finished', timestamp: '2025-01-28T10:00:00Z' }), iterationLine(1), endLine()]);
    const store = new SessionStore(dir);

    const left = await readModelSession(store, crashed);
    assert.deepEqual([left.status, left.outcome, left.end], ['crashed', null, null]);
    assert.equal(describeProgress(left), 'Its runner stopped without ending the session, after 1 iteration(s).');
    const finished = await readModelSession(store, ended);
    assert.deepEqual([finished.status, finished.outcome, finished.end?.summary], ['ended', 'success', 'Fixed']);
    // What a model reads of an iteration: no agent output, no diff.
    assert.ok(!JSON.stringify(finished).includes('output 1'));
    assert.ok(!JSON.stringify(finished).includes('diff --git'));

    const listed = await listModelSessions(store, { limit: 5 });
    assert.equal(listed.total, 2);
    assert.deepEqual(
      listed.sessions.map((session) => [path.basename(session.working_dir), session.outcome, session.running]),
      [
        [path.basename(repo), 'success', false],
        [path.basename(repo), null, false],
      ],
    );
  });

  it('the language model tools answer exactly this view: the same fields, the same words as the MCP server', async () => {
    const dir = tempDir();
    const id = writeSession(dir, [startLine({ working_dir: createRepo({}) }), iterationLine(1)]);
    const store = new SessionStore(dir);
    const tools = toolsReading(store);
    assert.deepEqual(JSON.parse(await tools.getSession({ sessionId: id })), JSON.parse(JSON.stringify(await readModelSession(store, id))));
    assert.equal(JSON.parse(await tools.getSession({ sessionId: id })).status, 'crashed');
    assert.deepEqual(JSON.parse(await tools.listSessions({ limit: 1 })), JSON.parse(JSON.stringify(await listModelSessions(store, { limit: 1 }))));
    // Input that does not fit the tool's schema is refused by it, in the failure shape of every other refusal.
    assert.equal(JSON.parse(await tools.listSessions({ limit: 0 })).error.code, 'usage');
  });
});
