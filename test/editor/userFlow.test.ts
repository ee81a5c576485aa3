import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, packagedExtension, startCodeServer, type CodeServer } from '../support/codeServer.js';
import { anthropicMessages } from '../support/modelApi/anthropicMessages.js';
import { startModelApi, type ModelApi, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { realAgentHome } from '../support/realAgents.js';
import { GREETING_TASK, isCriticRequest, scriptedGreetingModel } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, removeTempDirs, repoRoot } from '../support/testEnvironment.js';

/**
 * The packaged extension used as a user would: the VSIX installed into the VS Code
 * server of code-server, the workbench in Chromium, a loop run from the Command
 * Palette with the real Claude Code CLI against a scripted Messages API. Every step
 * leaves a screenshot in test-output/vscode/.
 */

const SLOW_TASK = 'A slow task that the status bar will interrupt';
const CANDIDATES_TASK = 'Candidates: write hello-candidates.txt';
const REVIEW_TASK = 'Tidy review.txt, and wait for my review after each round';
const numbered = (change: Record<number, string> = {}) => Array.from({ length: 20 }, (_, index) => change[index + 1] ?? `line ${index + 1}`).join('\n') + '\n';

/** The review task's scripted model: two changes far apart, a critic with a finding on one, then the fix. */
function reviewModel(repo: string) {
  return (request: ModelRequest): ScriptedReply => {
    if (isCriticRequest(request)) {
      return request.allUserText.includes('Open review items')
        ? { text: 'Fixed.\n<decision>{"type":"done","summary":"review.txt is tidy","confidence":0.9,"resolved":["F1.1"]}</decision>' }
        : {
            text:
              'Line 2 is not tidy yet.\n<decision>' +
              JSON.stringify({
                type: 'continue',
                feedback: 'Line 2 must say TWO.',
                findings: [{ file: 'review.txt', line: 2, severity: 'warning', message: 'Line two should say TWO, in capitals' }],
              }) +
              '</decision>',
          };
    }
    const second = request.allUserText.includes('Reviewer findings still open');
    if (request.hasToolResult) return { text: second ? 'Line 2 says TWO.\nAddressed: F1.1' : 'Tidied review.txt.' };
    const content = second ? numbered({ 2: 'TWO' }) : numbered({ 2: 'two', 18: 'eighteen' });
    return { toolCalls: [{ name: 'Write', input: { file_path: path.join(repo, 'review.txt'), content } }] };
  };
}
const SCREENSHOTS = path.join(repoRoot(), 'test-output', 'vscode');

