import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { deleteSessionRefs, listSessionRefs } from '../../src/git/snapshots.js';
import { rollBack, undoRollback } from '../../src/rollback/rollback.js';
import { rollbackOutcomeSchema, type RollbackOutcome } from '../../src/sessionFormat/rollbackOutcome.js';
import { readSidecarEvents } from '../../src/sessions/sidecarReader.js';
import { carryOn, done } from '../support/scriptedAgent.js';
import { runScriptedLoop, type ScriptedLoopResult } from '../support/scriptedLoop.js';
import { createRepo, git, removeTempDirs, treeOf, writeFile } from '../support/testEnvironment.js';
import { stopRunners } from '../support/processes.js';

const BINARY_BEFORE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10, 0x00]);
const binaryOf = (bytes: Buffer) => `binary:${bytes.toString('base64')}`;

/** What git says about the user's own state: none of it may move. */
function userGitState(repo: string) {
  return {
    head: git(repo, 'rev-parse', 'HEAD').trim(),
    branch: git(repo, 'symbolic-ref', 'HEAD').trim(),
    staged: git(repo, 'diff', '--cached', '--name-status'),
    stash: git(repo, 'stash', 'list'),
  };
}

/**
 * A repository with everything a rollback must respect: tracked, untracked and ignored
 * files, a binary file, a nested repository with its own uncommitted work, a staged
 * change and a stash. Then a three-iteration loop that edits, deletes, renames,
 * commits, creates folders and writes an ignored file.
 */
async function sessionWithThreeIterations(): Promise<{ repo: string; loop: ScriptedLoopResult; trees: Record<string, string>[] }> {
  const repo = createRepo({
    files: { 'src/app.js': 'v0\n', 'keep.txt': 'keep\n', 'old-name.txt': 'rename me\n', 'staged.txt': 'base\n', 'logo.bin': BINARY_BEFORE },
    gitignore: '*.log\n',
  });
  writeFile(repo, 'stashed.txt', 'stash me\n');
  git(repo, 'stash', 'push', '-q', '--include-untracked', '-m', 'user stash');
  writeFile(repo, 'staged.txt', 'staged by the user\n');
  git(repo, 'add', 'staged.txt');
  writeFile(repo, 'notes.txt', 'my untracked notes\n');
  writeFile(repo, 'debug.log', 'ignored, mine\n');
  const nested = path.join(repo, 'vendor', 'lib');
  fs.mkdirSync(nested, { recursive: true });
  git(nested, 'init', '-q', '-b', 'main');
  writeFile(nested, 'lib.js', 'lib v1\n');
  git(nested, 'add', '-A');
  git(nested, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'lib');
  writeFile(nested, 'lib.js', 'lib, uncommitted work\n');

  const trees: Record<string, string>[] = [treeOf(repo)];
  const loop = await runScriptedLoop(
    repo,
    {
      actor: [
        [
          { write: { path: 'src/app.js', content: 'v1\n' } },
          { delete: 'keep.txt' },
          { shell: ['mv', 'old-name.txt', 'new-name.txt'] },
          { shell: [process.execPath, '-e', "require('fs').writeFileSync('logo.bin', Buffer.from([1,2,3,0,255]))"] },
        ],
        [
          { write: { path: 'src/app.js', content: 'v2\n' } },
          { write: { path: 'src/util.js', content: 'util\n' } },
          { commit: 'agent commit' },
          { write: { path: 'build.log', content: 'ignored, the loop\n' } },
        ],
        [
          { write: { path: 'src/app.js', content: 'v3\n' } },
          { write: { path: 'gen/deep/out.txt', content: 'generated\n' } },
          { write: { path: 'vendor/lib/lib.js', content: 'the agent was here\n' } },
        ],
      ],
      critic: [[carryOn('more')], [carryOn('more')], [done()]],
    },
    {
      onEvent: (event) => {
        if (event.type === 'iteration_finished') trees.push(treeOf(repo));
      },
    },
  );
  assert.equal(loop.summary.status, 'success');
  return { repo, loop, trees };
}

function request(repo: string, loop: ScriptedLoopResult, force = false) {
  return { sessionId: loop.summary.session_id, workingDir: repo, sidecarDir: loop.sidecarDir, force };
}

