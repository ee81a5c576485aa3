import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { UiServer } from '../../src/server/uiServer.js';
import { DIFF_PAGE_LINES } from '../../webview-ui/diffView.js';
import { startCli } from '../support/cliProcess.js';
import { carryOnNaming, configureScriptedAgent, done } from '../support/scriptedAgent.js';
import { sessionStatsSchema } from '../../src/sessionFormat/sessionSummaries.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { createRepo, isolateHome, removeTempDirs, repoRoot, type IsolatedHome } from '../support/testEnvironment.js';
import { startTestServer } from './serverClient.js';
import { stopRunners } from '../support/processes.js';
import { pick, seededRandom } from '../support/seededRandom.js';

/** Chromium as this machine allows it (Debian's, no sandbox as root, no GPU, no calls home). */
const CHROMIUM = { executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'] };
const SCREENSHOTS = path.join(repoRoot(), 'test-output', 'ui');
const SESSIONS = 3000;
const HOSTILE = '<script>window.pwned = true</script><img src=x onerror="window.pwned = true">';
const DAY_MS = 24 * 3600 * 1000;

interface Fixture {
  id: string;
  outcome: 'success' | 'failed' | 'interrupted' | 'max_iterations_reached' | null;
  project: string;
  day: string;
  timestamp: string;
  iterations: number;
}

const PROJECTS = [
  ['storefront', 30],
  ['payments-api', 20],
  ['mobile-app', 14],
  ['design-system', 9],
  ['data-pipeline', 8],
  ['auth-service', 6],
  ['docs', 5],
  ['infra', 4],
  ['search', 2],
  ['cli-tools', 2],
] as const;
const TASKS = [
  'Add input validation to the registration endpoint',
  'Fix the flaky login test',
  'Refactor the payment module into smaller services',
  'Document the CLI flags',
  'Speed up the report query',
  'Migrate the settings page to the new form library',
  'Add retries to the webhook sender',
];

/**
 * Thousands of sessions over 100 days, as months of use leave them: more on weekdays,
 * more as time goes on, some projects busier than others, a success rate that
 * improves, a few sessions never finished.
 */
function writeManySessions(dir: string): Fixture[] {
  const random = seededRandom(20250101);
  const fixtures: Fixture[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    let day = Math.floor(random() ** 0.8 * 100);
    const weekday = new Date(Date.UTC(2025, 0, 1) + day * DAY_MS).getUTCDay();
    if ((weekday === 0 || weekday === 6) && random() < 0.7) day -= weekday === 0 ? 2 : 1;
    const started = new Date(Date.UTC(2025, 0, 1) + Math.max(0, day) * DAY_MS + (8 * 3600 + Math.floor(random() * 12 * 3600)) * 1000);
    const timestamp = started.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const project = pick(random, PROJECTS);
    const outcome: Fixture['outcome'] =
      random() < 0.02
        ? null
        : random() < 0.45 + (0.35 * day) / 100
          ? 'success'
          : pick(random, [
              ['failed', 40],
              ['max_iterations_reached', 35],
              ['interrupted', 25],
            ] as const);
    const iterations =
      outcome === 'success'
        ? pick(random, [
            [1, 40],
            [2, 30],
            [3, 15],
            [4, 8],
            [5, 4],
            [6, 2],
            [8, 1],
          ] as const)
        : outcome === 'max_iterations_reached'
          ? 10
          : 1 + Math.floor(random() * 3);
    const prompt = `${TASKS[i % TASKS.length]} (#${i})${i === 1234 ? ' — the zebra one' : ''}`;
    const lines = [startLine({ prompt, timestamp, working_dir: `/home/dev/${project}` })];
    for (let n = 1; n <= iterations; n++) {
      const last = n === iterations && outcome === 'success';
      lines.push(iterationLine(n, { critic_decision: last ? 'DONE' : 'CONTINUE', feedback: last ? null : `Handle case ${n}`, timestamp }));
    }
    if (outcome)
      lines.push(
        endLine({
          outcome,
          iterations,
          duration_secs: iterations * (60 + Math.floor(random() * 340)),
          summary: outcome === 'success' ? 'Done' : null,
          timestamp,
        }),
      );
    fixtures.push({ id: writeSession(dir, lines), outcome, project, day: timestamp.slice(0, 10), timestamp, iterations });
  }
  // The list's order: newest first, the id breaking ties.
  return fixtures.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || a.id.localeCompare(b.id));
}

