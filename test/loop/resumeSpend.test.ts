import assert from 'node:assert/strict';
import path from 'node:path';
import { planResume } from '../../src/resume/resumePlan.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { claudeStream, type AgentScript } from '../support/scriptedAgent.js';
import { runScriptedLoop } from '../support/scriptedLoop.js';
import { createRepo, removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** Each agent turn says, as Claude Code does, what it cost: $0.10. */
const usage = { input_tokens: 100, output_tokens: 50 };
// A resumed Claude Code session reports its whole cost so far: the runner counts only what it adds.
const actorTurn = (file: string, sessionCost: number) => [
  { write: { path: file, content: `${file}\n` } },
  claudeStream.result(`Wrote ${file}.`, sessionCost, usage),
];
const criticTurn = (json: Record<string, unknown>) => [claudeStream.result(`<decision>${JSON.stringify(json)}</decision>`, 0.1, usage)];
const notYet = criticTurn({ type: 'continue', feedback: 'More files.', findings: [{ severity: 'error', message: 'more files' }] });

describe('what a resumed chain has spent', () => {
  after(removeTempDirs);

  it('counts each session once: a resumed session’s totals already hold the sessions it carries on', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const data = tempDir('codeloops-data-');
    const sessionsDir = path.join(data, 'sessions');
    const sidecarRoot = path.join(data, 'sidecars');
    const sidecarDirOf = (id: string) => path.join(sidecarRoot, id);
    const store = new SessionStore(sessionsDir);
    const common = { sessionsDir, sidecarRoot, agentKind: 'claude' as const, model: 'claude-sonnet-4-5', maxIterations: 1 };

    // Session 1: one iteration, $0.20, ends at its limit.
    const script = (file: string, actorSessionCost: number): AgentScript => ({ actor: [actorTurn(file, actorSessionCost)], critic: [notYet] });
    const first = await runScriptedLoop(repo, script('a.txt', 0.1), common);
    assert.equal(first.summary.total_cost_usd, 0.2);

    // Session 2 carries it on for one more iteration: its end says $0.40, the whole task so far.
    const plan2 = await planResume({ store, sidecarDirOf, sessionId: first.summary.session_id, force: false });
    assert.equal(plan2.continuation.spent.costUsd, 0.2);
    const second = await runScriptedLoop(repo, script('b.txt', 0.2), { ...common, maxIterations: 2, continuation: plan2.continuation });
    assert.equal(second.summary.total_cost_usd, 0.4);

    // Session 3 starts from $0.40 spent, not $0.60 (session 1 counted twice).
    const plan3 = await planResume({ store, sidecarDirOf, sessionId: second.summary.session_id, force: false });
    assert.equal(plan3.continuation.spent.costUsd, 0.4);
    assert.equal(plan3.continuation.spent.tokens, 600);
  });
});
