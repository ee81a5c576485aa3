import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { packagedExtension, startCodeServer, type CodeServer } from '../support/codeServer.js';
import { anthropicMessages } from '../support/modelApi/anthropicMessages.js';
import { startModelApi, type ModelApi, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { realAgentHome } from '../support/realAgents.js';
import { GREETING_TASK, isCriticRequest, scriptedGreetingModel } from '../support/scriptedClaude.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, removeTempDirs, repoRoot } from '../support/testEnvironment.js';
import { Workbench } from '../support/workbench.js';

/**
 * The packaged extension used as a user would: the VSIX installed into the VS Code
 * server of code-server, the workbench in Chromium, a loop run from the Command
 * Palette with the real Claude Code CLI against a scripted Messages API. Every step
 * leaves a screenshot in test-output/vscode/.
 */

const SLOW_TASK = 'A slow task that the status bar will interrupt';
const CANDIDATES_TASK = 'Candidates: write hello-candidates.txt';
const REVIEW_TASK = 'Tidy review.txt, and wait for my review after each round';
const NEEDS_TASK = 'Write welcome.txt in the language I choose';
const NEEDS_QUESTION = 'Which language should welcome.txt greet in?';
const numbered = (change: Record<number, string> = {}) => Array.from({ length: 20 }, (_, index) => change[index + 1] ?? `line ${index + 1}`).join('\n') + '\n';

/** The "needs you" task's scripted model: the critic asks the user which language, the actor writes in the one they answered. */
function needsModel(repo: string) {
  return (request: ModelRequest): ScriptedReply => {
    if (isCriticRequest(request)) {
      return request.allUserText.includes("Waiting for the user's answer")
        ? { text: 'Greets in French.\n<decision>{"type":"done","summary":"welcome.txt greets in French","confidence":0.9}</decision>' }
        : { text: `Only the user can choose.\n<decision>${JSON.stringify({ type: 'blocked', question: NEEDS_QUESTION })}</decision>` };
    }
    if (request.hasToolResult) return { text: 'Wrote welcome.txt.' };
    const answered = request.lastUserText.includes('Their answer, in their words');
    return { toolCalls: [{ name: 'Write', input: { file_path: path.join(repo, 'welcome.txt'), content: answered ? 'Bienvenue\n' : 'Welcome\n' } }] };
  };
}

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
  let workbench: Workbench;
  let repo: string;
  let dataHome: string;
  let step = 0;

  const shot = async (name: string): Promise<void> => {
    step += 1;
    await workbench.screenshot(path.join(SCREENSHOTS, `flow-${String(step).padStart(2, '0')}-${name}.png`));
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
      await workbench.runCommand('Codeloops: Run Prompt');
      const prompt = await workbench.quickInput('What should the agent do?');
      await prompt.fill(GREETING_TASK);
      await shot('prompt-typed');
      await prompt.accept();
      await workbench.notification('Codeloops finished', 120_000);
      await shot('loop-finished');
    })());

  /** The greeting session's second iteration and its files, in the tree. */
  const revealSecondIteration = async (): Promise<void> => {
    await greetingLoop();
    await workbench.openIteration(/^Create greeting\.txt/, /^Iteration 2/);
    await workbench
      .treeItem(/^greeting\.txt/)
      .first()
      .waitFor();
  };

  /** The greeting session's viewer, in front: from the tree's context menu when it is not open yet. */
  const showGreetingViewer = async () => {
    await greetingLoop();
    const tab = workbench.editorTab(/Codeloops: Create greeting/);
    if ((await tab.count()) === 0) {
      await workbench.showCodeloopsView();
      await workbench.contextMenu(workbench.treeItem(/^Create greeting\.txt/).first(), 'Open Session Viewer');
      await tab.waitFor({ timeout: 30_000 });
    }
    await tab.click();
    return workbench.webview();
  };

  const sessionFiles = (): string[] => {
    const dir = path.join(dataHome, 'codeloops', 'sessions');
    return fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : [];
  };

  before(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    // This flow's numbered steps from an earlier run (the untrusted workspace's screenshot is not this flow's: it may run first).
    for (const old of fs.readdirSync(SCREENSHOTS).filter((name) => /^flow-(\d+|failed)-/.test(name))) fs.rmSync(path.join(SCREENSHOTS, old));

    repo = createRepo({ files: { 'README.md': '# greeting service\n', 'review.txt': numbered() } });
    const greetingModel = scriptedGreetingModel(repo);
    const forReview = reviewModel(repo);
    const forNeeds = needsModel(repo);
    api = await startModelApi(anthropicMessages, (request) => {
      if (request.toolNames.length === 0) return { text: 'A title' };
      // The second loop's actor waits on its model for as long as the test lets it.
      if (!isCriticRequest(request) && request.allUserText.includes(SLOW_TASK)) return new Promise(() => {});
      if (request.allUserText.includes(REVIEW_TASK)) return forReview(request);
      if (request.allUserText.includes(NEEDS_TASK)) return forNeeds(request);
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
    workbench = await Workbench.open(server, { consoleLog: path.join(SCREENSHOTS, 'flow-browser-console.log') });
    await workbench.settled('main');
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') await workbench?.screenshot(path.join(SCREENSHOTS, `flow-failed-${step}.png`)).catch(() => {});
  });

  after(async () => {
    await workbench?.close();
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
    assert.match((await workbench.treeItem(/^Create greeting\.txt/).getAttribute('aria-label')) ?? '', /2 iterations/);
    // The greeting session's first iteration: the entry above its second.
    const labels = await workbench.treeItemLabels(/^Iteration [12]\b/);
    const second = labels.findIndex((label) => /^Iteration 2/.test(label));
    assert.match(labels[second - 1] ?? '', /^Iteration 1.*CONTINUE · 2 files \+2 −0/);
    assert.match(labels[second] ?? '', /DONE · 1 file \+1 −1/);
    await shot('sessions-tree');
  });

  it('opens the diff editor when a changed file is clicked', async () => {
    // One editor group, wide enough for the side-by-side diff, whatever earlier tests left open.
    await workbench.runCommand('View: Close All Editor Groups');
    await revealSecondIteration();
    await workbench
      .treeItem(/^greeting\.txt/)
      .first()
      .click();
    await workbench.editorTab('greeting.txt (iteration 2)').waitFor();
    const diff = await workbench.diffEditor();
    await shot('diff-editor');
    assert.match(await diff.text('original'), /Helo, world/);
    assert.match(await diff.text('modified'), /Hello, world/);
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
    await workbench.reloadWindow();
    await workbench.showEditor(/Codeloops: Create greeting/);
    const second = workbench.webview().locator('article.iteration').nth(1);
    await second.waitFor({ timeout: 30_000 });
    // The second iteration was open before the reload; it is open again, its diff loaded.
    assert.equal(await second.locator('details[open]').count(), 1);
    await second.scrollIntoViewIfNeeded();
    await workbench.webview().locator('.diff-add', { hasText: 'Hello, world' }).first().waitFor({ timeout: 30_000 });
    await shot('viewer-after-reload');
  });

  it('interrupts a second, slow loop from the status bar: the session ends interrupted', async () => {
    await workbench.runCommand('Codeloops: Run Prompt');
    await workbench.answer('What should the agent do?', SLOW_TASK);
    const status = workbench.statusBarItem('Codeloops: iteration 1');
    await status.waitFor({ timeout: 60_000 });
    await status.filter({ hasText: 'actor' }).waitFor({ timeout: 30_000 });
    const viewer = workbench.webview();
    await viewer.locator('.live h2', { hasText: 'Iteration 1: actor' }).waitFor({ timeout: 10_000 });
    await shot('slow-loop-running');
    await status.click();
    await workbench.notification('interrupted');
    await shot('slow-loop-interrupted');
    await workbench.showCodeloopsView();
    await workbench.treeItem(/^A slow task.*interrupted · /).waitFor({ timeout: 10_000 });
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
    await workbench.runCommand('Codeloops: Run Prompt with Candidates…');
    // The quick inputs' titles say the step (their placeholders are not text).
    const agents = await workbench.quickInput('Run Prompt with Candidates (1/3)');
    await shot('candidates-agents');
    await agents.accept(); // Claude Code is picked
    const candidates = await workbench.quickInput('Run Prompt with Candidates (2/3)');
    assert.equal(await candidates.value(), 'claude');
    await candidates.accept();
    const times = await workbench.quickInput('Run Prompt with Candidates (3/3)');
    await times.fill('2×');
    await times.option('2× each').waitFor();
    await times.accept();
    await workbench.answer('What should the agent do?', CANDIDATES_TASK);

    // Live: one entry for the task, the two candidates under it, running.
    await workbench.showCodeloopsView();
    await workbench
      .treeItem(new RegExp(`^${CANDIDATES_TASK}.*2 candidates · 0 of 2 done`))
      .first()
      .waitFor({ timeout: 120_000 });
    await workbench.treeItem(/^claude#1.*running/).waitFor({ timeout: 60_000 });
    await workbench.treeItem(/^claude#2.*running/).waitFor({ timeout: 60_000 });
    await workbench.statusBarItem('Codeloops: 2 candidates').waitFor();
    // The comparison page, opened as the group started, follows it live.
    await workbench.showEditor(/^Candidates: /);
    const comparison = workbench.webview();
    const rows = comparison.locator('table.comparison-table tr.candidate');
    await comparison.locator('tr.candidate-running', { hasText: /claude#1.*Running \(iteration 1, actor\)/ }).waitFor({ timeout: 30_000 });
    await comparison.locator('tr.candidate-running', { hasText: /claude#2.*Running \(iteration 1, actor\)/ }).waitFor({ timeout: 30_000 });
    await shot('candidates-running');
    releaseCandidates();
    await workbench.notification('Codeloops candidates finished', 180_000);
    await workbench.treeItem(new RegExp(`^${CANDIDATES_TASK}.*finished.*best: claude#2`)).waitFor({ timeout: 30_000 });
    await workbench.treeItem(/^1\. claude#2/).waitFor();
    await shot('candidates-tree');

    // The comparison, ranked.
    await workbench.showEditor(/^Candidates: /);
    await comparison.locator('tr.candidate.winner').waitFor({ timeout: 30_000 });
    assert.match((await rows.nth(0).textContent()) ?? '', /^1claude#2.*Success.*1.*1\+1 −0.*85%/);
    assert.match((await rows.nth(1).textContent()) ?? '', /^2claude#1.*Success/);
    await comparison.locator('.judge', { hasText: 'ends its line with a newline' }).waitFor();
    await rows.nth(0).locator('button', { hasText: 'Diff' }).click();
    await comparison.locator('.candidate-diff .diff-add', { hasText: 'Hello from a candidate' }).first().waitFor();
    await shot('candidates-comparison');

    // Apply This Candidate: the files first, in the same modal as a rollback.
    await rows.nth(0).locator('button', { hasText: 'Apply This Candidate' }).click();
    const confirmApply = await workbench.dialog();
    assert.match(await confirmApply.text(), /Apply claude#2 to your working tree\?.*Write \(1\):\s*hello-candidates\.txt/s);
    await shot('candidates-apply-confirmation');
    await confirmApply.press('Apply This Candidate');
    const applied = await workbench.notification('Codeloops: applied claude#2');
    assert.equal(fs.readFileSync(path.join(repo, 'hello-candidates.txt'), 'utf8'), 'Hello from a candidate\n');
    await comparison.locator('tr.candidate', { hasText: 'applied' }).waitFor({ timeout: 30_000 });
    await shot('candidates-applied');

    // Undone from the notification: the file goes again.
    await applied.press('Undo Apply');
    await (await workbench.dialog()).press('Undo Apply');
    await workbench.notification('apply undone');
    assert.ok(!fs.existsSync(path.join(repo, 'hello-candidates.txt')));
  });

  it('rolls an iteration back from the tree’s context menu after a modal that lists the file, and undoes it from the notification', async () => {
    await revealSecondIteration();
    await workbench.contextMenu(workbench.treeItem(/^Iteration 2/).first(), 'Roll Back to Before This Iteration');
    const confirmRollback = await workbench.dialog();
    assert.match(await confirmRollback.text(), /Roll back to before iteration 2\?.*Restore \(1\):\s*greeting\.txt/s);
    await shot('rollback-confirmation');
    await confirmRollback.press('Roll Back');
    const rolledBack = await workbench.notification('rolled back to before iteration 2');
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Helo, world\n', 'as it was before iteration 2');
    assert.equal(fs.readFileSync(path.join(repo, 'build-note.txt'), 'utf8'), 'noted by a shell\n', 'iteration 1’s work stays');
    await shot('rolled-back');
    await rolledBack.press('Undo Rollback');
    const confirmUndo = await workbench.dialog();
    assert.match(await confirmUndo.text(), /Undo the last rollback\?.*Restore \(1\):\s*greeting\.txt/s);
    await confirmUndo.press('Undo Rollback');
    await workbench.notification('rollback undone');
    assert.equal(fs.readFileSync(path.join(repo, 'greeting.txt'), 'utf8'), 'Hello, world\n');
    await shot('rollback-undone');
  });

  it('reviews like a pull request: the critic’s comment on the diff, a hunk rejected from the diff editor, a paused loop continued from the notification', async () => {
    await workbench.runCommand('Codeloops: Toggle Review Before Continuing');
    await workbench.notification('loops now wait for your review');
    await workbench.runCommand('Codeloops: Run Prompt');
    await workbench.answer('What should the agent do?', REVIEW_TASK);
    const waiting = await workbench.notification('is waiting for your review of iteration 1', 120_000);
    await workbench.statusBarItem('waiting for your review of iteration 1').waitFor();
    await shot('review-paused');

    // The critic's finding, where the code is: on the diff of the iteration.
    await workbench.openIteration(/^Tidy review\.txt/, /^Iteration 1/);
    await workbench
      .treeItem(/^review\.txt/)
      .first()
      .click();
    await workbench.editorTab('review.txt (iteration 1)').waitFor();
    await workbench.commentThread('Line two should say TWO, in capitals').waitFor({ timeout: 30_000 });
    await shot('review-finding-on-diff');

    // Reject the second hunk from the diff editor: right-click on its line, give a reason.
    const diff = await workbench.diffEditor();
    await workbench.contextMenu(diff.modifiedLine('eighteen'), 'Reject This Change');
    const reason = await workbench.quickInput('Reject hunk 2 of iteration 1');
    await reason.fill('line 18 is public: keep it');
    await shot('review-reject-reason');
    await reason.accept();
    await workbench.notification('Undid hunk 2 of iteration 1 in review.txt');
    assert.equal(fs.readFileSync(path.join(repo, 'review.txt'), 'utf8'), numbered({ 2: 'two' }), 'only that hunk was undone');

    // Continue from the notification; the next actor hears about both.
    await waiting.press('Continue');
    await workbench.notification('review.txt is tidy', 120_000);
    assert.equal(fs.readFileSync(path.join(repo, 'review.txt'), 'utf8'), numbered({ 2: 'TWO' }));
    const secondActor = api.requests.find(
      (request) => !isCriticRequest(request) && request.lastUserText.includes(REVIEW_TASK) && request.lastUserText.includes('Reviewer findings still open'),
    );
    assert.match(secondActor?.lastUserText ?? '', /R1\.1: the user rejected this change of iteration 1 in review\.txt because: line 18 is public: keep it/);
    assert.match(secondActor?.lastUserText ?? '', /F1\.1 in review\.txt:2 \(warning\): Line two should say TWO, in capitals/);

    // The viewer lists the review under its iteration.
    await workbench.showEditor(/Codeloops: Tidy review/);
    const viewer = workbench.webview();
    await viewer.locator('.review-item.finding', { hasText: 'F1.1' }).waitFor({ timeout: 30_000 });
    await viewer.locator('.review-item.rejection', { hasText: 'line 18 is public' }).waitFor();
    await viewer.locator('.review-item.finding', { hasText: 'F1.1' }).scrollIntoViewIfNeeded();
    await shot('review-in-viewer');
    await workbench.runCommand('Codeloops: Toggle Review Before Continuing');
  });
  it('“needs you”: the critic’s question is answered from the notification, and the loop carries on with the answer', async () => {
    await workbench.runCommand('Codeloops: Run Prompt');
    await workbench.answer('What should the agent do?', NEEDS_TASK);
    const asked = await workbench.notification(`needs you (asked by the critic): ${NEEDS_QUESTION}`, 120_000);
    // The status bar says so too, for when the notification is gone.
    await workbench.statusBarItem('Codeloops: needs your answer').waitFor();
    await shot('needs-you-question');
    await asked.press('Answer…');
    await workbench.clickIntoQuickInput(NEEDS_QUESTION);
    await workbench.answer(NEEDS_QUESTION, 'French, please');
    // This loop's own end (its summary): the review's "Codeloops finished" may still be on screen.
    await workbench.notification('welcome.txt greets in French', 120_000);
    assert.equal(fs.readFileSync(path.join(repo, 'welcome.txt'), 'utf8'), 'Bienvenue\n');
    const told = api.requests.find((request) => !isCriticRequest(request) && request.lastUserText.includes('Their answer, in their words'));
    assert.match(
      told?.lastUserText ?? '',
      /The reviewer asked the user: Which language should welcome\.txt greet in\?\nTheir answer, in their words:\n```\nFrench, please\n```/,
    );
    await shot('needs-you-answered');
  });
});

describe('the packaged extension in an untrusted workspace', function () {
  this.timeout(300_000);
  let server: CodeServer | undefined;
  let workbench: Workbench | undefined;

  after(async () => {
    await workbench?.close();
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
    workbench = await Workbench.open(server);
    // The folder was never trusted: VS Code opens it in Restricted Mode.
    await workbench.statusBarItem('Restricted Mode').waitFor({ timeout: 30_000 });

    await workbench.showCodeloopsView();
    await workbench.treeItem(/^An earlier session/).waitFor();

    await workbench.runCommand('Codeloops: Run Prompt');
    await workbench.notification('does not run loops in an untrusted workspace');
    await workbench.screenshot(path.join(SCREENSHOTS, 'flow-untrusted-workspace.png'));
    assert.deepEqual(fs.readdirSync(home.sessionsDir), ['2026-01-01T00-00-00Z_abcdef.jsonl'], 'no loop ran');
  });
});
