import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_PRICES } from '../../src/budget/prices.js';
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
    assert.equal(plan2.continuation.spentAt(DEFAULT_PRICES).costUsd, 0.2);
    const second = await runScriptedLoop(repo, script('b.txt', 0.2), { ...common, maxIterations: 2, continuation: plan2.continuation });
    assert.equal(second.summary.total_cost_usd, 0.4);

    // Session 3 starts from $0.40 spent, not $0.60 (session 1 counted twice).
    const plan3 = await planResume({ store, sidecarDirOf, sessionId: second.summary.session_id, force: false });
    assert.equal(plan3.continuation.spentAt(DEFAULT_PRICES).costUsd, 0.4);
    assert.equal(plan3.continuation.spentAt(DEFAULT_PRICES).tokens, 600);
  });

  it('prices a crashed session’s runs at the resumed run’s prices, the user’s [prices] over the built-in table', async () => {
    const repo = createRepo({ files: { 'README.md': '# demo\n' } });
    const data = tempDir('codeloops-data-');
    const sessionsDir = path.join(data, 'sessions');
    const sidecarRoot = path.join(data, 'sidecars');
    const sidecarDirOf = (id: string) => path.join(sidecarRoot, id);
    // A model the built-in table does not know, priced by the user: $1 per million input tokens, $2 per million output.
    const prices = { ...DEFAULT_PRICES, 'house-model': { input: 1, output: 2 } };
    const common = { sessionsDir, sidecarRoot, agentKind: 'claude' as const, model: 'house-model', prices };
    // Claude Code's stream, its result without a cost: the runner prices the tokens.
    const unpriced = (text: string) => ({
      print: JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: text, session_id: 'scripted-session', usage }),
    });
    const script: AgentScript = {
      actor: [
        [{ write: { path: 'a.txt', content: 'a\n' } }, unpriced('Wrote a.txt.')],
        [{ write: { path: 'b.txt', content: 'b\n' } }, unpriced('Wrote b.txt.')],
      ],
      critic: [[unpriced('<decision>{"type":"continue","feedback":"More.","findings":[{"severity":"error","message":"more"}]}</decision>')]],
    };
    // Each agent run: 100 input tokens at $1/M and 50 output tokens at $2/M, $0.0002; an iteration, two runs.
    const perIteration = 0.0004;
    const first = await runScriptedLoop(repo, script, { ...common, maxIterations: 1 });
    assert.ok(Math.abs(first.summary.total_cost_usd! - perIteration) < 1e-9, String(first.summary.total_cost_usd));
    // The runner was killed before its session's end: what it spent is known only from its agents' usage.
    const file = path.join(sessionsDir, `${first.summary.session_id}.jsonl`);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(0, -1).join('\n') + '\n');

    const plan = await planResume({ store: new SessionStore(sessionsDir), sidecarDirOf, sessionId: first.summary.session_id, force: false });
    assert.ok(Math.abs(plan.continuation.spentAt(prices).costUsd! - perIteration) < 1e-9, String(plan.continuation.spentAt(prices).costUsd));
    const resumed = await runScriptedLoop(repo, script, { ...common, maxIterations: 2, continuation: plan.continuation });
    assert.ok(Math.abs(resumed.summary.total_cost_usd! - 2 * perIteration) < 1e-9, `${resumed.summary.total_cost_usd}: both iterations at the user's prices`);
  });
});
