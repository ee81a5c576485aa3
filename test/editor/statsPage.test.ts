import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { EXPECTED_AGENT_ROWS, EXPECTED_TILES, writeStatsSessions } from '../support/statsSessions.js';
import { git, isolateHome, tempDir, writeFile } from '../support/testEnvironment.js';
import { EDITOR_OUTPUT, packagedWorkbenches } from '../support/workbench.js';

/**
 * The stats page of the packaged extension (code-server's VS Code in Chromium), opened
 * from the Sessions view's title bar over a folder of sessions with known figures
 * (statsSessions.ts): the workspace folder is the project `shop` of those sessions, and
 * a session of another project (`blog`) is left out until the user picks All projects.
 */

describe('the packaged extension: the stats page from the Sessions view (code-server + Chromium)', function () {
  this.timeout(300_000);
  const workbenches = packagedWorkbenches();

  it('shows this folder’s figures as worked out by hand, follows a new session, and counts every project on request', async () => {
    const home = isolateHome();
    home.restore(); // only the server uses it
    writeStatsSessions(home.sessionsDir);
    writeSession(home.sessionsDir, [startLine({ prompt: 'Elsewhere', timestamp: '2025-03-09T10:00:00Z', working_dir: '/w/blog' }), endLine({ iterations: 1 })]);
    // The workspace folder is named as the sessions' project.
    const folder = path.join(tempDir('codeloops-stats-workspace-'), 'shop');
    fs.mkdirSync(folder);
    git(folder, 'init', '-q', '-b', 'main');
    writeFile(folder, 'README.md', '# shop\n');
    git(folder, 'add', '-A');
    git(folder, 'commit', '-q', '-m', 'initial');
    const workbench = await workbenches.open(folder, { ...process.env, ...home.env }, 'stats-browser-console.log');

    await workbench.pressViewAction('Show Statistics');
    await workbench.showEditor('Codeloops Statistics');
    const page = workbench.webview();
    const sessionsTile = page.locator('.group-sessions .tile-value').first();
    await sessionsTile.waitFor({ timeout: 30_000 });
    const tiles = () =>
      page
        .locator('.stats-group')
        .evaluateAll((groups) =>
          groups.flatMap((group) =>
            [...group.querySelectorAll('.tile')].map((tile) => [
              [...group.classList].find((name) => name.startsWith('group-')),
              tile.querySelector('.tile-label')?.textContent,
              tile.querySelector('.tile-value')?.textContent,
            ]),
          ),
        );
    assert.deepEqual(await tiles(), EXPECTED_TILES);
    assert.deepEqual(
      await page.locator('.agents-table tbody tr').evaluateAll((rows) => rows.map((row) => [...row.children].map((cell) => cell.textContent))),
      EXPECTED_AGENT_ROWS,
    );
    assert.equal(await page.locator('select.filter-project').inputValue(), 'shop', 'this folder’s project at first');
    assert.equal(await page.locator('.chart-sessions rect.bar').count(), 8, 'a bar a day, 1 to 8 March');
    await workbench.screenshot(path.join(EDITOR_OUTPUT, 'stats-01-figures.png'));
    await workbench.screenshotEditors(path.join(EDITOR_OUTPUT, 'stats-01-page-only.png'));
    await page.locator('.agents-card').scrollIntoViewIfNeeded();
    await workbench.screenshot(path.join(EDITOR_OUTPUT, 'stats-02-charts.png'));

    // A session a CLI writes in a terminal is counted as it lands.
    writeSession(home.sessionsDir, [
      startLine({ prompt: 'Another task', timestamp: '2025-03-10T10:00:00Z', working_dir: '/w/shop' }),
      iterationLine(1, { critic_decision: 'DONE', feedback: null }),
      endLine({ iterations: 1, duration_secs: 10, verification: 'verified' }),
    ]);
    await page.locator('.group-sessions .tile-value', { hasText: /^9$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.group-tasks .tile-value').first().innerText(), '7');

    // All projects: the blog's session too.
    await page.locator('select.filter-project').selectOption({ label: 'All projects' });
    await page.locator('.group-sessions .tile-value', { hasText: /^10$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.group-tasks .tile-value').first().innerText(), '8');
  });
});
