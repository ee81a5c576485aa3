import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { forecastSchema } from '../../src/sessionFormat/forecast.js';
import { runCli } from '../support/cliProcess.js';
import { CODEX_FORECAST, GARDEN_FORECAST, SHOP_FORECAST, writeForecastSessions } from '../support/forecastSessions.js';
import { configureScriptedAgent } from '../support/scriptedAgent.js';
import { git, isolateHome, removeTempDirs, tempDir } from '../support/testEnvironment.js';

describe('codeloops forecast and the dry-run plan: what a run here would take (the built CLI)', () => {
  let env: Record<string, string>;
  let configHome: string;
  let sessionsDir: string;
  let top: string;
  const repoNamed = (name: string) => {
    const dir = path.join(top, name);
    fs.mkdirSync(dir, { recursive: true });
    git(dir, 'init', '-q', '-b', 'main');
    return dir;
  };
  const forecast = async (cwd: string, ...args: string[]) => {
    const result = await runCli(['forecast', ...args], { cwd, env });
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  };

  before(() => {
    top = tempDir();
    const home = isolateHome();
    home.restore();
    ({ env, configHome, sessionsDir } = home);
    writeForecastSessions(sessionsDir);
  });
  after(removeTempDirs);

  it("prints exactly the forecast's fields as JSON: this project's tasks, or all projects' when it has fewer than five", async () => {
    const shop = JSON.parse(await forecast(repoNamed('shop'), '--json')) as unknown;
    assert.deepEqual(forecastSchema.parse(shop), SHOP_FORECAST);
    assert.deepEqual(Object.keys(shop as object), ['basis', 'scope', 'iterations', 'cost_usd', 'duration_secs']);
    assert.deepEqual(JSON.parse(await forecast(repoNamed('garden'), '--json')), GARDEN_FORECAST);
  });

  it('says in words what it rests on, the percentiles, and the budget it suggests when none is set', async () => {
    const text = await forecast(repoNamed('shop'), '-p', 'whatever the task');
    assert.match(text, /^Forecast for Claude Code as actor, Claude Code as critic in shop\nFrom 6 past tasks of this project:\n/);
    assert.match(text, /iterations +median 2, p90 5\n/);
    assert.match(text, /cost +median \$1\.10, p90 \$2\.43\n/);
    assert.match(text, /duration +median 2m 0s, p90 6m 40s\n/);
    assert.match(text, /No budget is set\. Suggested: max_cost_usd = 2\.5 \(the p90 cost, rounded up\)\./);
    assert.doesNotMatch(await forecast(repoNamed('shop'), '--max-cost', '4'), /No budget is set/);
  });

  it('forecasts the actor and critic a run would use (flags, config) and, with fewer than five tasks, says so', async () => {
    const shop = repoNamed('shop');
    assert.deepEqual(JSON.parse(await forecast(shop, '--actor-agent', 'codex', '--json')), CODEX_FORECAST);
    assert.match(await forecast(shop, '--actor-agent', 'codex'), /No forecast: 3 past tasks with these agents and models, at least 5 needed\./);
    // The model counts, the actor's as the critic's: an actor set to sonnet by a flag is compared with the one such task.
    assert.equal((JSON.parse(await forecast(shop, '--actor-model', 'sonnet', '--json')) as { basis: number }).basis, 1);
    // A critic set to opus in the config, likewise.
    fs.mkdirSync(path.join(configHome, 'codeloops'), { recursive: true });
    fs.writeFileSync(path.join(configHome, 'codeloops', 'config.toml'), '[defaults.critic]\nmodel = "opus"\n');
    try {
      assert.equal((JSON.parse(await forecast(shop, '--json')) as { basis: number }).basis, 1);
    } finally {
      fs.rmSync(path.join(configHome, 'codeloops', 'config.toml'));
    }
  });

  it('shows the forecast in the --dry-run plan, as JSON and in words', async () => {
    const repo = repoNamed('planned');
    const home = isolateHome();
    home.restore();
    configureScriptedAgent(home.configHome, { actor: [], critic: [] });
    writeForecastSessions(home.sessionsDir, { shop: 'planned', agent: 'Command' });
    const plan = await runCli(['-p', 'x', '--dry-run', '--json-output'], { cwd: repo, env: home.env });
    assert.equal(plan.code, 0, plan.stderr);
    const planned = JSON.parse(plan.stdout) as { forecast: unknown; suggested_max_cost_usd: unknown };
    assert.deepEqual(planned.forecast, SHOP_FORECAST);
    assert.equal(planned.suggested_max_cost_usd, 2.5);
    const words = await runCli(['-p', 'x', '--dry-run'], { cwd: repo, env: home.env });
    assert.match(words.stderr, /forecast +From 6 past tasks of this project: iterations median 2, p90 5; cost median \$1\.10, p90 \$2\.43; duration/);
    assert.match(words.stderr, /budget +none; suggested: max_cost_usd = 2\.5 \(the p90 cost, rounded up\)/);
  });
});