describe('the packaged extension, used as a user would (code-server + Chromium)', function () {
  this.timeout(600_000);
  let api: ModelApi;
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let repo: string;
  let dataHome: string;
  let step = 0;

  const shot = async (name: string): Promise<void> => {
    step += 1;
    await page.screenshot({ path: path.join(SCREENSHOTS, `flow-${String(step).padStart(2, '0')}-${name}.png`) });
  };

  const runCommand = async (title: string): Promise<void> => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    // The command of exactly that title: "Run Prompt" must not pick "Run Prompt with Candidates…", recently used or not.
    const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
    const row = page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: exact }) }).first();
    await row.waitFor();
    await row.click();
  };

  /** A tree entry opened (expanded), whether or not a test before opened it. */
  const expand = async (name: RegExp): Promise<void> => {
    const item = page.getByRole('treeitem', { name }).first();
    await item.waitFor();
    if ((await item.getAttribute('aria-expanded')) === 'false') await item.click();
  };

  /** Every entry of the Sessions view folded: an earlier test's open entries do not stand between a session and its children. */
  const collapseSessions = async (): Promise<void> => {
    await page.locator('.part.sidebar .action-label[aria-label^="Collapse All"]').first().click();
  };

  /** The Sessions view, shown (clicking its icon when it is already shown would hide it). */
  const showSessions = async (): Promise<void> => {
    const shown = page.locator('.part.sidebar .title-label', { hasText: /codeloops/i });
    if (!(await shown.isVisible())) await page.locator('.activitybar .action-item a[aria-label^="Codeloops"]').click();
    await shown.waitFor();
  };

  /** The candidates' actors wait for this before they write, so the test sees them running. */
  let releaseCandidates!: () => void;
  const candidatesReleased = new Promise<void>((resolve) => (releaseCandidates = resolve));
  /** Two Claude Code candidates: each writes its file with a shell command (in its own worktree); the judge prefers B. */
  const candidateModel = async (request: ModelRequest): Promise<ScriptedReply> => {
    if (request.toolNames.length === 0) return { text: 'Candidates' };
    if (request.allUserText.includes('You are the judge of several attempts')) {
      return { text: 'Both work.\n<decision>{"type":"ranking","ranking":["B","A"],"reasoning":"**B** ends its line with a newline."}</decision>' };
    }
    if (isCriticRequest(request)) return { text: '<decision>{"type":"done","summary":"hello-candidates.txt exists","confidence":0.85}</decision>' };
    if (request.hasToolResult) return { text: 'Wrote hello-candidates.txt.' };
    await candidatesReleased;
    return { toolCalls: [{ name: 'Bash', input: { command: "printf 'Hello from a candidate\\n' > hello-candidates.txt", description: 'write the file' } }] };
  };

  let greeting: Promise<void> | undefined;
  /**
   * The greeting loop, run from the Command Palette once for every test that looks at
   * it, so that each test passes alone and in any order (`--reverse`).
   */
  const greetingLoop = (): Promise<void> =>
    (greeting ??= (async () => {
      await shot('workbench');
      await runCommand('Codeloops: Run Prompt');
      const box = page.locator('.quick-input-widget input');
      await page.locator('.quick-input-widget', { hasText: 'What should the agent do?' }).waitFor();
      await box.fill(GREETING_TASK);
      await shot('prompt-typed');
      await page.keyboard.press('Enter');
      await page.locator('.notifications-toasts', { hasText: 'Codeloops finished' }).waitFor({ timeout: 120_000 });
      await shot('loop-finished');
    })());

  /** The greeting session's second iteration and its files, in the tree. */
  const revealSecondIteration = async (): Promise<void> => {
    await greetingLoop();
    await showSessions();
    await collapseSessions();
    await expand(/^Create greeting\.txt/);
    await expand(/^Iteration 2/);
    await page
      .getByRole('treeitem', { name: /^greeting\.txt/ })
      .first()
      .waitFor();
  };

  /** The greeting session's viewer, in front: from the tree's context menu when it is not open yet. */
  const showGreetingViewer = async () => {
    await greetingLoop();
    const tab = page.locator('.tab', { hasText: /Codeloops: Create greeting/ }).first();
    if ((await tab.count()) === 0) {
      await showSessions();
      await page
        .getByRole('treeitem', { name: /^Create greeting\.txt/ })
        .first()
        .click({ button: 'right' });
      await page.locator('.monaco-menu .action-menu-item', { hasText: 'Open Session Viewer' }).hover();
      await page.keyboard.press('Enter');
      await tab.waitFor({ timeout: 30_000 });
    }
    await tab.click();
    return page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
  };

  const sessionFiles = (): string[] => {
    const dir = path.join(dataHome, 'codeloops', 'sessions');
    return fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : [];
  };

  before(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    for (const old of fs.readdirSync(SCREENSHOTS).filter((name) => name.startsWith('flow-'))) fs.rmSync(path.join(SCREENSHOTS, old));

    repo = createRepo({ files: { 'README.md': '# greeting service\n', 'review.txt': numbered() } });
    const greetingModel = scriptedGreetingModel(repo);
    const forReview = reviewModel(repo);
    api = await startModelApi(anthropicMessages, (request) => {
      if (request.toolNames.length === 0) return { text: 'A title' };
      // The second loop's actor waits on its model for as long as the test lets it.
      if (!isCriticRequest(request) && request.allUserText.includes(SLOW_TASK)) return new Promise(() => {});
      if (request.allUserText.includes(REVIEW_TASK)) return forReview(request);
      if (request.allUserText.includes(CANDIDATES_TASK)) return candidateModel(request);
      return greetingModel(request);
    });
    const { env, home } = realAgentHome({ anthropic: api });
    dataHome = home.dataHome;

    // The server resolves the user's login shell for PATH, so the agent is named the way
    // a user on a remote would: by its full path, in the machine setting. A machine setting
    // belongs in the remote's own settings too (Preferences: Open Remote Settings): after a
    // window reload the server's extension host reads it from there.
    const agentPaths = { 'codeloops.agentPaths': { claude: path.join(repoRoot(), 'node_modules', '.bin', 'claude') } };
    server = await startCodeServer({
      extension: { vsix: packagedExtension() },
      folder: repo,
      env: { ...process.env, ...env },
      settings: agentPaths,
      machineSettings: agentPaths,
      logFile: path.join(SCREENSHOTS, 'flow-server.log'),
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    // What the workbench and its webviews report, for when a step fails.
    const consoleLog = fs.createWriteStream(path.join(SCREENSHOTS, 'flow-browser-console.log'));
    page.on('console', (message) => consoleLog.write(`[${message.type()}] ${message.text()}\n`));
    page.on('pageerror', (error) => consoleLog.write(`[pageerror] ${error.message}\n`));
    await page.goto(server.url);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page.waitForTimeout(2000); // let the workbench settle before the first keystroke
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed' && page) await page.screenshot({ path: path.join(SCREENSHOTS, `flow-failed-${step}.png`) }).catch(() => {});
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    await api?.close();
    removeTempDirs();
  });

  it('runs a prompt from the Command Palette: a real Claude Code loop of two iterations', async () => {
    await greetingLoop();
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hello, world\n');
    const file = sessionFiles().find(
      (candidate) => (JSON.parse(fs.readFileSync(candidate, 'utf8').split('\n')[0]!) as { prompt: string }).prompt === GREETING_TASK,
    );
    const { lines } = assertValidSessionFile(file!);
    assert.deepEqual(
      lines.map((line) => line.type),
      ['session_start', 'iteration', 'iteration', 'session_end'],
    );
    assert.equal(lines.at(-1)!.outcome, 'success');
  });

  it('shows the session in the Sessions tree, with its iterations and files', async () => {
    await revealSecondIteration();
    const session = page.getByRole('treeitem', { name: /^Create greeting\.txt/ });
    assert.match((await session.getAttribute('aria-label')) ?? '', /2 iterations/);
    // The greeting session's first iteration: the entry above its second.
    const iterations = page.getByRole('treeitem', { name: /^Iteration [12]\b/ });
    const labels = await iterations.evaluateAll((items) => items.map((item) => item.getAttribute('aria-label') ?? ''));
    const second = labels.findIndex((label) => /^Iteration 2/.test(label));
    assert.match(labels[second - 1] ?? '', /^Iteration 1.*CONTINUE · 2 files \+2 −0/);
    assert.match(labels[second] ?? '', /DONE · 1 file \+1 −1/);
    await shot('sessions-tree');
  });

  it('opens the diff editor when a changed file is clicked', async () => {
    // One editor group, wide enough for the side-by-side diff, whatever earlier tests left open.
    await runCommand('View: Close All Editor Groups');
    await revealSecondIteration();
    await page
      .getByRole('treeitem', { name: /^greeting\.txt/ })
      .first()
      .click();
    await page.locator('.tab', { hasText: 'greeting.txt (iteration 2)' }).waitFor();
    const diff = page.locator('.monaco-diff-editor').first();
    await diff.waitFor();
    await page.waitForTimeout(500);
    await shot('diff-editor');
    // Monaco renders spaces as no-break spaces.
    const side = async (selector: string) => ((await diff.locator(`${selector} .view-lines`).textContent()) ?? '').replace(/\u00a0/g, ' ');
    assert.match(await side('.editor.original'), /Helo, world/);
    assert.match(await side('.editor.modified'), /Hello, world/);
  });

  it('shows the timeline in the session viewer', async () => {
    const viewer = await showGreetingViewer();
    const cards = viewer.locator('article.iteration');
    await cards.first().waitFor({ timeout: 30_000 });
    assert.equal(await cards.count(), 2);
    assert.match((await cards.nth(0).textContent()) ?? '', /Iteration 1.*CONTINUE.*greeting\.txt says Helo/s);
    assert.match((await cards.nth(1).textContent()) ?? '', /Iteration 2.*DONE/s);
    assert.match((await viewer.locator('.outcome').textContent()) ?? '', /Success/);
    if ((await cards.nth(1).locator('details[open]').count()) === 0) await cards.nth(1).locator('summary').first().click();
    await viewer.locator('.diff-add', { hasText: 'Hello, world' }).first().waitFor();
    await shot('session-viewer');
  });

  it('brings the viewer back, with what was open, when the window reloads', async () => {
    // The second iteration opened in the greeting session's viewer.
    const before = (await showGreetingViewer()).locator('article.iteration').nth(1);
    await before.waitFor({ timeout: 30_000 });
    if ((await before.locator('details[open]').count()) === 0) await before.locator('summary').first().click();
    await before.locator('details[open]').waitFor();
    // As a user does it: Developer: Reload Window (the workbench saves its state first).
    await runCommand('Developer: Reload Window');
    await page.waitForEvent('load', { timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    await page
      .locator('.tab', { hasText: /Codeloops: Create greeting/ })
      .first()
      .click();
    const viewer = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const second = viewer.locator('article.iteration').nth(1);
    await second.waitFor({ timeout: 30_000 });
    // The second iteration was open before the reload; it is open again, its diff loaded.
    assert.equal(await second.locator('details[open]').count(), 1);
    await second.scrollIntoViewIfNeeded();
    await viewer.locator('.diff-add', { hasText: 'Hello, world' }).first().waitFor({ timeout: 30_000 });
    await shot('viewer-after-reload');
  });

  it('interrupts a second, slow loop from the status bar: the session ends interrupted', async () => {
    await runCommand('Codeloops: Run Prompt');
    await page.locator('.quick-input-widget', { hasText: 'What should the agent do?' }).waitFor();
    await page.locator('.quick-input-widget input').fill(SLOW_TASK);
    await page.keyboard.press('Enter');
    const status = page.locator('.statusbar-item', { hasText: 'Codeloops: iteration 1' });
    await status.waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => document.querySelector('.statusbar')?.textContent?.includes('actor'), undefined, { timeout: 30_000 });
    const live = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame').locator('.live h2', { hasText: 'Iteration 1: actor' });
    await live.waitFor({ timeout: 10_000 });
    await shot('slow-loop-running');
    await status.click();
    await page.locator('.notifications-toasts', { hasText: 'interrupted' }).waitFor({ timeout: 30_000 });
    await shot('slow-loop-interrupted');
    await showSessions();
    await page.getByRole('treeitem', { name: /^A slow task.*interrupted · / }).waitFor({ timeout: 10_000 });
    const viewer = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await viewer.locator('.outcome', { hasText: 'Interrupted' }).waitFor();
    assert.equal(await viewer.locator('.live h2').count(), 0, 'the live panel is gone');
    await shot('slow-loop-interrupted-tree');
    const slow = sessionFiles().find((file) => fs.readFileSync(file, 'utf8').includes(SLOW_TASK));
    assert.ok(slow, 'the slow loop has a session');
    const { lines } = assertValidSessionFile(slow);
    assert.equal(lines.at(-1)!.outcome, 'interrupted');
    assert.equal(await status.count(), 0, 'the status bar item is gone');
  });

  it('runs a prompt with two Claude Code candidates: grouped and live in the tree, compared side by side, one applied after a modal', async () => {
    await runCommand('Codeloops: Run Prompt with Candidates…');
    const widget = page.locator('.quick-input-widget');
    const input = widget.locator('input');
    // The quick inputs' titles say the step (their placeholders are not text).
    await widget.filter({ hasText: 'Run Prompt with Candidates (1/3)' }).waitFor();
    await shot('candidates-agents');
    await page.keyboard.press('Enter'); // Claude Code is picked
    await widget.filter({ hasText: 'Run Prompt with Candidates (2/3)' }).waitFor();
    assert.equal(await input.inputValue(), 'claude');
    await page.keyboard.press('Enter');
    await widget.filter({ hasText: 'Run Prompt with Candidates (3/3)' }).waitFor();
    await input.fill('2×');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: '2× each' }).first().waitFor();
    await page.keyboard.press('Enter');
    await widget.filter({ hasText: 'What should the agent do?' }).waitFor();
    await input.fill(CANDIDATES_TASK);
    await page.keyboard.press('Enter');

    // Live: one entry for the task, the two candidates under it, running.
    await showSessions();
    const group = page.getByRole('treeitem', { name: new RegExp(`^${CANDIDATES_TASK}.*2 candidates · 0 of 2 done`) });
    await group.first().waitFor({ timeout: 120_000 });
    await page.getByRole('treeitem', { name: /^claude#1.*running/ }).waitFor({ timeout: 60_000 });
    await page.getByRole('treeitem', { name: /^claude#2.*running/ }).waitFor({ timeout: 60_000 });
    await page.locator('.statusbar-item', { hasText: 'Codeloops: 2 candidates' }).waitFor();
    // The comparison page, opened as the group started, follows it live.
    await page
      .locator('.tab', { hasText: /^Candidates: / })
      .first()
      .click();
    const comparison = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    const rows = comparison.locator('table.comparison-table tr.candidate');
    await comparison.locator('tr.candidate-running', { hasText: /claude#1.*Running \(iteration 1, actor\)/ }).waitFor({ timeout: 30_000 });
    await comparison.locator('tr.candidate-running', { hasText: /claude#2.*Running \(iteration 1, actor\)/ }).waitFor({ timeout: 30_000 });
    await shot('candidates-running');
    releaseCandidates();
    await page.locator('.notifications-toasts', { hasText: 'Codeloops candidates finished' }).waitFor({ timeout: 180_000 });
    await page.getByRole('treeitem', { name: new RegExp(`^${CANDIDATES_TASK}.*finished.*best: claude#2`) }).waitFor({ timeout: 30_000 });
    await page.getByRole('treeitem', { name: /^1\. claude#2/ }).waitFor();
    await shot('candidates-tree');

    // The comparison, ranked.
    await page
      .locator('.tab', { hasText: /^Candidates: / })
      .first()
      .click();
    await comparison.locator('tr.candidate.winner').waitFor({ timeout: 30_000 });
    assert.match((await rows.nth(0).textContent()) ?? '', /^1claude#2.*Success.*1.*1\+1 −0.*85%/);
    assert.match((await rows.nth(1).textContent()) ?? '', /^2claude#1.*Success/);
    await comparison.locator('.judge', { hasText: 'ends its line with a newline' }).waitFor();
    await rows.nth(0).locator('button', { hasText: 'Diff' }).click();
    await comparison.locator('.candidate-diff .diff-add', { hasText: 'Hello from a candidate' }).first().waitFor();
    await shot('candidates-comparison');

    // Apply This Candidate: the files first, in the same modal as a rollback.
    await rows.nth(0).locator('button', { hasText: 'Apply This Candidate' }).click();
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30_000 });
    assert.match((await dialog.textContent()) ?? '', /Apply claude#2 to your working tree\?.*Write \(1\):\s*hello-candidates\.txt/s);
    await shot('candidates-apply-confirmation');
    await dialog.locator('.monaco-button', { hasText: /^Apply This Candidate$/ }).click();
    const applied = page.locator('.notifications-toasts', { hasText: 'Codeloops: applied claude#2' });
    await applied.waitFor({ timeout: 30_000 });
    assert.equal(fs.readFileSync(path.join(repo, 'hello-candidates.txt'), 'utf8'), 'Hello from a candidate\n');
    await comparison.locator('tr.candidate', { hasText: 'applied' }).waitFor({ timeout: 30_000 });
    await shot('candidates-applied');

    // Undone from the notification: the file goes again.
    await applied.locator('.monaco-button', { hasText: 'Undo Apply' }).click();
    await dialog.waitFor({ timeout: 30_000 });
    await dialog.locator('.monaco-button', { hasText: /^Undo Apply$/ }).click();
    await page.locator('.notifications-toasts', { hasText: 'apply undone' }).waitFor({ timeout: 30_000 });
    assert.ok(!fs.existsSync(path.join(repo, 'hello-candidates.txt')));
  });

  it('rolls an iteration back from the tree’s context menu after a modal that lists the file, and undoes it from the notification', async () => {
    await revealSecondIteration();
    await page
      .getByRole('treeitem', { name: /^Iteration 2/ })
      .first()
      .click({ button: 'right' });
    // The workbench's context menu acts on the focused entry: hover it, then Enter, as with a keyboard.
    await page.locator('.monaco-menu .action-menu-item', { hasText: 'Roll Back to Before This Iteration' }).hover();
    await page.keyboard.press('Enter');
    const dialog = page.locator('.monaco-dialog-box');
    await dialog.waitFor({ timeout: 30_000 });
    assert.match((await dialog.textContent()) ?? '', /Roll back to before iteration 2\?.*Restore \(1\):\s*greeting\.txt/s);
    await shot('rollback-confirmation');
    await dialog.locator('.monaco-button', { hasText: /^Roll Back$/ }).click();
    const toast = page.locator('.notifications-toasts', { hasText: 'rolled back to before iteration 2' });
    await toast.waitFor({ timeout: 30_000 });
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Helo, world\n', 'as it was before iteration 2');
    assert.equal(fs.readFileSync(path.join(repo, 'build-note.txt'), 'utf8'), 'noted by a shell\n', 'iteration 1’s work stays');
    await shot('rolled-back');
    await toast.locator('.monaco-button', { hasText: 'Undo Rollback' }).click();
    await dialog.waitFor({ timeout: 30_000 });
    assert.match((await dialog.textContent()) ?? '', /Undo the last rollback\?.*Restore \(1\):\s*greeting\.txt/s);
    await dialog.locator('.monaco-button', { hasText: /^Undo Rollback$/ }).click();
    await page.locator('.notifications-toasts', { hasText: 'rollback undone' }).waitFor({ timeout: 30_000 });
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hello, world\n');
    await shot('rollback-undone');
  });

  it('reviews like a pull request: the critic’s comment on the diff, a hunk rejected from the diff editor, a paused loop continued from the notification', async () => {
    await runCommand('Codeloops: Toggle Review Before Continuing');
    await page.locator('.notifications-toasts', { hasText: 'loops now wait for your review' }).waitFor({ timeout: 30_000 });
    await runCommand('Codeloops: Run Prompt');
    await page.locator('.quick-input-widget', { hasText: 'What should the agent do?' }).waitFor();
    await page.locator('.quick-input-widget input').fill(REVIEW_TASK);
    await page.keyboard.press('Enter');
    const waiting = page.locator('.notification-toast', { hasText: 'is waiting for your review of iteration 1' });
    await waiting.waitFor({ timeout: 120_000 });
    await page.locator('.statusbar-item', { hasText: 'waiting for your review of iteration 1' }).waitFor();
    await shot('review-paused');

    // The critic's finding, where the code is: on the diff of the iteration.
    await showSessions();
    await collapseSessions();
    await expand(/^Tidy review\.txt/);
    const iteration = page.getByRole('treeitem', { name: /^Iteration 1/ }).first();
    if ((await iteration.getAttribute('aria-expanded')) === 'false') await iteration.click();
    await page
      .getByRole('treeitem', { name: /^review\.txt/ })
      .first()
      .click();
    await page.locator('.tab', { hasText: 'review.txt (iteration 1)' }).waitFor();
    const thread = page.locator('.review-widget', { hasText: 'Line two should say TWO, in capitals' });
    await thread.first().waitFor({ timeout: 30_000 });
    await shot('review-finding-on-diff');

    // Reject the second hunk from the diff editor: right-click on its line, give a reason.
    const modified = page.locator('.monaco-diff-editor .editor.modified');
    const line18 = modified.locator('.view-line', { hasText: 'eighteen' });
    await line18.click({ button: 'right' });
    await page.locator('.monaco-menu .action-menu-item', { hasText: 'Reject This Change' }).hover();
    await page.keyboard.press('Enter');
    await page.locator('.quick-input-widget', { hasText: 'Reject hunk 2 of iteration 1' }).waitFor();
    await page.locator('.quick-input-widget input').fill('line 18 is public: keep it');
    await shot('review-reject-reason');
    await page.keyboard.press('Enter');
    await page.locator('.notifications-toasts', { hasText: 'Undid hunk 2 of iteration 1 in review.txt' }).waitFor({ timeout: 30_000 });
    assert.equal(fs.readFileSync(path.join(repo, 'review.txt'), 'utf8'), numbered({ 2: 'two' }), 'only that hunk was undone');

    // Continue from the notification; the next actor hears about both.
    if (!(await waiting.isVisible())) await runCommand('Notifications: Show Notifications');
    await page
      .locator('.notification-list-item', { hasText: 'is waiting for your review of iteration 1' })
      .locator('.monaco-button', { hasText: /^Continue$/ })
      .first()
      .click();
    await page.locator('.notifications-toasts', { hasText: 'Codeloops finished' }).waitFor({ timeout: 120_000 });
    assert.equal(fs.readFileSync(path.join(repo, 'review.txt'), 'utf8'), numbered({ 2: 'TWO' }));
    const secondActor = api.requests.find((request) => !isCriticRequest(request) && request.lastUserText.includes('Reviewer findings still open'));
    assert.match(secondActor?.lastUserText ?? '', /R1\.1: the user rejected this change of iteration 1 in review\.txt because: line 18 is public: keep it/);
    assert.match(secondActor?.lastUserText ?? '', /F1\.1 in review\.txt:2 \(warning\): Line two should say TWO, in capitals/);

    // The viewer lists the review under its iteration.
    const tab = page.locator('.tab', { hasText: /Codeloops: Tidy review/ }).first();
    await tab.click();
    const viewer = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
    await viewer.locator('.review-item.finding', { hasText: 'F1.1' }).waitFor({ timeout: 30_000 });
    await viewer.locator('.review-item.rejection', { hasText: 'line 18 is public' }).waitFor();
    await viewer.locator('.review-item.finding', { hasText: 'F1.1' }).scrollIntoViewIfNeeded();
    await shot('review-in-viewer');
    await runCommand('Codeloops: Toggle Review Before Continuing');
  });
});

describe('the packaged extension in an untrusted workspace', function () {
  this.timeout(300_000);
  let server: CodeServer | undefined;
  let browser: Browser | undefined;

  after(async () => {
    await browser?.close();
    await server?.stop();
    removeTempDirs();
  });

  it('shows sessions but refuses to run a loop, and says why', async () => {
    const repo = createRepo({ files: { 'README.md': '# someone else’s code\n' } });
    const { env, home } = realAgentHome({});
    // A session from earlier, to browse.
    fs.mkdirSync(home.sessionsDir, { recursive: true });
    fs.writeFileSync(
      path.join(home.sessionsDir, '2026-01-01T00-00-00Z_abcdef.jsonl'),
      JSON.stringify({
        type: 'session_start',
        timestamp: '2026-01-01T00:00:00Z',
        prompt: 'An earlier session',
        working_dir: repo,
        actor_agent: 'Claude Code',
        critic_agent: 'Claude Code',
        actor_model: null,
        critic_model: null,
        max_iterations: 3,
      }) + '\n',
    );
    server = await startCodeServer({ extension: { vsix: packagedExtension() }, folder: repo, env: { ...process.env, ...env }, trusted: false });
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(server.url);
    await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
    // The folder was never trusted: VS Code opens it in Restricted Mode.
    await page.locator('.statusbar-item', { hasText: 'Restricted Mode' }).waitFor({ timeout: 30_000 });

    await page.locator('.activitybar .action-item a[aria-label^="Codeloops"]').click();
    await page.getByRole('treeitem', { name: /^An earlier session/ }).waitFor();

    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible' });
    await input.fill('>Codeloops: Run Prompt');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Codeloops: Run Prompt' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.notifications-toasts', { hasText: 'does not run loops in an untrusted workspace' }).waitFor({ timeout: 30_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'flow-untrusted-workspace.png') });
    assert.deepEqual(fs.readdirSync(home.sessionsDir), ['2026-01-01T00-00-00Z_abcdef.jsonl'], 'no loop ran');
  });
});
