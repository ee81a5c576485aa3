import assert from 'node:assert/strict';
import { GEMINI_MODEL } from '../support/modelApi/geminiApi.js';
import type { Responder } from '../support/modelApi/scripted.js';
import { REAL_AGENTS, isAgentTurn, runToTheEnd, scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import type { RealAgent } from '../support/realAgents.js';
import { createRepo, treeOf } from '../support/testEnvironment.js';

/** An actor that starts the changelog with its CLI's shell tool, whichever CLI it is. */
function changelogActor(agent: RealAgent): Responder {
  return (request) => {
    if (!isAgentTurn(request)) return { text: 'Changelog' }; // a side request, such as a title
    if (request.hasToolResult) return { text: 'Started the changelog with a shell command.' };
    return { toolCalls: [REAL_AGENTS[agent].shell('printf "# Changelog\\n" > CHANGELOG.md', 'write the changelog')] };
  };
}

/** A critic that approves once the diff it is shown starts the changelog. */
const changelogCritic: Responder = (request) =>
  request.allUserText.includes('+# Changelog')
    ? { text: '<decision>{"type":"done","summary":"CHANGELOG.md exists","confidence":0.8}</decision>' }
    : { text: '<decision>{"type":"continue","feedback":"no changelog yet","findings":[{"severity":"error","message":"CHANGELOG.md is missing"}]}</decision>' };

/** Loops whose two roles are different real CLIs, each against its own scripted API. */
const PAIRS: { actor: RealAgent; critic: RealAgent; flags?: string[] }[] = [
  { actor: 'codex', critic: 'gemini', flags: ['--critic-model', GEMINI_MODEL] },
  { actor: 'opencode', critic: 'claude' },
];

describe('end to end: mixed agents, each role a different real CLI', () => {
  const startApi = scriptedApis();

  for (const { actor, critic, flags = [] } of PAIRS) {
    const [actorName, criticName] = [REAL_AGENTS[actor].name, REAL_AGENTS[critic].name];
    it(`${actorName} as actor, ${criticName} as critic: the critic reviews the diff ${actorName} made`, async () => {
      const setup = await setUpRealAgents(startApi, createRepo({ files: { 'README.md': '# demo\n' } }), [
        { agent: actor, model: changelogActor(actor) },
        { agent: critic, model: changelogCritic },
      ]);
      const [actorApi, criticApi] = setup.apis;
      const { outcome, session, runs } = await runToTheEnd(setup, ['-p', 'Start a changelog', '--actor-agent', actor, '--critic-agent', critic, ...flags]);
      assert.equal(outcome.status, 'success');
      assert.equal(outcome.iterations, 1);
      assert.deepEqual(treeOf(setup.repo), { ...setup.treeBefore, 'CHANGELOG.md': '# Changelog\n' });
      assert.equal(session.start.actor_agent, actorName);
      assert.equal(session.start.critic_agent, criticName);
      assert.equal(criticApi!.requests.filter(isAgentTurn).length, 1, 'the critic reviewed once');
      assert.ok(runs.every((run) => run.succeeded));
      assert.deepEqual([...actorApi!.unexpected, ...criticApi!.unexpected], []);
    });
  }
});