describe('rollback and its undo', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  after(removeTempDirs);

  describe('rolling back to before iteration 2, then undoing it', () => {
    // One session, rolled back and undone once; each aspect is its own test, so one failure hides no other.
    let repo = '';
    let loop: ScriptedLoopResult;
    let trees: Record<string, string>[];
    let gitBefore: ReturnType<typeof userGitState>;
    let afterLoop: Record<string, string>;
    let preview: RollbackOutcome;
    let afterPreview: Record<string, string>;
    let outcome: RollbackOutcome;
    let afterRollback: Record<string, string>;
    let genFolderAfterRollback: boolean;
    let gitAfterRollback: ReturnType<typeof userGitState>;
    let undone: RollbackOutcome;
    let afterUndo: Record<string, string>;
    let gitAfterUndo: ReturnType<typeof userGitState>;
    let again: RollbackOutcome;
    before(async () => {
      ({ repo, loop, trees } = await sessionWithThreeIterations());
      gitBefore = userGitState(repo);
      afterLoop = treeOf(repo);
      preview = await rollBack({ ...request(repo, loop), iteration: 2, dryRun: true });
      afterPreview = treeOf(repo);
      outcome = rollbackOutcomeSchema.parse(await rollBack({ ...request(repo, loop), iteration: 2 }));
      afterRollback = treeOf(repo);
      genFolderAfterRollback = fs.existsSync(path.join(repo, 'gen'));
      gitAfterRollback = userGitState(repo);
      undone = await undoRollback(request(repo, loop));
      afterUndo = treeOf(repo);
      gitAfterUndo = userGitState(repo);
      again = await undoRollback(request(repo, loop));
    });

    it('a dry run writes nothing and says what the rollback then does', () => {
      assert.equal(preview.dry_run, true);
      assert.match(preview.message, /Would roll session .* back to before iteration 2: would restore src\/app\.js; would remove/);
      assert.deepEqual(afterPreview, afterLoop, 'a dry run writes nothing');
      assert.equal(outcome.dry_run, false);
      assert.deepEqual([outcome.restored, outcome.removed.sort()], [preview.restored, preview.removed.sort()], 'the dry run said what would happen');
    });

    it('puts back exactly the files the loop changed since iteration 2, and removes the folder it created', () => {
      assert.equal(outcome.result, 'rolled_back', outcome.message);
      assert.equal(outcome.iteration, 2);
      assert.equal(outcome.rollback, 1);
      // Before iteration 2 is the tree after iteration 1: v1, no util.js, no gen/.
      const expected = { ...afterLoop, 'src/app.js': 'v1\n' } as Record<string, string>;
      delete expected['src/util.js'];
      delete expected['gen/deep/out.txt'];
      assert.deepEqual(afterRollback, expected);
      assert.deepEqual(outcome.restored.sort(), ['src/app.js']);
      assert.deepEqual(outcome.removed.sort(), ['gen/deep/out.txt', 'src/util.js']);
      assert.ok(!genFolderAfterRollback, 'the folder the loop created went with its file');
      assert.equal(trees[1]!['src/app.js'], 'v1\n');
    });

    it('leaves the nested repository, ignored and untracked files, HEAD, branch, index and stash as they were', () => {
      assert.equal(afterLoop['vendor/lib/lib.js'], 'the agent was here\n');
      // Nested repository: recorded as a link, never touched.
      assert.equal(afterRollback['vendor/lib/lib.js'], 'the agent was here\n');
      // The loop's ignored build.log, the user's ignored and untracked files: not looked at.
      assert.equal(afterRollback['build.log'], 'ignored, the loop\n');
      assert.equal(afterRollback['debug.log'], 'ignored, mine\n');
      assert.equal(afterRollback['notes.txt'], 'my untracked notes\n');
      assert.deepEqual(gitAfterRollback, gitBefore, 'HEAD, branch, index and stash are untouched');
    });

    it('the undo puts the files forward again, once; a second undo says there is nothing to undo', () => {
      assert.equal(undone.result, 'undone', undone.message);
      assert.deepEqual(afterUndo, afterLoop);
      assert.deepEqual(gitAfterUndo, gitBefore);
      assert.equal(again.result, 'nothing_to_roll_back');
      assert.match(again.message, /already undone/);
    });

    it('records the rollback and its undo in the session’s events', async () => {
      const events = await readSidecarEvents(loop.sidecarDir);
      const recorded = events.filter((event) => event.type === 'rollback' || event.type === 'rollback_undone');
      assert.deepEqual(
        recorded.map((event) => event.type),
        ['rollback', 'rollback_undone'],
      );
    });
  });

  it('rolls back to before the first iteration: deleted, renamed and binary files come back byte for byte', async () => {
    const { repo, loop, trees } = await sessionWithThreeIterations();
    const outcome = await rollBack({ ...request(repo, loop), iteration: 1 });
    assert.equal(outcome.result, 'rolled_back', outcome.message);
    const now = treeOf(repo);
    assert.equal(now['keep.txt'], 'keep\n');
    assert.equal(now['old-name.txt'], 'rename me\n');
    assert.equal(now['new-name.txt'], undefined);
    assert.equal(now['logo.bin'], binaryOf(BINARY_BEFORE));
    assert.equal(now['src/app.js'], 'v0\n');
    // Everything the loop did not touch is as the user left it (the nested repo's work included).
    const expected = { ...trees[0]!, 'build.log': 'ignored, the loop\n', 'vendor/lib/lib.js': 'the agent was here\n' };
    assert.deepEqual(now, expected);
  });

  it('stops with a conflict and changes nothing when the user edited a file the rollback would overwrite; --force overwrites and undo brings it back', async () => {
    const { repo, loop } = await sessionWithThreeIterations();
    writeFile(repo, 'src/app.js', 'my own edit after the loop\n');
    writeFile(repo, 'README.txt', 'a file of mine the loop never saw\n');
    const edited = treeOf(repo);

    const conflict = await rollBack({ ...request(repo, loop), iteration: 3 });
    assert.equal(conflict.result, 'conflict');
    assert.deepEqual(conflict.conflicts, ['src/app.js']);
    assert.match(conflict.message, /src\/app\.js/);
    assert.match(conflict.message, /would overwrite it: src\/app\.js\. Commit or move those changes first, or overwrite them/);
    assert.doesNotMatch(conflict.message, /--/, 'the engine names no command-line flags: each surface words its own');
    assert.deepEqual(treeOf(repo), edited, 'a conflict changes nothing');

    // Forcing only what the user was shown: a file changed since is a new conflict, nothing is written.
    writeFile(repo, 'gen/deep/out.txt', 'edited while the dialog was open\n');
    const partly = await rollBack({ ...request(repo, loop), force: ['src/app.js'], iteration: 3 });
    assert.equal(partly.result, 'conflict');
    assert.deepEqual(partly.conflicts.sort(), ['gen/deep/out.txt', 'src/app.js']);
    assert.equal(treeOf(repo)['src/app.js'], 'my own edit after the loop\n');
    writeFile(repo, 'gen/deep/out.txt', 'generated\n');

    const forced = await rollBack({ ...request(repo, loop, true), iteration: 3 });
    assert.equal(forced.result, 'rolled_back', forced.message);
    assert.deepEqual(forced.overwritten, ['src/app.js']);
    assert.equal(treeOf(repo)['src/app.js'], 'v2\n');
    assert.equal(treeOf(repo)['README.txt'], 'a file of mine the loop never saw\n');

    const undone = await undoRollback(request(repo, loop));
    assert.equal(undone.result, 'undone', undone.message);
    assert.deepEqual(treeOf(repo), edited, 'the undo brings back the edit --force overwrote');
  });

  it('a file the user changed outside what the loop touched is no conflict and is kept', async () => {
    const { repo, loop } = await sessionWithThreeIterations();
    writeFile(repo, 'staged.txt', 'edited again after the loop\n');
    const outcome = await rollBack({ ...request(repo, loop), iteration: 3 });
    assert.equal(outcome.result, 'rolled_back', outcome.message);
    assert.equal(treeOf(repo)['staged.txt'], 'edited again after the loop\n');
    assert.equal(treeOf(repo)['src/app.js'], 'v2\n');
  });

  it('says nothing_to_roll_back when the files already are as they were, and rolls back further from an earlier rollback', async () => {
    const { repo, loop, trees } = await sessionWithThreeIterations();
    assert.equal((await rollBack({ ...request(repo, loop), iteration: 3 })).result, 'rolled_back');
    const second = await rollBack({ ...request(repo, loop), iteration: 3 });
    assert.equal(second.result, 'nothing_to_roll_back', second.message);
    // From the rolled-back tree further back: no false conflicts from the first rollback.
    const third = await rollBack({ ...request(repo, loop), iteration: 2 });
    assert.equal(third.result, 'rolled_back', third.message);
    assert.equal(third.rollback, 2);
    assert.equal(treeOf(repo)['src/app.js'], trees[1]!['src/app.js']);
    // Undo goes back one step: to the tree after the first rollback.
    assert.equal((await undoRollback(request(repo, loop))).result, 'undone');
    assert.equal(treeOf(repo)['src/app.js'], 'v2\n');
  });

  it('says snapshot_missing when the snapshots are gone, and rejects an iteration the session does not have', async () => {
    const { repo, loop } = await sessionWithThreeIterations();
    await assert.rejects(rollBack({ ...request(repo, loop), iteration: 9 }), /has no iteration 9/);
    const repository = await openRepository(repo);
    assert.ok((await listSessionRefs(repository, loop.summary.session_id)).size > 0);
    await deleteSessionRefs(repository, loop.summary.session_id);
    const before = treeOf(repo);
    const outcome = await rollBack(request(repo, loop));
    assert.equal(outcome.result, 'snapshot_missing');
    assert.match(outcome.message, /No snapshots/);
    assert.deepEqual(treeOf(repo), before);
    assert.equal((await undoRollback(request(repo, loop))).result, 'nothing_to_roll_back');
  });

  it('never removes what no snapshot holds: a folder with ignored files where a file comes back, or a file git now ignores', async () => {
    const repo = createRepo({ files: { config: 'plain config\n', 'src/a.js': 'a\n' }, gitignore: '*.secret\n' });
    writeFile(repo, '.env', 'TOKEN=one\n'); // untracked, not ignored: in the snapshots
    const loop = await runScriptedLoop(repo, {
      actor: [
        [{ delete: 'config' }, { write: { path: 'config/settings.json', content: '{}\n' } }, { write: { path: '.gitignore', content: '*.secret\n.env\n' } }],
      ],
      critic: [[done()]],
    });
    // Without anything of the user's in the way, the folder goes and the file comes back.
    const clean = await rollBack({ ...request(repo, loop), dryRun: true });
    assert.equal(clean.result, 'rolled_back', clean.message);
    assert.deepEqual(clean.blocked, []);

    writeFile(repo, 'config/prod.secret', 'ignored, mine\n');
    writeFile(repo, '.env', 'TOKEN=two\n'); // ignored now that the loop changed .gitignore
    const before = treeOf(repo);
    for (const force of [false, true]) {
      const outcome = await rollBack({ ...request(repo, loop, force) });
      assert.equal(outcome.result, 'conflict', outcome.message);
      assert.deepEqual(outcome.blocked.sort(), ['.env', 'config/']);
      assert.match(outcome.message, /in no snapshot .* they are never overwritten. Move them away first/);
      assert.deepEqual(treeOf(repo), before, `nothing changed (force: ${force})`);
    }
    fs.rmSync(path.join(repo, 'config', 'prod.secret'));
    fs.rmSync(path.join(repo, '.env'));
    const done_ = await rollBack(request(repo, loop));
    assert.equal(done_.result, 'rolled_back', done_.message);
    assert.deepEqual(treeOf(repo), { config: 'plain config\n', 'src/a.js': 'a\n', '.gitignore': '*.secret\n', '.env': 'TOKEN=one\n' });
  });

  it('a file the user put where a folder comes back is a conflict; --force replaces it and the undo brings it back', async () => {
    const repo = createRepo({ files: { 'docs/a.md': 'doc\n', 'keep.txt': 'k\n' } });
    const loop = await runScriptedLoop(repo, { actor: [[{ delete: 'docs' }]], critic: [[done()]] });
    writeFile(repo, 'docs', 'a file of mine named docs\n');
    const conflict = await rollBack(request(repo, loop));
    assert.equal(conflict.result, 'conflict', conflict.message);
    assert.deepEqual(conflict.conflicts, ['docs']);
    assert.equal(treeOf(repo).docs, 'a file of mine named docs\n');
    const forced = await rollBack(request(repo, loop, true));
    assert.equal(forced.result, 'rolled_back', forced.message);
    assert.deepEqual(forced.overwritten, ['docs']);
    assert.equal(treeOf(repo)['docs/a.md'], 'doc\n');
    assert.equal((await undoRollback(request(repo, loop))).result, 'undone');
    assert.equal(treeOf(repo).docs, 'a file of mine named docs\n');
  });

  it('works on a repository with no commit (unborn HEAD) and does not create one', async () => {
    const repo = createRepo();
    writeFile(repo, 'mine.txt', 'mine\n');
    const loop = await runScriptedLoop(repo, {
      actor: [[{ write: { path: 'made.txt', content: 'made\n' } }, { write: { path: 'mine.txt', content: 'changed\n' } }]],
      critic: [[done()]],
    });
    const outcome = await rollBack(request(repo, loop));
    assert.equal(outcome.result, 'rolled_back', outcome.message);
    assert.deepEqual(treeOf(repo), { 'mine.txt': 'mine\n' });
    assert.throws(() => git(repo, 'rev-parse', '--verify', '--quiet', 'HEAD'));
  });

  it('gives back the exact bytes in a repository where git converts line endings (core.autocrlf=true, LF files on disk), both ways', async () => {
    const repo = createRepo();
    git(repo, 'config', 'core.autocrlf', 'true');
    const original = { 'lf.txt': 'one\ntwo\n', 'crlf.txt': 'one\r\ntwo\r\n', 'gone.txt': 'bye\n' };
    for (const [file, content] of Object.entries(original)) writeFile(repo, file, content);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'as the user has them');
    for (const [file, content] of Object.entries(original)) writeFile(repo, file, content);
    const before = treeOf(repo);
    const loop = await runScriptedLoop(repo, {
      actor: [[{ write: { path: 'lf.txt', content: 'one\ntwo\nthree\n' } }, { write: { path: 'crlf.txt', content: 'one\r\n' } }, { delete: 'gone.txt' }]],
      critic: [[done()]],
    });
    const afterLoop = treeOf(repo);
    const gitBefore = userGitState(repo);
    const outcome = await rollBack(request(repo, loop));
    assert.equal(outcome.result, 'rolled_back', outcome.message);
    assert.deepEqual(treeOf(repo), before, 'LF stays LF, CRLF stays CRLF');
    assert.equal(git(repo, 'status', '--porcelain'), '', 'git sees the files as committed');
    assert.equal((await undoRollback(request(repo, loop))).result, 'undone');
    assert.deepEqual(treeOf(repo), afterLoop, 'the undo gives back what the actor wrote, byte for byte');
    assert.deepEqual(userGitState(repo), gitBefore);
  });

  it('sees and rolls back what the actor writes outside a sparse checkout, and leaves no shared index file behind (split index)', async () => {
    const repo = createRepo({ files: { 'app/main.js': 'v0\n', 'docs/guide.md': 'guide\n' } });
    git(repo, 'sparse-checkout', 'set', '--cone', 'app');
    git(repo, 'config', 'core.splitIndex', 'true');
    git(repo, 'update-index', '--split-index');
    const gitFolder = () => fs.readdirSync(path.join(repo, '.git')).filter((name) => /^sharedindex\.|^codeloops-/.test(name));
    const before = { files: treeOf(repo), git: gitFolder() };
    const loop = await runScriptedLoop(repo, {
      actor: [[{ write: { path: 'app/main.js', content: 'v1\n' } }, { write: { path: 'docs/notes.md', content: 'outside the cone\n' } }]],
      critic: [[done()]],
    });
    const diff = loop.events.find((event) => event.type === 'diff_captured');
    assert.deepEqual(diff?.type === 'diff_captured' && diff.files.map((file) => file.path).sort(), ['app/main.js', 'docs/notes.md']);
    const outcome = await rollBack(request(repo, loop));
    assert.equal(outcome.result, 'rolled_back', outcome.message);
    assert.deepEqual(outcome.removed, ['docs/notes.md']);
    assert.equal((await undoRollback(request(repo, loop))).result, 'undone');
    assert.equal((await rollBack(request(repo, loop))).result, 'rolled_back');
    assert.deepEqual({ files: treeOf(repo), git: gitFolder() }, before);
  });
});
