import assert from 'node:assert/strict';
import path from 'node:path';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import type { Responder } from '../support/modelApi/scripted.js';
import { REAL_AGENTS, isAgentTurn, runToTheEnd, scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { createRepo } from '../support/testEnvironment.js';

const TASK = 'Start a changelog.\n\nRequirements:\n- CHANGELOG.md starts with "# Changelog"\n- README.md keeps its heading';

/**
 * The real Codex CLI in both roles: the actor writes the changelog with its shell; the
 * critic reads it with its own shell (in its read-only sandbox) and answers with each
 * requirement and its evidence: the command it ran, a file and line.
 */
const model: Responder = (request) => {
  if (!isAgentTurn(request)) return { text: 'Changelog' };
  if (!isCriticRequest(request)) {
    if (request.hasToolResult) return { text: 'Started the changelog.' };
    return { toolCalls: [REAL_AGENTS.codex.shell('printf "# Changelog\\n" > CHANGELOG.md', 'write the changelog')] };
  }
  if (!request.hasToolResult) return { text: 'Reading the changelog.', toolCalls: [REAL_AGENTS.codex.shell('head -n 1 CHANGELOG.md', 'read it')] };
  const requirements = [
    { id: 'REQ1', text: 'CHANGELOG.md starts with "# Changelog"', met: true, evidence: '`head -n 1 CHANGELOG.md` prints # Changelog' },
    { id: 'REQ2', text: 'README.md keeps its heading', met: true, evidence: 'README.md:1 is "# demo"' },
  ];
  return { text: `<decision>${JSON.stringify({ type: 'done', summary: 'The changelog is started.', confidence: 0.9, requirements })}</decision>` };
};

describe('end to end: the real Codex CLI as critic returning requirements, against a scripted Responses API', () => {
  const startApi = scriptedApis();

  it("the critic's requirements are checked against its own recorded commands and the snapshot: DONE stands on them", async () => {
    const setup = await setUpRealAgents(startApi, createRepo({ files: { 'README.md': '# demo\n' } }), [{ agent: 'codex', model }]);
    const { outcome, home } = await runToTheEnd(setup, ['-p', TASK, '-a', 'codex']);
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 1);
    assert.equal(outcome.verification, 'verified', 'the critic ran a command that succeeded');
    const events = readJsonLines(path.join(sidecarDirOf(outcome.session_id, home.env), 'events.jsonl'));
    const judged = events.find((event) => event.type === 'requirements') as
      { source: string; requirements: { id: string; met: boolean; confirmed_by: string | null }[] } | undefined;
    assert.equal(judged?.source, 'task');
    assert.equal(judged?.requirements.length, 2);
    assert.match(judged?.requirements[0]?.confirmed_by ?? '', /head -n 1 CHANGELOG\.md.*` ok$/, 'confirmed by the command Codex recorded');
    assert.equal(judged?.requirements[1]?.confirmed_by, 'README.md:1');
    assert.deepEqual(setup.apis[0]!.unexpected, []);
  });
});
