import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { queueSetup } from '../support/queueAgents.js';
import { git, writeFile } from '../support/testEnvironment.js';
import { EDITOR_OUTPUT, packagedWorkbenches } from '../support/workbench.js';

/**
 * The Queue view of the packaged extension (code-server's VS Code in Chromium), used as
 * a user would: a Markdown checklist added from its editor, the queue run with scripted
 * agents (queueAgents.ts), a task's branch diff opened and its branch merged from the
 * task's menu. Leaves the README's screenshot of the view with tasks in several states
 * (test-output/vscode/queue-view.png; media/readme/ has it made a palette image by pngquant).
 */

const CHECKLIST = `# Tonight
- [ ] TASK-alpha: write alpha
- [ ] TASK-broken: #fail at it
- [ ] TASK-colour: #ask which colour
`;

describe('the packaged extension: the Queue view (code-server + Chromium)', function () {
  this.timeout(300_000);
  const workbenches = packagedWorkbenches();

  it('adds tasks from a checklist, runs them, opens a task’s diff and merges its branch', async () => {
    const { repo, env } = queueSetup();
    writeFile(repo, 'tasks.md', CHECKLIST);
    git(repo, 'add', 'tasks.md');
    git(repo, 'commit', '-q', '-m', 'tasks');
    const workbench = await workbenches.open(repo, { ...process.env, ...env }, 'queue-browser-console.log');
    const { page } = workbench;
    // The Queue view's rows read "<id>. <task>, <state>" (the Sessions view has the same tasks as sessions).
    const task = (text: RegExp) => workbench.treeItem(new RegExp(`^\\d+\\. .*${text.source}`)).first();

    // The checklist open in its editor: the Queue view's button adds each unchecked item.
    // Quick Open: the palette without its ">" finds files.
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget input').fill('tasks.md');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'tasks.md' }).first().click();
    await workbench.editorTab('tasks.md').waitFor();
    await workbench.pressViewAction('Add a Checklist to the Queue');
    await task(/TASK-colour/).waitFor();
    const labels = await workbench.treeItemLabels(/TASK-/);
    assert.deepEqual(
      labels.map((label) => /\d\. TASK-[a-z]+/.exec(label)?.[0]),
      ['1. TASK-alpha', '2. TASK-broken', '3. TASK-colour'],
      labels.join(' | '),
    );

    await workbench.pressViewAction('Run the Queue');
    await workbench.notification('is done: Queue done: 2 finished, 1 waiting for an answer', 120_000);
    await task(/TASK-alpha.*success/).waitFor();
    await task(/TASK-colour.*needs your answer/).waitFor();
    // One more, left queued: the view shows every state at once.
    await workbench.pressViewAction('Add a Task to the Queue');
    await workbench.answer('The task to add to the queue', 'TASK-delta: write delta');
    await task(/TASK-delta.*queued/).waitFor();
    // Wide enough for each task's outcome beside its name.
    await workbench.widenSideBar(520);
    await page.mouse.move(0, 0);
    const screenshot = path.join(EDITOR_OUTPUT, 'queue-view.png');
    await page.locator('.part.sidebar .pane', { has: page.locator('.pane-header', { hasText: /^Queue/ }) }).screenshot({ path: screenshot });

    await workbench.contextMenu(task(/TASK-alpha/), "Open the Task's Branch Diff");
    await workbench.editorTab(/Codeloops: task 1, codeloops\/1-task-alpha-write-alpha \(1 files\)/).waitFor();
    await page.locator('.multiDiffEntry', { hasText: 'alpha.txt' }).first().waitFor();

    await workbench.contextMenu(task(/TASK-alpha/), "Merge the Task's Branch into the Current Branch");
    await workbench.notification('Merged codeloops/1-task-alpha-write-alpha into main (1 files).');
    assert.equal(git(repo, 'rev-parse', 'HEAD^2').trim(), git(repo, 'rev-parse', 'codeloops/1-task-alpha-write-alpha').trim());
    assert.equal(fs.readFileSync(path.join(repo, 'alpha.txt'), 'utf8'), 'alpha\n');
    assert.equal(git(repo, 'status', '--porcelain').trim(), '', 'merged, committed, nothing else changed');
  });
});
