import assert from 'node:assert/strict';
import fs from 'node:fs';
import { applyCandidateSession, undoApplySession } from '../../src/extension/candidates/applyCommands.js';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { candidateRunsFor, FakeEditor, folderAt } from '../support/fakeEditor.js';
import { done, scriptedCliSetup, type AgentScript } from '../support/scriptedAgent.js';
import { git, removeTempDirs, treeOf, writeFile } from '../support/testEnvironment.js';

/** Candidate groups as the extension runs them, in plain Node: the real runner, the editor stubbed. */
function candidatesFor(script: AgentScript) {
  const setup = scriptedCliSetup(script);
  const editor = new FakeEditor();
  const candidateRuns = candidateRunsFor(editor, setup.env);
  return { ...setup, editor, candidateRuns, folder: folderAt(setup.repo) };
}

describe('candidate runs and Apply This Candidate (plain Node, the real runner, a stubbed editor)', () => {
  after(removeTempDirs);

  it('runs two candidates: both count as running, their events reach the views, the end offers the comparison', async () => {
    const { candidateRuns, editor, folder } = candidatesFor({
      critic: [[{ print: '<decision>{"type":"ranking","ranking":["B","A"],"reasoning":"B"}</decision>' }]],
      candidates: {
        'command#1': { actor: [[{ write: { path: 'a.txt', content: 'one\n' } }, { sleep: 800 }]], critic: [[done('one')]] },
        'command#2': { actor: [[{ write: { path: 'a.txt', content: 'two\n' } }, { sleep: 800 }]], critic: [[done('two')]] },
      },
    });
    editor.answer(/^Codeloops candidates finished/, 'Compare Candidates');
    const views = editor.registry;
    const events: RunEvent[] = [];
    views.onEvent(({ event }) => events.push(event));
    let runningTogether = 0;
    views.onEvent(() => (runningTogether = Math.max(runningTogether, views.runningSessionIds().size)));
    const end = await candidateRuns.start(folder, { prompt: 'Write a', candidates: 'command', times: 2 });
    await editor.settled();
    assert.ok(end?.kind === 'finished', JSON.stringify(end));
    assert.equal(end.status, 'finished');
    assert.deepEqual(end.ranking, ['command#2', 'command#1']);
    assert.equal(runningTogether, 2, 'both sessions ran at once and the views saw both');
    assert.deepEqual(views.runningSessionIds(), new Set(), 'none after');
    assert.equal(events.filter((event) => event.type === 'run_finished').length, 2);
    assert.deepEqual(editor.texts('info'), [`Codeloops candidates finished in ${folder.name}: command#2 ranks first.`]);
    assert.deepEqual(editor.executed, [{ command: 'codeloops.compareCandidates', args: [end.groupId] }]);
    assert.deepEqual(editor.statusItems, [{ folder: folder.name, disposed: true }]);
    assert.equal(editor.context.get('codeloops.running'), false);
    assert.ok(
      editor.logLines.some((line) => line.startsWith('info: [command#1] ')),
      'the log labels each candidate',
    );
    assert.ok(
      editor.logLines.some((line) => /^info: Candidate group group-\S+: 2 candidates \(command#1, command#2\)/.test(line)) &&
        editor.logLines.some((line) => /^info: judge \(.+\): command#2 > command#1$/.test(line)),
      `the group's start and the judge's ranking in the CLI's words:\n${editor.logLines.join('\n')}`,
    );
  });

  it('interrupts every candidate at once', async () => {
    const { candidateRuns, editor, folder } = candidatesFor({ actor: [[{ sleep: 60_000 }]], critic: [[done()]] });
    const running = candidateRuns.start(folder, { prompt: 'Wait', candidates: 'command', times: 2 });
    await new Promise<void>((resolve) => editor.registry.onEvent(() => editor.registry.runningSessionIds().size === 2 && resolve()));
    assert.equal(candidateRuns.interrupt(folder), true);
    const end = await running;
    await editor.settled();
    assert.ok(end?.kind === 'finished' && end.status === 'interrupted', JSON.stringify(end));
    assert.match(editor.texts('warning')[0]!, /were interrupted/);
  });

  it('Apply This Candidate lists the files in a modal first, applies, and offers its undo', async () => {
    const { candidateRuns, editor, folder, repo, home } = candidatesFor({
      candidates: {
        'command#1': { actor: [[{ write: { path: 'hello.txt', content: 'hello\n' } }]], critic: [[done('one')]] },
        'command#2': { actor: [[{ write: { path: 'other.txt', content: 'other\n' } }]], critic: [[done('two')]] },
      },
    });
    writeFile(repo, 'mine.txt', 'untracked work of mine\n');
    const end = await candidateRuns.start(folder, { prompt: 'Greet', candidates: 'command', times: 2 });
    assert.ok(end?.kind === 'finished');
    const store = new SessionStore(home.sessionsDir);
    const sessionOf = async (label: string) =>
      (await store.list()).find(
        (summary) => summary.project === folder.name && fs.readFileSync(store.filePathOf(summary.id), 'utf8').includes(`"candidate":"${label}"`),
      )!.id;
    const winner = await sessionOf('command#1');
    const before = treeOf(repo);
    const changed: string[] = [];
    const deps = {
      store,
      registry: editor.registry,
      sidecarDirOf: (id: string) => sidecarDirOf(id),
      log: editor.log,
      window: editor.window,
      commands: editor.commands,
      changed: (id: string) => changed.push(id),
    };

    // Dismissed: nothing changes.
    assert.equal(await withEnv(home.env, () => applyCandidateSession(deps, winner)), undefined);
    assert.deepEqual(treeOf(repo), before);
    const [question] = editor.shown.filter((entry) => entry.kind === 'confirm');
    assert.equal(question?.text, 'Apply command#1 to your working tree?');
    assert.match(question!.detail!, /^Write \(1\):\n {2}hello\.txt\n\nOnly these files are touched/);

    editor.answer(/^Apply command#1/, 'Apply This Candidate');
    const applied = await withEnv(home.env, () => applyCandidateSession(deps, winner));
    assert.equal(applied?.result, 'applied');
    assert.deepEqual(treeOf(repo), { ...before, 'hello.txt': 'hello\n' });
    assert.deepEqual(changed, [winner]);
    assert.match(editor.texts('info').at(-1)!, /^Codeloops: applied command#1 \(1 file\)\. The group's worktrees were removed\./);
    assert.deepEqual(editor.shown.at(-1)?.actions, ['Undo Apply']);

    editor.answer(/^Undo the apply/, 'Undo Apply');
    assert.equal((await withEnv(home.env, () => undoApplySession(deps, winner)))?.result, 'apply_undone');
    assert.deepEqual(treeOf(repo), before);
    assert.equal(git(repo, 'status', '--porcelain'), '?? mine.txt\n');
  });
});

/** The apply reads the group records from the data home, as the extension does from its own environment. */
async function withEnv<T>(env: Record<string, string>, work: () => Promise<T>): Promise<T> {
  const previous = { ...process.env };
  Object.assign(process.env, env);
  try {
    return await work();
  } finally {
    for (const key of Object.keys(env)) {
      if (previous[key] === undefined) delete process.env[key];
      else process.env[key] = previous[key];
    }
  }
}
