import assert from 'node:assert/strict';
import { runSummarySchema } from '../../src/sessionFormat/runEvents.js';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { claudeStream, done, scriptedClaudeSetup, scriptedCliSetup } from '../support/scriptedAgent.js';
import { removeTempDirs } from '../support/testEnvironment.js';

/**
 * Waits and budgets of the built CLI that must stay what they say, whatever their
 * size: a time budget of weeks, and the cost of an agent refused twice in a row (the
 * scripted agent plays Claude Code, which reports its session's cost so far).
 */
describe('waits and budgets through the built CLI (a scripted agent)', () => {
  afterEach(stopRunners);
  after(removeTempDirs);

  it('a time budget of weeks (--max-duration past what one timer holds) is kept, not taken as none left', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'greeting.txt', content: 'Hi\n' } }]], critic: [[done('greeting written')]] });
    const run = await runCli(['-p', 'Write a greeting', '--max-duration', String(35 * 86_400), '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const summary = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(summary.status, 'success', summary.error ?? '');
    assert.doesNotMatch(run.stderr, /TimeoutOverflowWarning/);
  });

  it('two usage limits in a row: each run’s cost is counted once, the session’s whole cost as the agent reports it', async () => {
    const reset = new Date(Date.now() + 1_000);
    // Claude Code reports its session's cost so far: 0.10 after the first run, 0.25 after the second, 0.45 at the end.
    const { repo, env } = scriptedClaudeSetup({
      actor: [
        claudeStream.usageLimit(reset, 0.1),
        claudeStream.usageLimit(reset, 0.25),
        [{ write: { path: 'greeting.txt', content: 'Hi\n' } }, claudeStream.result('Wrote it.', 0.45, {})],
      ],
      critic: [[claudeStream.result('<decision>{"type":"done","summary":"greeting written","confidence":0.9}</decision>', 0.01, {})]],
    });
    const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const summary = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(summary.status, 'success');
    assert.equal(summary.iterations, 1);
    assert.equal(summary.total_cost_usd?.toFixed(2), '0.46', 'the actor’s 0.45 and the critic’s 0.01');
  });
});
