import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { groupComparisonSchema, parseCandidateStreamEvent } from '../../src/sessionFormat/candidateGroups.js';
import { runCli } from '../support/cliProcess.js';
import { OPEN_CODE_MODEL } from '../support/modelApi/openAiChat.js';
import type { ModelRequest, Responder } from '../support/modelApi/scripted.js';
import { REAL_AGENTS, scriptedApis, setUpRealAgents } from '../support/realAgentLoops.js';
import type { RealAgent } from '../support/realAgents.js';
import { isCriticRequest } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, treeOf, writeFile } from '../support/testEnvironment.js';

const JUDGE_MARK = 'You are the judge of several attempts at the same coding task';
const TASK = 'Write ANSWER.md saying which agent you are';

/**
 * Resolves once every agent has asked for its first actor turn: a model that answers
 * no one until both are waiting proves the two candidates run at the same time (run
 * one after the other, the first would wait forever).
 */
function rendezvous(parties: number): (who: string) => Promise<void> {
  const arrived = new Set<string>();
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return (who) => {
    arrived.add(who);
    if (arrived.size === parties) release();
    return all;
  };
}

describe('end to end: the real Claude Code and OpenCode CLIs as two candidates', () => {
  const startApi = scriptedApis();

  it('runs both at once, each in its worktree, and compares them right', async () => {
    const bothWaiting = rendezvous(2);
    const actorTurn = async (who: RealAgent, request: ModelRequest) => {
      if (request.hasToolResult) return { text: `Wrote ANSWER.md as ${who}.` };
      await bothWaiting(who);
      return { text: 'Writing it.', toolCalls: [REAL_AGENTS[who].shell(`printf '${who}\\n' > ANSWER.md`, 'write the answer')] };
    };
    const claude: Responder = async (request) => {
      if (request.toolNames.length === 0) return { text: 'Answer file' };
      if (request.allUserText.includes(JUDGE_MARK)) {
        return { text: 'Both work; B is plainer.\n<decision>{"type":"ranking","ranking":["B","A"],"reasoning":"B says it plainly"}</decision>' };
      }
      if (isCriticRequest(request)) {
        return request.allUserText.includes('+++ b/ANSWER.md')
          ? { text: '<decision>{"type":"done","summary":"ANSWER.md is written","confidence":0.8}</decision>' }
          : {
              text: '<decision>{"type":"continue","feedback":"ANSWER.md is missing","findings":[{"severity":"error","message":"ANSWER.md is missing"}]}</decision>',
            };
      }
      return actorTurn('claude', request);
    };
    const openCode: Responder = (request) => (request.toolNames.length === 0 ? { text: 'Answer file' } : actorTurn('opencode', request));

    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const {
      env,
      home,
      apis: [anthropic, openai],
    } = await setUpRealAgents(startApi, repo, [
      { agent: 'claude', model: claude },
      { agent: 'opencode', model: openCode },
    ]);
    writeFile(repo, 'README.md', '# demo, being edited\n');
    const before = treeOf(repo);

    const result = await runCli(
      ['run', '-p', TASK, '--candidates', `claude,opencode:${OPEN_CODE_MODEL}`, '--jobs', '2', '--critic-agent', 'claude', '--events', 'ndjson'],
      { cwd: repo, env },
    );
    assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
    assert.deepEqual(treeOf(repo), before, "the user's tree is untouched");
    const finished = result.stdout
      .split('\n')
      .map(parseCandidateStreamEvent)
      .find((event) => event?.type === 'group_finished');
    assert.equal(finished?.type === 'group_finished' && finished.status, 'finished');

    const shown = await runCli(['candidates', 'latest', '--json'], { cwd: repo, env });
    const comparison = groupComparisonSchema.parse(JSON.parse(shown.stdout));
    const label = `opencode:${OPEN_CODE_MODEL}`;
    assert.deepEqual(
      comparison.candidates.map((row) => [row.label, row.agent, row.status, row.rank, row.iterations, row.files_changed, row.insertions, row.confidence]),
      [
        [label, 'opencode', 'success', 1, 1, 1, 1, 0.8],
        ['claude', 'claude', 'success', 2, 1, 1, 1, 0.8],
      ],
      'both succeeded; the judge (Claude, the critic) put B, OpenCode, first',
    );
    assert.equal(comparison.winner, label);
    assert.equal(comparison.judge?.agent, 'Claude Code');
    assert.equal(comparison.judge?.reasoning, 'B says it plainly');
    for (const row of comparison.candidates) {
      assert.ok((row.total_cost_usd ?? 0) > 0, `${row.label} reported a cost`);
      assert.ok(row.total_tokens > 0, `${row.label} reported tokens`);
      const { start } = assertValidSessionFile(path.join(home.sessionsDir, `${row.session_id}.jsonl`));
      assert.equal(start.actor_agent, row.label === 'claude' ? 'Claude Code' : 'OpenCode');
      assert.equal(start.critic_agent, 'Claude Code');
      // Each wrote in its own worktree.
      assert.equal(fs.readFileSync(path.join(row.worktree!, 'ANSWER.md'), 'utf8'), `${row.label === 'claude' ? 'claude' : 'opencode'}\n`);
      assert.equal(fs.readFileSync(path.join(row.worktree!, 'README.md'), 'utf8'), '# demo, being edited\n', 'from the user’s tree as it was');
    }
    assert.deepEqual([...anthropic!.unexpected, ...openai!.unexpected], []);
  });
});
