import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { evalRecordLineSchema, evalResultsSchema, evalsDir, type EvalResults } from '../../src/sessionFormat/evalRecords.js';
import { sessionStartLineSchema } from '../../src/sessionFormat/sessionLines.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { launchChromium } from '../support/codeServer.js';
import { scriptedCliSetup, type ScriptedAgent } from '../support/scriptedAgent.js';
import { evalSetup, fileAppears } from '../support/tinyMathEval.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { git, removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';

function evalLines(dataHome: string, evalId: string) {
  return readJsonLines(path.join(evalsDir({ XDG_DATA_HOME: dataHome }), `${evalId}.jsonl`)).map((line) => evalRecordLineSchema.parse(line));
}

/**
 * The report as a user sees it: opened from its file in Chromium, with every request
 * the page made and every policy violation or script error it logged.
 */
async function openReport(file: string) {
  const browser = await launchChromium();
  const page = await (await browser.newContext()).newPage();
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(pathToFileURL(file).href);
  return { browser, page, requests, problems };
}

const rounded = (interval: [number, number] | null) => interval?.map((end) => Number(end.toFixed(4)));

/** The report of the eval above, opened in Chromium: the two configs compared as the JSON says, in tables and charts. */
async function assertReportShowsTheComparison(report: string, results: EvalResults): Promise<void> {
  const { browser, page, requests, problems } = await openReport(report);
  try {
    assert.equal(await page.title(), `Eval tiny-math (${results.eval_id})`);
    // A bar per config, split by outcome: lenient's four runs two accepted and two false DONE, strict's four accepted.
    const segments = (config: string) =>
      page
        .locator('tr.outcomes')
        .filter({ has: page.locator(`th:text-is("${config}")`) })
        .locator('svg rect')
        .evaluateAll((rects) => rects.map((rect) => `${rect.getAttribute('data-outcome')} ${rect.getAttribute('data-count')} ${rect.getAttribute('width')}`));
    assert.deepEqual(await segments('lenient'), ['accepted 2 180.0', 'false_done 2 180.0']);
    assert.deepEqual(await segments('strict'), ['accepted 4 360.0']);
    assert.deepEqual(await page.locator('tr.outcomes td:last-child').allTextContents(), [
      'accepted 2 · false DONE 2 · false CONTINUE 0 · failed 0',
      'accepted 4 · false DONE 0 · false CONTINUE 0 · failed 0',
    ]);
    // The accepted rate as a bar with its Wilson interval as an error bar: 50 % (15 to 85 %), 100 % (51 to 100 %).
    assert.deepEqual(await page.locator('tr.accepted-rate td:last-child').allTextContents(), ['50 % (15 to 85 %)', '100 % (51 to 100 %)']);
    assert.deepEqual(await page.locator('tr.accepted-rate rect.rate').evaluateAll((rects) => rects.map((rect) => rect.getAttribute('width'))), [
      '180.0',
      '360.0',
    ]);
    assert.equal(await page.locator('tr.accepted-rate g.interval').count(), 2);
    const configRows = await page
      .locator('table.configs tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.children].slice(0, 7).map((cell) => cell.textContent)));
    assert.deepEqual(configRows, [
      ['lenient', '4', '50 %', '15 to 85 %', '100 %', '50 %', '—'],
      ['strict', '4', '100 %', '51 to 100 %', '100 %', '0 %', '—'],
    ]);
    assert.deepEqual(await page.locator('table.pairs tbody tr').evaluateAll((rows) => rows.map((row) => row.textContent)), [
      'lenientstrict-50 points-85 to +10 %',
    ]);
    assert.equal(await page.locator('tr.pair circle.difference').count(), 1);
    assert.equal(await page.locator('table.runs tbody tr').count(), 8);
    assert.equal(await page.locator('table.runs td:text-is("false_done")').count(), 2);
    // Self-contained: the page asked for nothing but itself, and its policy refused nothing it needs.
    assert.deepEqual(requests, [pathToFileURL(report).href]);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
}

describe('codeloops eval: the false-DONE rate of a setup, measured with hidden acceptance', function () {
  this.timeout(240_000);
  after(removeTempDirs);

  it('two tasks, a critic that accepts a broken change and one that catches it, --jobs 2: the JSON figures are what happened', async () => {
    const { env, repo, suite, home, agent } = evalSetup({ repetitions: 2 });
    const userState = () => [git(repo, 'status', '--porcelain', '--ignored'), git(repo, 'rev-parse', 'HEAD'), git(repo, 'branch', '--list')];
    const before = userState();
    // A report that could not be written is said before any run starts, not after them all.
    const nowhere = await runCli(['eval', suite, '--html', path.join(repo, 'missing', 'report.html')], { cwd: repo, env });
    assert.equal(nowhere.code, 2);
    assert.match(nowhere.stderr, /The report's folder \S+missing does not exist/);
    assert.equal(agent.calls('actor'), 0);
    const result = await runCli(['eval', suite, '--jobs', '2', '--json'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const results: EvalResults = evalResultsSchema.parse(JSON.parse(result.stdout));
    assert.deepEqual(Object.keys(JSON.parse(result.stdout) as object), ['eval_id', 'suite', 'configs', 'pairs', 'runs', 'shard', 'complete', 'missing_runs']);
    assert.equal(results.suite, 'tiny-math');

    const outcomes = results.runs.map((run) => `${run.task}/${run.config}/${run.repetition}: ${run.outcome} in ${run.iterations}`);
    assert.deepEqual(outcomes, [
      'sum/lenient/1: false_done in 1',
      'sum/lenient/2: false_done in 1',
      'sum/strict/1: accepted in 2',
      'sum/strict/2: accepted in 2',
      'double/lenient/1: accepted in 1',
      'double/lenient/2: accepted in 1',
      'double/strict/1: accepted in 2',
      'double/strict/2: accepted in 2',
    ]);
    const [lenient, strict] = results.configs;
    // By hand: lenient accepted 2 of 4, its 4 DONEs 2 false. Wilson for 2/4: centre (0.5 + 1.96²/8)/(1 + 1.96²/4) = 0.5,
    // half-width 1.96·√(0.0625 + 1.96²/64)/(1 + 1.96²/4) = 0.35. For 4/4: centre 0.7550, half-width 0.2450.
    assert.deepEqual(
      { ...lenient, accepted_rate_interval: rounded(lenient!.accepted_rate_interval) },
      {
        name: 'lenient',
        runs: 4,
        success_rate: 1,
        accepted_rate: 0.5,
        accepted_rate_interval: [0.15, 0.85],
        false_done_rate: 0.5,
        false_continue_rate: null,
        mean_iterations: 1,
        total_cost_usd: null,
        cost_per_accepted_task_usd: null,
        mean_duration_secs: lenient!.mean_duration_secs,
      },
    );
    assert.deepEqual(
      { ...strict, accepted_rate_interval: rounded(strict!.accepted_rate_interval) },
      {
        name: 'strict',
        runs: 4,
        success_rate: 1,
        accepted_rate: 1,
        accepted_rate_interval: [0.5101, 1],
        false_done_rate: 0,
        false_continue_rate: null,
        mean_iterations: 2,
        total_cost_usd: null,
        cost_per_accepted_task_usd: null,
        mean_duration_secs: strict!.mean_duration_secs,
      },
    );
    assert.ok(lenient!.mean_duration_secs! > 0 && strict!.mean_duration_secs! > 0);
    // Newcombe: −0.5 − √(0.35² + 0²) = −0.85; −0.5 + √(0.35² + 0.4899²) = 0.1021.
    assert.deepEqual(
      results.pairs.map((pair) => ({ ...pair, interval: rounded(pair.interval) })),
      [{ a: 'lenient', b: 'strict', accepted_rate_difference: -0.5, interval: [-0.85, 0.1021] }],
    );
    // Every loop ran once: 1 actor and 1 critic call for each lenient run, 2 and 2 for each strict one.
    assert.equal(agent.calls('actor'), 12);
    assert.equal(agent.calls('critic'), 12);

    // Each run is a session tagged with its place in the eval; sessions list --eval finds exactly these.
    for (const run of results.runs) {
      const start = sessionStartLineSchema.parse(readJsonLines(path.join(home.sessionsDir, `${run.session_id}.jsonl`))[0]);
      assert.deepEqual(start.eval, { id: results.eval_id, task: run.task, config: run.config, repetition: run.repetition });
    }
    // A session of no eval beside them (one of theirs, copied without its tag) is not listed.
    const [first, ...rest] = fs.readFileSync(path.join(home.sessionsDir, `${results.runs[0]!.session_id}.jsonl`), 'utf8').split('\n');
    const { eval: _tag, ...untagged } = JSON.parse(first!) as Record<string, unknown>;
    fs.writeFileSync(path.join(home.sessionsDir, '2020-01-01T00-00-00Z_000000.jsonl'), [JSON.stringify(untagged), ...rest].join('\n'));
    const all = await runCli(['sessions', 'list', '--json'], { cwd: repo, env });
    assert.equal((JSON.parse(all.stdout) as unknown[]).length, 9);
    const listed = await runCli(['sessions', 'list', '--eval', results.eval_id, '--json'], { cwd: repo, env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual((JSON.parse(listed.stdout) as { id: string }[]).map((session) => session.id).sort(), results.runs.map((run) => run.session_id).sort());
    // No agent saw an acceptance command.
    for (let call = 1; call <= 12; call++)
      for (const role of ['actor', 'critic'] as const) assert.doesNotMatch(agent.prompt(role, call), /test\/sum\.test\.js|node --test/);
    // The user's repository is as it was, and the eval's worktrees are gone.
    assert.deepEqual(userState(), before);
    assert.deepEqual(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1);

    const report = path.join(tempDir('codeloops-eval-report-'), 'report.html');
    const markdown = await runCli(['eval', '--resume', results.eval_id, '--html', report], { cwd: repo, env });
    assert.equal(markdown.code, 0, markdown.stderr);
    assert.match(markdown.stdout, /^# Eval tiny-math/m);
    assert.match(markdown.stdout, /\| lenient \| 4 \| 50 % \| 15 to 85 % \| 100 % \| 50 % \|/);
    assert.match(markdown.stdout, /\| lenient \| strict \| -50 points \| -85 to \+10 % \|/);
    assert.equal(agent.calls('actor'), 12, 'resuming a finished eval runs nothing');
    await assertReportShowsTheComparison(report, results);

    // A suite's names are the user's to choose, and the report shows them as text: a copy of this eval's record whose
    // suite, a config and a task carry markup, carried on (nothing left to run) with --html.
    const hostile = '<script>window.pwned = true</script><img src=x onerror="window.pwned = true">';
    const copyId = 'eval-2020-01-01T00-00-00Z_abcdef';
    const record = fs.readFileSync(path.join(evalsDir({ XDG_DATA_HOME: home.dataHome }), `${results.eval_id}.jsonl`), 'utf8');
    const renamed = record
      .replaceAll(results.eval_id, copyId)
      .replaceAll('"tiny-math"', JSON.stringify(`math ${hostile}`))
      .replaceAll('"strict"', JSON.stringify(`strict ${hostile}`))
      .replaceAll('"double"', JSON.stringify(`double ${hostile}`));
    fs.writeFileSync(path.join(evalsDir({ XDG_DATA_HOME: home.dataHome }), `${copyId}.jsonl`), renamed);
    const hostileReport = path.join(path.dirname(report), 'hostile.html');
    const again = await runCli(['eval', '--resume', copyId, '--html', hostileReport, '--json'], { cwd: repo, env });
    assert.equal(again.code, 0, again.stderr);
    const opened = await openReport(hostileReport);
    try {
      assert.equal(await opened.page.evaluate(() => (window as { pwned?: boolean }).pwned), undefined);
      assert.equal(await opened.page.locator('script, img').count(), 0);
      assert.equal(await opened.page.locator('h1 .suite').textContent(), `math ${hostile}`);
      assert.deepEqual(await opened.page.locator('tr.outcomes th').allTextContents(), ['lenient', `strict ${hostile}`]);
      assert.equal(await opened.page.locator(`table.runs td:text-is(${JSON.stringify(`double ${hostile}`)})`).count(), 4);
      assert.deepEqual(opened.requests, [pathToFileURL(hostileReport).href]);
      assert.deepEqual(opened.problems, []);
    } finally {
      await opened.browser.close();
    }
  });

  it('runs whose names read alike on disk (the same first 60 characters; unicode, slashes and dots) each get their own worktree, --jobs 2; a run that does not succeed is false_continue or failed as its acceptance says', async () => {
    const long = 'a config name long enough that a folder name cut at sixty characters';
    const { env, repo, suite } = evalSetup({
      repetitions: 1,
      sumOnly: true,
      configs: `
[[configs]]
name = "${long}, one"
critic_model = "doubting"
max_iterations = 1

[[configs]]
name = "${long}, two"
critic_model = "doubting"
max_iterations = 2

[[configs]]
name = "strict/ü/.."
critic_model = "strict"
max_iterations = 4

[[configs]]
name = "strict/é/.."
critic_model = "lenient"
`,
    });
    const result = await runCli(['eval', suite, '--jobs', '2', '--json'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const results = evalResultsSchema.parse(JSON.parse(result.stdout));
    // The actor gets sum wrong first, right next: a doubting critic stops at its limit after the wrong sum or after the right one.
    assert.deepEqual(
      results.runs.map((run) => `${run.config}: ${run.outcome} in ${run.iterations}`),
      [`${long}, one: failed in 1`, `${long}, two: false_continue in 2`, 'strict/ü/..: accepted in 2', 'strict/é/..: false_done in 1'],
    );
    assert.deepEqual(
      results.configs.map((config) => [config.success_rate, config.accepted_rate, config.false_done_rate, config.false_continue_rate]),
      [
        [0, 0, null, 0],
        [0, 0, null, 1],
        [1, 1, 0, null],
        [1, 0, 1, null],
      ],
    );
    assert.deepEqual(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'every worktree removed');
  });

  it("an actor that rewrites the test script to exit 0 and a critic that believes it: false_done, for the acceptance runs the task's own tests, not the actor's script", async () => {
    const cheat = scriptedCliSetup({
      actor: [
        [
          { write: { path: 'math.js', content: 'export const sum = (a, b) => a - b;\nexport const double = (a) => a * 2;\n' } },
          { write: { path: 'package.json', content: JSON.stringify({ name: 'tiny', type: 'module', scripts: { test: 'exit 0' } }) } },
        ],
      ],
      critic: [[{ print: '<decision>{"type":"done","summary":"npm test passes","confidence":0.9}</decision>' }]],
    });
    const { repo } = evalSetup({ repetitions: 1, sumOnly: true });
    const suiteFolder = tempDir('codeloops-suite-');
    writeFile(
      suiteFolder,
      'suite.toml',
      `name = "cheat"\n\n[[tasks]]\nname = "sum"\nprompt = "Make sum(a, b) return a + b."\nrepository = ${JSON.stringify(repo)}\nacceptance = "npm test"\n\n[[configs]]\nname = "believing"\n`,
    );
    const result = await runCli(['eval', path.join(suiteFolder, 'suite.toml'), '--json'], { cwd: repo, env: cheat.env });
    assert.equal(result.code, 0, result.stderr);
    const results = evalResultsSchema.parse(JSON.parse(result.stdout));
    assert.deepEqual(
      results.runs.map((run) => [run.outcome, run.acceptance_passed]),
      [['false_done', false]],
    );
  });

  it('interrupted mid-eval (Ctrl+C), --resume runs only what had not finished, and the result is complete', async () => {
    const { env, repo, suite, home, agent } = evalSetup({ repetitions: 1 });
    // --jobs 1 runs sum/lenient (actor call 1), sum/strict (2, 3), then double/lenient, whose actor (call 4) holds.
    writeFile(agent.dir, 'hold-at-4', '');
    const running = startCli(['eval', suite, '--jobs', '1'], { cwd: repo, env });
    await fileAppears(path.join(agent.dir, 'held'));
    running.child.kill('SIGINT');
    const stopped = await running.done;
    assert.equal(stopped.code, 130, stopped.stderr);
    const evalId = /codeloops eval --resume (eval-\S+)/.exec(stopped.stderr)?.[1];
    assert.ok(evalId, stopped.stderr);
    const finishedBefore = evalLines(home.dataHome, evalId).filter((line) => line.type === 'run_finished');
    assert.deepEqual(
      finishedBefore.map((line) => line.type === 'run_finished' && `${line.task}/${line.config}`),
      ['sum/lenient', 'sum/strict'],
    );
    assert.equal(agent.calls('critic'), 3);

    const resumed = await runCli(['eval', '--resume', evalId, '--json'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    const results = evalResultsSchema.parse(JSON.parse(resumed.stdout));
    assert.deepEqual(
      results.runs.map((run) => `${run.task}/${run.config}: ${run.outcome}`),
      ['sum/lenient: false_done', 'sum/strict: accepted', 'double/lenient: accepted', 'double/strict: accepted'],
    );
    // The two finished runs kept their sessions and were not run again: the actor ran 4 + 1 + 2 times, the critic 3 + 1 + 2.
    assert.deepEqual(
      results.runs.slice(0, 2).map((run) => run.session_id),
      finishedBefore.map((line) => line.type === 'run_finished' && line.session_id),
    );
    assert.equal(agent.calls('actor'), 7);
    assert.equal(agent.calls('critic'), 6);
    assert.deepEqual(
      results.configs.map((config) => [config.name, config.runs, config.accepted_rate]),
      [
        ['lenient', 2, 0.5],
        ['strict', 2, 1],
      ],
    );

    // The interrupted run's session is the eval's too: five in all, one of them interrupted.
    const listed = await runCli(['sessions', 'list', '--eval', evalId, '--json'], { cwd: repo, env });
    const sessions = JSON.parse(listed.stdout) as { id: string; outcome: string }[];
    assert.equal(sessions.length, 5);
    assert.deepEqual(
      sessions.filter((session) => !results.runs.some((run) => run.session_id === session.id)).map((session) => session.outcome),
      ['interrupted'],
    );
  });
});

export type { ScriptedAgent };
