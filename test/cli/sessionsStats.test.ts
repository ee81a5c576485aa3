import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { summaryIndexPath } from '../../src/sessions/summaryIndex.js';
import { sessionStatsSchema } from '../../src/sessionFormat/sessionSummaries.js';
import * as z from '../../src/sessionFormat/zod.js';
import { runCli } from '../support/cliProcess.js';
import { EXPECTED_BY_AGENTS, EXPECTED_STATS, writeStatsSessions } from '../support/statsSessions.js';
import { isolateHome, removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** The figures of `sessions stats --json` but the lists, to compare with the hand-made ones. */
function figures(stats: z.infer<typeof sessionStatsSchema>): Record<string, unknown> {
  const { sessions_over_time: _days, by_project: _projects, by_agents: _agents, ...rest } = stats;
  return rest;
}

describe('codeloops sessions stats: the agentic metrics per task (the built CLI)', () => {
  let env: Record<string, string>;
  let sessionsDir: string;
  let cwd: string;
  const stats = async (...args: string[]) => {
    const result = await runCli(['sessions', 'stats', '--json', ...args], { cwd, env });
    assert.equal(result.code, 0, result.stderr);
    return z.strictObject(sessionStatsSchema.shape).parse(JSON.parse(result.stdout));
  };

  before(() => {
    cwd = tempDir();
    const home = isolateHome();
    home.restore();
    env = home.env;
    sessionsDir = home.sessionsDir;
    writeStatsSessions(sessionsDir);
    // Sessions at rest, as the index keeps them (it never keeps a file changed in the last two seconds).
    const aMinuteAgo = new Date(Date.now() - 60_000);
    for (const name of fs.readdirSync(sessionsDir)) fs.utimesSync(path.join(sessionsDir, name), aMinuteAgo, aMinuteAgo);
  });
  after(removeTempDirs);

  it('counts a resume chain as one task, each metric as worked out by hand, and the same figures per actor and critic pair', async () => {
    const all = await stats();
    assert.deepEqual(figures(all), EXPECTED_STATS);
    assert.deepEqual(all.by_agents, EXPECTED_BY_AGENTS);
  });

  it('gives the same figures from the index as from the files, and lists exactly as before', async () => {
    fs.rmSync(summaryIndexPath(sessionsDir), { force: true });
    const listed = await runCli(['sessions', 'list', '--json'], { cwd, env });
    assert.ok(fs.existsSync(summaryIndexPath(sessionsDir)), 'listing wrote the index, figures and all');
    // Each file blanked, its size and time kept: the figures can only come from the index now.
    const kept = fs.readdirSync(sessionsDir).map((name) => ({ file: path.join(sessionsDir, name), bytes: fs.readFileSync(path.join(sessionsDir, name)) }));
    const blank = (file: string, bytes: Buffer) => {
      const { atime, mtime } = fs.statSync(file);
      fs.writeFileSync(file, bytes);
      fs.utimesSync(file, atime, mtime);
    };
    for (const { file, bytes } of kept) blank(file, Buffer.alloc(bytes.length, 0x20));
    try {
      const fromIndex = await stats();
      assert.deepEqual(figures(fromIndex), EXPECTED_STATS);
      assert.deepEqual(fromIndex.by_agents, EXPECTED_BY_AGENTS);
    } finally {
      for (const { file, bytes } of kept) blank(file, bytes);
    }
    // The summaries `sessions list --json` prints have exactly their documented fields: the figures are not among them.
    for (const summary of JSON.parse(listed.stdout) as Record<string, unknown>[]) assert.ok(!('done' in summary) && !('resumed_from' in summary));
  });

  it('filters tasks by their first session (dates, agents) and their last session’s outcome, sessions as before', async () => {
    // T2's last session succeeded: the whole chain counts, its four iterations with it.
    const successes = await stats('--outcome', 'success');
    assert.equal(successes.total_sessions, 3);
    assert.deepEqual([successes.total_tasks, successes.total_iterations, successes.task_success_rate], [3, 7, 1]);
    // T2 is dated by its first session, March 2nd: not after the 3rd, though two of its sessions are.
    const after = await stats('--after', '2025-03-03');
    assert.deepEqual([after.total_sessions, after.total_tasks], [6, 4]);
    // `--actor codex` as `run` names it, `--critic` by the name the sessions record.
    const codex = await stats('--actor', 'codex', '--critic', 'Claude Code');
    assert.equal(codex.total_sessions, 2);
    const { actor_agent: _actor, critic_agent: _critic, ...pairB } = EXPECTED_BY_AGENTS[1]!;
    assert.deepEqual(Object.fromEntries(Object.keys(pairB).map((key) => [key, figures(codex)[key]])), pairB);
    assert.deepEqual(codex.by_agents, [EXPECTED_BY_AGENTS[1]]);
    const none = await stats('--actor', 'gemini');
    assert.deepEqual([none.total_tasks, none.first_try_success_rate, none.waste_rate, none.total_cost_usd, none.by_agents], [0, null, null, null, []]);
  });

  it('says the figures in words, grouped, with the pairs as a table', async () => {
    const text = await runCli(['sessions', 'stats'], { cwd, env });
    assert.equal(text.code, 0, text.stderr);
    for (const line of [
      /^Sessions +8$/m,
      /^ +tasks +6$/m,
      /^ +first-try success rate +33%$/m,
      /^ +verified success rate +67%$/m,
      /^ +waste rate +33%$/m,
      /^ +avg cycle time +1m 50s$/m,
      /^ +DONE refused by the gate +40%$/m,
      /^ +avg feedback length +5 characters$/m,
      /^ +per successful task +\$1\.17$/m,
      /^ +tokens +7,000$/m,
      /^ +Codex +Claude Code +2 +0% +— +— +0% +— +—$/m,
    ])
      assert.match(text.stdout, line);
  });
});
