import assert from 'node:assert/strict';
import path from 'node:path';
import { readJsonLines } from '../support/scriptedLoop.js';
import { isolateHome, type IsolatedHome } from '../support/testEnvironment.js';
import { EDITOR_OUTPUT, packagedWorkbenches } from '../support/workbench.js';
import { WEAKENED_FILE, weakenedSession } from '../support/weakenedSession.js';

/**
 * A protected change shown and accepted in the packaged extension (code-server's VS
 * Code in Chromium): the session, made beforehand by the built CLI, refused DONE
 * because its actor marked the failing test skipped. The viewer says so; Accept… is
 * clicked, the reason typed, and the review record holds `change_accepted`.
 */

const REASON = 'the test is flaky, tracked in #12';

describe('the packaged extension: a protected change shown and accepted in the session viewer (code-server + Chromium)', function () {
  this.timeout(300_000);
  let home: IsolatedHome;
  const workbenches = packagedWorkbenches();

  it('shows why DONE was refused and the weakened test; Accept… asks why and records it, and the viewer shows it accepted', async () => {
    home = isolateHome();
    home.restore(); // only the CLI and the server use it
    const { repo, sessionId } = await weakenedSession(home);
    const workbench = await workbenches.open(repo, { ...process.env, ...home.env }, 'accept-change-browser-console.log');

    await workbench.showCodeloopsView();
    await workbench.contextMenu(workbench.treeItem(/^Fix sum so that its test passes/).first(), 'Open Session Viewer');
    await workbench.showEditor(/Codeloops: Fix sum/);
    const viewer = workbench.webview();
    const card = viewer.locator('article.iteration').first();
    await card.waitFor({ timeout: 30_000 });
    assert.match(
      (await card.locator('.refused').textContent()) ?? '',
      /The critic said DONE; refused: what the checks rest on was weakened \(test\/sum\.test\.js/,
    );
    const change = card.locator('.protected-change', { hasText: WEAKENED_FILE });
    assert.match((await change.textContent()) ?? '', /test\/sum\.test\.js: a test skipped .*refuses DONE until restored or accepted/);
    await workbench.screenshot(path.join(EDITOR_OUTPUT, 'accept-change-01-shown.png'));

    await change.locator('button', { hasText: 'Accept' }).click();
    const reason = await workbench.quickInput('Accept the change of test/sum.test.js in iteration 1');
    await reason.fill(REASON);
    await workbench.screenshot(path.join(EDITOR_OUTPUT, 'accept-change-02-reason.png'));
    await reason.accept();
    const accepted = await workbench.notification('Codeloops: accepted test/sum.test.js');
    assert.match((await accepted.shown.textContent()) ?? '', /the critic is told why/);
    await viewer.locator('.protected-accepted', { hasText: `accepted by you: ${REASON}` }).waitFor({ timeout: 30_000 });
    await workbench.screenshot(path.join(EDITOR_OUTPUT, 'accept-change-03-accepted.png'));

    const review = readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', sessionId, 'review.jsonl'));
    assert.deepEqual(
      review.map((record) => [record.type, record.iteration, record.file, record.kinds, record.reason]),
      [['change_accepted', 1, WEAKENED_FILE, ['skip_added'], REASON]],
    );
  });
});
