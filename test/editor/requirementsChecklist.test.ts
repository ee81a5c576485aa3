import assert from 'node:assert/strict';
import path from 'node:path';
import { requirementsSession, UNMET_EVIDENCE } from '../support/requirementsSession.js';
import { isolateHome } from '../support/testEnvironment.js';
import { EDITOR_OUTPUT, packagedWorkbenches } from '../support/workbench.js';

/**
 * The requirements checklist in the packaged extension's session viewer (code-server's
 * VS Code in Chromium), on a session the built CLI made beforehand: its task lists
 * three requirements; the critic met two with evidence on iteration 1 and said DONE,
 * refused for the third; on iteration 2 it met all three.
 */

describe('the packaged extension: the requirements checklist in the session viewer (code-server + Chromium)', function () {
  this.timeout(300_000);
  const workbenches = packagedWorkbenches();

  it('shows REQ1–REQ3 met or unmet on each iteration with their evidence, and that iteration 1’s DONE was refused for REQ3', async () => {
    const home = isolateHome();
    home.restore(); // only the CLI and the server use it
    const { repo } = await requirementsSession(home);
    const workbench = await workbenches.open(repo, { ...process.env, ...home.env }, 'requirements-browser-console.log');

    await workbench.showCodeloopsView();
    await workbench.contextMenu(workbench.treeItem(/^Add product and difference/).first(), 'Open Session Viewer');
    await workbench.showEditor(/Codeloops: Add product/);
    const viewer = workbench.webview();
    const [first, second] = [viewer.locator('article.iteration').nth(0), viewer.locator('article.iteration').nth(1)];
    await second.waitFor({ timeout: 30_000 });
    const item = (card: typeof first, id: string) => card.locator(`.requirements li[data-requirement="${id}"]`);
    const marks = async (card: typeof first) =>
      Promise.all(['REQ1', 'REQ2', 'REQ3'].map(async (id) => (await item(card, id).getAttribute('class')) ?? 'missing'));

    // Iteration 1: two met with evidence the record confirms, the third unmet, and DONE refused for it.
    assert.equal(await first.locator('.requirements-heading').innerText(), 'Requirements (from the task): 2 of 3 met with evidence');
    assert.deepEqual(await marks(first), ['requirement-met', 'requirement-met', 'requirement-open']);
    assert.match(await item(first, 'REQ1').innerText(), /REQ1 sum\(a, b\) returns a \+ b — evidence: check tests passed\s+said: the tests check passed/);
    assert.match(await item(first, 'REQ2').innerText(), /REQ2 product\(a, b\) returns a \* b — evidence: src\/sum\.js:2/);
    assert.equal((await item(first, 'REQ3').innerText()).trim(), `REQ3 difference(a, b) returns a - b — unmet: ${UNMET_EVIDENCE}`);
    assert.match(await first.locator('.refused').innerText(), /The critic said DONE; refused: REQ3 is unmet or without evidence/);
    assert.match((await first.getAttribute('aria-label')) ?? '', /Iteration 1: CONTINUE/);
    await first.locator('.requirements').scrollIntoViewIfNeeded();
    await workbench.screenshot(path.join(EDITOR_OUTPUT, 'requirements-01-refused.png'));

    // Iteration 2: all three met, DONE stands.
    assert.equal(await second.locator('.requirements-heading').innerText(), 'Requirements (from the task): 3 of 3 met with evidence');
    assert.deepEqual(await marks(second), ['requirement-met', 'requirement-met', 'requirement-met']);
    assert.match(await item(second, 'REQ3').innerText(), /REQ3 difference\(a, b\) returns a - b — evidence: src\/sum\.js:3/);
    assert.equal(await second.locator('.refused').count(), 0);
    assert.match((await second.getAttribute('aria-label')) ?? '', /Iteration 2: DONE/);
    assert.match(await viewer.locator('.outcome').innerText(), /Success/);
    await second.locator('.requirements').scrollIntoViewIfNeeded();
    await workbench.screenshot(path.join(EDITOR_OUTPUT, 'requirements-02-met.png'));
  });
});