describe('codeloops ui in a browser (Chromium)', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  let home: IsolatedHome;
  let server: UiServer;
  let browser: Browser;
  let context: BrowserContext;
  let fixtures: Fixture[];
  let bigDiffId: string;
  let hostileId: string;
  const problems: string[] = [];

  const url = (pagePath: string) => `${server.url.replace(/\/$/, '')}${pagePath}`;
  const shoot = (page: Page, name: string, fullPage = false) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage });
  const countText = (page: Page) => page.locator('.list-count').innerText();

  /** Every console message that speaks of a policy violation or an error, and every uncaught exception. */
  function watch(target: BrowserContext): void {
    target.on('page', (page) => {
      page.on('console', (message) => {
        if (message.type() === 'error' || /Content.Security.Policy|Refused to|Trusted Type/i.test(message.text()))
          problems.push(`${page.url()}: [${message.type()}] ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`${page.url()}: uncaught ${error.message}`));
    });
  }

  before(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    home = isolateHome();
    home.restore();
    fixtures = writeManySessions(home.sessionsDir);
    const bigDiff = Array.from({ length: 6000 }, (_, i) => (i % 3 === 0 ? `-removed line ${i}` : `+added line ${i} with some text 🎉`)).join('\n');
    bigDiffId = writeSession(home.sessionsDir, [
      startLine({
        prompt: 'Rename every handler in the API layer',
        timestamp: '2025-02-10T08:00:00Z',
        working_dir: '/home/dev/api',
        actor_model: 'sonnet',
        critic_agent: 'OpenCode',
      }),
      iterationLine(1, {
        git_diff: `diff --git a/src/handlers.ts b/src/handlers.ts\n--- a/src/handlers.ts\n+++ b/src/handlers.ts\n@@ -1,6000 +1,6000 @@\n${bigDiff}\n`,
        git_files_changed: 1,
        feedback: 'The tests in `handlers.test.ts` still use the **old names**.',
        actor_output: 'Renamed 4,000 handlers.\nRan the tests: 2 failures.',
      }),
      iterationLine(2, {
        git_diff:
          'diff --git a/src/handlers.test.ts b/src/handlers.test.ts\n--- a/src/handlers.test.ts\n+++ b/src/handlers.test.ts\n@@ -1 +1 @@\n-oldName()\n+newName()\n',
        critic_decision: 'DONE',
        feedback: null,
        actor_output: 'Fixed the tests.',
      }),
      endLine({ iterations: 2, summary: 'Every handler renamed; tests pass.', confidence: 0.93, duration_secs: 412 }),
    ]);
    hostileId = writeSession(home.sessionsDir, [
      startLine({ prompt: `Hostile ${HOSTILE}`, timestamp: '2025-02-11T08:00:00Z', working_dir: '/home/dev/hostile' }),
      iterationLine(1, {
        actor_output: HOSTILE,
        actor_stderr: HOSTILE,
        feedback: HOSTILE,
        remaining_issues: [HOSTILE],
        git_diff: `diff --git a/x.html b/x.html\n+${HOSTILE}\n`,
      }),
      endLine({ summary: HOSTILE }),
    ]);
    server = await startTestServer(home.sessionsDir, home.env, { liveLingerMs: 1000 });
    browser = await chromium.launch(CHROMIUM);
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
    watch(context);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    removeTempDirs();
  });

  // Whatever ran before, on every page: checked after the tests, so that it holds in any order.
  after('logged no policy violation and no script error on any page', () => {
    assert.deepEqual(problems, []);
  });

  it('lists thousands of sessions newest first, rendering only the rows in view', async () => {
    const page = await context.newPage();
    await page.goto(url('/'));
    await page.locator('.session-row').first().waitFor();
    assert.equal(await countText(page), `${(SESSIONS + 2).toLocaleString('en-US')} sessions`);
    const newest = fixtures.at(-1)!;
    assert.equal(await page.locator('.session-row').first().getAttribute('data-session-id'), newest.id);
    const rendered = await page.locator('.session-row').count();
    assert.ok(rendered > 5 && rendered < 100, `${rendered} rows in the page`);
    await shoot(page, 'list');
    // The oldest is at the bottom, reached by scrolling as in any long list.
    await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
    await page.locator(`.session-row[data-session-id="${fixtures[0]!.id}"]`).waitFor();
    assert.ok((await page.locator('.session-row').count()) < 100);
    await page.close();
  });

  it('filters by several outcomes, prompt text, project and dates, and keeps the filters in the address', async () => {
    const page = await context.newPage();
    await page.goto(url('/'));
    await page.locator('.session-row').first().waitFor();
    const expected = (predicate: (fixture: Fixture) => boolean) => `${fixtures.filter(predicate).length.toLocaleString('en-US')} sessions match`;
    await page.getByLabel('Failed').check();
    await page.waitForFunction(
      (text) => document.querySelector('.list-count')?.textContent === text,
      expected((f) => f.outcome === 'failed'),
    );
    await page.getByLabel('Interrupted').check();
    const failedOrInterrupted = expected((f) => f.outcome === 'failed' || f.outcome === 'interrupted');
    await page.waitForFunction((text) => document.querySelector('.list-count')?.textContent === text, failedOrInterrupted);
    const states = await page
      .locator('.session-row')
      .evaluateAll((rows) => [...new Set(rows.map((row) => [...row.classList].find((name) => name.startsWith('state-'))))]);
    assert.deepEqual(states.sort(), ['state-failed', 'state-interrupted']);
    assert.match(page.url(), /\?outcome=failed&outcome=interrupted$/);
    await shoot(page, 'list-filtered');

    // The address holds the filters: a reload (or a shared link) shows the same list.
    await page.reload();
    await page.waitForFunction((text) => document.querySelector('.list-count')?.textContent === text, failedOrInterrupted);
    assert.equal(await page.getByLabel('Failed').isChecked(), true);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Search prompts').fill('ZEBRA');
    await page.waitForFunction(() => document.querySelector('.list-count')?.textContent === '1 session match');
    assert.match(await page.locator('.session-row .row-prompt').first().innerText(), /the zebra one/);

    await page.getByLabel('Search prompts').fill('');
    await page.getByLabel('Project').selectOption('payments-api');
    await page.getByLabel('Started on or after').fill('2025-02-01');
    await page.getByLabel('Started on or before').fill('2025-02-28');
    await page.getByLabel('Started on or before').dispatchEvent('change');
    await page.waitForFunction(
      (text) => document.querySelector('.list-count')?.textContent === text,
      expected((f) => f.project === 'payments-api' && f.day >= '2025-02-01' && f.day <= '2025-02-28'),
    );
    assert.match(page.url(), /project=payments-api/);
    await page.close();
  });

  it('shows a session: its header, the timeline, and a large diff a page at a time', async () => {
    const page = await context.newPage();
    await page.goto(url(`/sessions/${bigDiffId}`));
    await page.locator('article.iteration').first().waitFor();
    assert.equal(await page.locator('h1.title').innerText(), 'Rename every handler in the API layer');
    assert.match(await page.locator('.outcome').innerText(), /Success/);
    assert.deepEqual(await page.locator('article.iteration').evaluateAll((cards) => cards.map((card) => card.getAttribute('aria-label'))), [
      'Iteration 1: CONTINUE',
      'Iteration 2: DONE',
    ]);
    assert.equal(await page.locator('article.iteration').first().locator('.feedback strong').innerText(), 'old names', 'feedback as Markdown');
    assert.match(await page.title(), /Codeloops · Rename every handler/);
    await page.locator('article.iteration').first().locator('summary').click();
    await page.locator('.diff-line').first().waitFor();
    assert.equal(await page.locator('.diff-line').count(), DIFF_PAGE_LINES, 'the first page of a 6,000-line diff');
    assert.equal(await page.locator('.diff-line.diff-add').first().innerText(), '+added line 1 with some text 🎉');
    await shoot(page, 'session');
    await page.getByRole('button', { name: /Show 1,500 more lines/ }).click();
    assert.equal(await page.locator('.diff-line').count(), DIFF_PAGE_LINES * 2);
    assert.match(await page.locator('.detail').first().innerText(), /Renamed 4,000 handlers\./);
    // Back to the list, as it was.
    await page.getByRole('link', { name: 'All sessions' }).click();
    await page.locator('.session-row').first().waitFor();
    await page.close();
  });

  it('draws the stats: totals, the task figures grouped, sessions per day, success rate over time, iterations to success, projects, pairs of agents', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      const themed = await browser.newContext({ viewport: { width: 1280, height: 1000 }, colorScheme });
      watch(themed);
      const page = await themed.newPage();
      await page.goto(url('/stats'));
      await page.locator('svg.chart').nth(3).waitFor();
      assert.equal(await page.locator('.tile-value').first().innerText(), (SESSIONS + 2).toLocaleString('en-US'));
      for (const chart of ['chart-sessions', 'chart-success', 'chart-iterations', 'chart-projects']) {
        assert.equal(await page.locator(`.${chart} svg.chart`).count(), 1, chart);
      }
      assert.ok((await page.locator('.chart-sessions rect.bar').count()) >= 14, 'a bar per day (or week)');
      assert.ok((await page.locator('.chart-success circle.rate-dot').count()) >= 14);
      const mostIterations = Math.max(...fixtures.filter((f) => f.outcome === 'success').map((f) => f.iterations));
      assert.equal(await page.locator('.chart-iterations rect.bar').count(), mostIterations, `successes took 1 to ${mostIterations} iterations`);
      assert.equal(await page.locator('.chart-projects .share-row').count(), 12, 'ten projects and the two extra sessions’');
      assert.equal(await page.locator('.chart-projects .share-label').first().textContent(), 'storefront', 'the busiest first');
      // The per-task figures, grouped, and the pairs' table, as the API gives them.
      const stats = sessionStatsSchema.parse(await page.evaluate(() => fetch('/api/stats').then((reply) => reply.json())));
      assert.deepEqual(await page.locator('.stats-group h2').allInnerTexts(), ['Sessions', 'Tasks', 'The critic', 'Cost']);
      const tileOf = (group: string, label: string) => page.locator(`.${group} .tile`).filter({ hasText: label }).locator('.tile-value').innerText();
      const share = (value: number | null) => (value === null ? '—' : `${Math.round(value * 100)}%`);
      assert.equal(await tileOf('group-tasks', 'Tasks'), stats.total_tasks.toLocaleString('en-US'));
      assert.equal(await tileOf('group-tasks', 'First-try success'), share(stats.first_try_success_rate));
      assert.equal(await tileOf('group-tasks', 'Waste rate'), share(stats.waste_rate));
      assert.equal(await tileOf('group-critic', 'Approval rate'), share(stats.critic_approval_rate));
      assert.equal(await tileOf('group-critic', 'Improvement rate'), share(stats.improvement_rate));
      // No session here recorded a cost, nor a DONE the gate refused: nothing to rate, said with a dash.
      assert.equal(await tileOf('group-cost', 'Cost per success'), '—');
      assert.equal(await tileOf('group-critic', 'DONE refused'), '0%');
      assert.deepEqual(
        await page.locator('.agents-table tbody tr').evaluateAll((rows) => rows.map((row) => [row.children[0]!.textContent, row.children[1]!.textContent])),
        stats.by_agents.map((pair) => [pair.actor_agent, pair.critic_agent]),
      );
      assert.equal(stats.by_agents.length, 2, 'the OpenCode critic of one session makes a second pair');
      const barHeights = await page.locator('.chart-sessions rect.bar').evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute('height'))));
      assert.ok(
        barHeights.some((height) => height > 50),
        'bars are drawn to scale',
      );
      await shoot(page, `stats-${colorScheme}`);
      await themed.close();
    }
  });

  it('renders agent text as text: <script> and <img onerror> in a session run nothing', async () => {
    const page = await context.newPage();
    await page.goto(url(`/sessions/${hostileId}`));
    await page.locator('article.iteration').first().waitFor();
    await page.locator('article.iteration summary').first().click();
    await page.locator('.diff-line').first().waitFor();
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => (window as { pwned?: boolean }).pwned), undefined);
    assert.equal(await page.locator('img').count(), 0);
    assert.equal(await page.locator('#app script').count(), 0);
    assert.ok((await page.locator('#app').innerText()).includes('<script>window.pwned = true</script>'), 'shown, as text');
    await shoot(page, 'hostile-session', true);
    await page.goto(url(`/?search=${encodeURIComponent('Hostile')}`));
    await page.locator('.session-row').first().waitFor();
    assert.equal(await page.evaluate(() => (window as { pwned?: boolean }).pwned), undefined);
    assert.equal(await page.locator('img').count(), 0);
    await page.close();
  });

  it('follows a running loop: the list shows it appear and finish, its page shows each iteration as it lands', async () => {
    const list = await context.newPage();
    await list.goto(url('/'));
    await list.locator('.feed-live').waitFor();
    await list.locator('.session-row').first().waitFor();

    configureScriptedAgent(home.configHome, {
      actor: [
        [{ print: 'Reading the handlers' }, { sleep: 2500 }, { write: { path: 'one.txt', content: '1\n' } }],
        [{ print: 'Writing the tests' }, { sleep: 800 }, { write: { path: 'two.txt', content: '2\n' } }],
      ],
      critic: [[carryOnNaming('Add a test for the **empty** case')], [done('Both files written', 0.9)]],
    });
    const repo = createRepo({ files: { 'README.md': '# live\n' } });
    const before = new Set(fs.readdirSync(home.sessionsDir));
    const run = startCli(['-p', 'Live loop from the browser test'], { cwd: repo, env: home.env });
    try {
      const row = list.locator('.session-row').first();
      await list.waitForFunction(() => document.querySelector('.session-row .row-prompt')?.textContent === 'Live loop from the browser test', undefined, {
        timeout: 20_000,
      });
      await list.waitForFunction(() => /Running · iteration 1/.test(document.querySelector('.session-row .row-outcome')?.textContent ?? ''));
      assert.match((await row.getAttribute('class')) ?? '', /state-running/);
      await shoot(list, 'live-list');
      const id = (await row.getAttribute('data-session-id'))!;

      const viewer = await context.newPage();
      await viewer.goto(url(`/sessions/${id}`));
      await viewer.waitForFunction(() => /Iteration 1: actor/.test(document.querySelector('.live h2')?.textContent ?? ''));
      await viewer.waitForFunction(() => document.querySelector('.live pre')?.textContent?.includes('Reading the handlers') ?? false);
      assert.match(await viewer.locator('.outcome').innerText(), /Running/);
      await shoot(viewer, 'live-session');
      await viewer.locator('article.iteration').first().waitFor({ timeout: 20_000 });
      assert.equal(await viewer.locator('article.iteration').first().getAttribute('aria-label'), 'Iteration 1: CONTINUE');
      await viewer.locator('article.iteration').nth(1).waitFor({ timeout: 20_000 });
      await viewer.waitForFunction(() => /Success/.test(document.querySelector('.outcome')?.textContent ?? ''), undefined, { timeout: 20_000 });
      assert.equal(await viewer.locator('.live').innerText(), '', 'the live panel is gone');
      assert.equal((await run.done).code, 0);
      await list.waitForFunction(
        (sessionId) => document.querySelector(`.session-row[data-session-id="${sessionId}"]`)?.classList.contains('state-success') ?? false,
        id,
      );
      await shoot(viewer, 'live-session-done');
      await viewer.close();
    } finally {
      run.child.kill('SIGKILL');
      await list.close();
      // The other tests count and order the fixtures alone, whenever they run.
      for (const name of fs.readdirSync(home.sessionsDir)) if (!before.has(name)) fs.rmSync(path.join(home.sessionsDir, name));
    }
  });
});
