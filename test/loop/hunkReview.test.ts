import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { sessionHeadRef, snapshotRef, takeSnapshot } from '../../src/git/snapshots.js';
import { iterationHunks, rejectHunk, stageChanges, undoRejection } from '../../src/review/hunkReview.js';
import { readReview } from '../../src/sessions/reviewState.js';
import { iterationOf, numberedLines as lines } from '../support/reviewedIterations.js';
import { createRepo, git, removeTempDirs, tempDir, treeOf, writeFile } from '../support/testEnvironment.js';

/** What the user's git sees: HEAD, the index and the status, which a review action must leave as they were (unless it stages). */
function gitState(repo: string): { head: string; index: string; status: string } {
  return { head: git(repo, 'rev-parse', 'HEAD'), index: git(repo, 'ls-files', '-s'), status: git(repo, 'status', '--porcelain=v1', '--untracked-files=all') };
}

/**
 * The user's review actions on an iteration's hunks (src/review/hunkReview.ts): rejecting
 * one, undoing the rejection, staging an iteration, each only at the hunk's own lines
 * and never touching what is the user's.
 */
describe('hunk review: rejecting, undoing and staging an iteration’s hunks', () => {
  after(removeTempDirs);

  it('rejects one of two hunks of a file and only that one, leaving index, HEAD and untracked files alone; the undo brings it back', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(30), 'other.txt': 'other\n' } });
    writeFile(repo, 'mine.txt', 'an untracked file of the user\n');
    const target = await iterationOf(repo, () => fs.writeFileSync(path.join(repo, 'app.txt'), lines(30, { 3: 'CHANGED 3', 25: 'CHANGED 25' })));
    const files = (await iterationHunks(target, 1))!;
    assert.deepEqual(
      files.flatMap((file) => file.hunks.map((hunk) => [hunk.number, hunk.path, hunk.newStart])),
      [
        [1, 'app.txt', 1],
        [2, 'app.txt', 22],
      ],
    );
    const before = gitState(repo);
    const outcome = await rejectHunk({ ...target, iteration: 1, hunk: 2, reason: 'keep line 25 as it was' });
    assert.equal(outcome.result, 'rejected', outcome.message);
    assert.equal(outcome.id, 'R1.1');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(30, { 3: 'CHANGED 3' }), 'hunk 1 stays, hunk 2 is undone');
    assert.equal(fs.readFileSync(path.join(repo, 'mine.txt'), 'utf8'), 'an untracked file of the user\n');
    const after = gitState(repo);
    assert.equal(after.head, before.head);
    assert.equal(after.index, before.index);

    const review = await readReview([target.sidecarDir]);
    assert.equal(review.rejections[0]?.reason, 'keep line 25 as it was');
    assert.match(review.rejections[0]!.patch, /^@@ .*\n(.*\n)*-line 25\n\+CHANGED 25/m);

    const undone = await undoRejection({ ...target });
    assert.equal(undone.result, 'rejection_undone', undone.message);
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(30, { 3: 'CHANGED 3', 25: 'CHANGED 25' }));
    assert.equal((await undoRejection({ ...target })).result, 'nothing_to_do');
    assert.equal((await readReview([target.sidecarDir])).rejections[0]?.undone, true);
  });

  it('rejects adjacent hunks one at a time, each on its own, in either order', async () => {
    // Seven unchanged lines apart: with three lines of context each, two hunks side by side that do not merge.
    const repo = createRepo({ files: { 'app.txt': lines(20) } });
    const target = await iterationOf(repo, () => fs.writeFileSync(path.join(repo, 'app.txt'), lines(20, { 4: 'four', 12: 'twelve' })));
    const hunks = (await iterationHunks(target, 1))!.flatMap((file) => file.hunks);
    assert.deepEqual(
      hunks.map((hunk) => [hunk.oldStart, hunk.oldLines]),
      [
        [1, 7],
        [9, 7],
      ],
    );
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 2, reason: null })).result, 'rejected');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 4: 'four' }));
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 1, reason: null })).result, 'rejected');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20));
    // Undone in the other order: the last rejection first, then the one before.
    assert.equal((await undoRejection({ ...target })).result, 'rejection_undone');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 4: 'four' }));
    assert.equal((await undoRejection({ ...target, id: 'R1.1' })).result, 'rejection_undone');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 4: 'four', 12: 'twelve' }));
  });

  it('changes nothing when the user has since edited the hunk’s lines, and names the file', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(10) } });
    const target = await iterationOf(repo, () => fs.writeFileSync(path.join(repo, 'app.txt'), lines(10, { 5: 'by the actor' })));
    const edited = lines(10, { 5: 'by the actor, then by the user' });
    fs.writeFileSync(path.join(repo, 'app.txt'), edited);
    const outcome = await rejectHunk({ ...target, iteration: 1, hunk: 1, reason: null });
    assert.equal(outcome.result, 'conflict');
    assert.deepEqual(outcome.conflicts, ['app.txt']);
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), edited, 'nothing changed');
    assert.deepEqual((await readReview([target.sidecarDir])).rejections, [], 'nothing recorded');
  });

  it('rejects a binary file’s change, a rename (its two halves), and a CRLF file’s change byte for byte', async () => {
    const binaryBefore = Buffer.from([0, 1, 2, 3, 255, 254, 0, 10]);
    const crlf = lines(12, {}, '\r\n');
    const repo = createRepo({ files: { 'image.bin': binaryBefore, 'old-name.txt': 'moved file\n', 'windows.txt': crlf } });
    const target = await iterationOf(repo, () => {
      fs.writeFileSync(path.join(repo, 'image.bin'), Buffer.from([9, 9, 0, 0, 255]));
      fs.renameSync(path.join(repo, 'old-name.txt'), path.join(repo, 'new-name.txt'));
      fs.writeFileSync(path.join(repo, 'windows.txt'), lines(12, { 6: 'changed with CRLF kept' }, '\r\n'));
    });
    const hunks = (await iterationHunks(target, 1))!.flatMap((file) => file.hunks.map((hunk) => ({ number: hunk.number, path: hunk.path })));
    assert.deepEqual(hunks, [
      { number: 1, path: 'image.bin' },
      { number: 2, path: 'new-name.txt' },
      { number: 3, path: 'old-name.txt' },
      { number: 4, path: 'windows.txt' },
    ]);
    for (const hunk of [1, 2, 3, 4]) {
      const outcome = await rejectHunk({ ...target, iteration: 1, hunk, reason: null });
      assert.equal(outcome.result, 'rejected', `hunk ${hunk}: ${outcome.message}`);
    }
    assert.deepEqual(treeOf(repo), {
      'image.bin': `binary:${binaryBefore.toString('base64')}`,
      'old-name.txt': 'moved file\n',
      'windows.txt': crlf,
    });
    assert.equal(git(repo, 'status', '--porcelain'), '', 'the files are exactly as committed');
  });

  it('numbers the hunks of a file that became a symbolic link as two changes, and the files after it keep their own hunks', async () => {
    const repo = createRepo({ files: { 'a-link.txt': 'a file\n', 'b.txt': lines(5) } });
    const target = await iterationOf(repo, () => {
      fs.rmSync(path.join(repo, 'a-link.txt'));
      fs.symlinkSync('b.txt', path.join(repo, 'a-link.txt'));
      fs.writeFileSync(path.join(repo, 'b.txt'), lines(5, { 1: 'one' }));
    });
    const hunks = (await iterationHunks(target, 1))!.flatMap((file) => file.hunks.map((hunk) => [hunk.number, hunk.path]));
    assert.deepEqual(hunks, [
      [1, 'a-link.txt'],
      [2, 'a-link.txt'],
      [3, 'b.txt'],
    ]);
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 3, reason: null })).result, 'rejected');
    assert.equal(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8'), lines(5));
  });

  it('stages exactly an iteration’s changes, leaving the user’s own staged and unstaged edits as they were', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(10), 'notes.txt': 'notes\n', 'user.txt': 'user\n' } });
    const target = await iterationOf(repo, () => {
      fs.writeFileSync(path.join(repo, 'app.txt'), lines(10, { 2: 'by the actor' }));
      fs.writeFileSync(path.join(repo, 'added.txt'), 'new file by the actor\n');
    });
    // The user's own work: one edit staged, one not.
    fs.writeFileSync(path.join(repo, 'user.txt'), 'user, staged\n');
    git(repo, 'add', 'user.txt');
    fs.writeFileSync(path.join(repo, 'notes.txt'), 'notes, not staged\n');
    const tree = treeOf(repo);
    const outcome = await stageChanges({ ...target, iteration: 1 });
    assert.equal(outcome.result, 'staged', outcome.message);
    assert.deepEqual(outcome.files.sort(), ['added.txt', 'app.txt']);
    assert.deepEqual(treeOf(repo), tree, 'no file touched');
    assert.equal(git(repo, 'diff', '--cached', '--name-only').trim().split('\n').sort().join(' '), 'added.txt app.txt user.txt');
    assert.equal(git(repo, 'diff', '--name-only').trim(), 'notes.txt', 'the unstaged edit is still unstaged');
    assert.equal(git(repo, 'show', ':app.txt'), lines(10, { 2: 'by the actor' }));
  });

  it('stages an iteration without the hunks the user rejected, and with them once the rejection is undone', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(20) } });
    const target = await iterationOf(repo, () => fs.writeFileSync(path.join(repo, 'app.txt'), lines(20, { 4: 'four', 12: 'twelve' })));
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 2, reason: 'not line 12' })).result, 'rejected');
    const staged = await stageChanges({ ...target, iteration: 1 });
    assert.equal(staged.result, 'staged', staged.message);
    assert.equal(git(repo, 'show', ':app.txt'), lines(20, { 4: 'four' }), 'the rejected hunk stays out of the index');
    assert.equal(git(repo, 'diff', '--name-only').trim(), '', 'the index now matches the files');

    assert.equal((await undoRejection({ ...target })).result, 'rejection_undone');
    const whole = await stageChanges({ ...target, iteration: null });
    assert.equal(whole.result, 'staged', whole.message);
    assert.equal(git(repo, 'show', ':app.txt'), lines(20, { 4: 'four', 12: 'twelve' }));
  });

  it('undoes a rejection after the user edited elsewhere in the same file, keeping their edit', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(30) } });
    const target = await iterationOf(repo, () => fs.writeFileSync(path.join(repo, 'app.txt'), lines(30, { 4: 'four' })));
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 1, reason: null })).result, 'rejected');
    fs.writeFileSync(path.join(repo, 'app.txt'), lines(30, { 25: 'the user’s own line' }));
    const undone = await undoRejection({ ...target });
    assert.equal(undone.result, 'rejection_undone', undone.message);
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(30, { 4: 'four', 25: 'the user’s own line' }));
  });

  // Two identical blocks, seven lines each: the hunk of a change in the first one (three lines of context on each side) reads like the second.
  const block = (value: number) => ['function f() {', '  const a = 1;', '  const b = 2;', `  return ${value};`, '  // c', '  // d', '}'];
  const twoBlocks = (first: number, second: number) => ['// one', ...block(first), '', '// two', ...block(second), ''].join('\n');

  it('rejects a hunk only at its own lines: the user edited them and made a second block read like the hunk, so it is a conflict and that block stays', async () => {
    const repo = createRepo({ files: { 'app.js': twoBlocks(1, 1) } });
    const target = await iterationOf(repo, () => writeFile(repo, 'app.js', twoBlocks(2, 1)));
    writeFile(repo, 'app.js', twoBlocks(3, 2));
    const state = gitState(repo);
    const outcome = await rejectHunk({ ...target, iteration: 1, hunk: 1, reason: null });
    assert.equal(outcome.result, 'conflict', outcome.message);
    assert.match(outcome.message, /app\.js: lines 2–8 as the hunk has them are not there as they were/);
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), twoBlocks(3, 2), 'the second block is the user’s still');
    assert.deepEqual(gitState(repo), state);
    assert.deepEqual((await readReview([target.sidecarDir])).rejections, [], 'nothing recorded');
  });

  it('puts a rejected hunk back only at its own lines: edited since, it is a conflict even though a second block reads as they did', async () => {
    const repo = createRepo({ files: { 'app.js': twoBlocks(1, 1) } });
    const target = await iterationOf(repo, () => writeFile(repo, 'app.js', twoBlocks(2, 1)));
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 1, reason: null })).result, 'rejected');
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), twoBlocks(1, 1));
    writeFile(repo, 'app.js', twoBlocks(5, 1));
    const outcome = await undoRejection({ ...target });
    assert.equal(outcome.result, 'conflict', outcome.message);
    assert.equal(fs.readFileSync(path.join(repo, 'app.js'), 'utf8'), twoBlocks(5, 1), 'the second block is not changed instead');
    assert.equal((await readReview([target.sidecarDir])).rejections[0]?.undone, false);
  });

  it('stages a hunk only at its own lines: the user staged an edit of them, so it is a conflict even though a second block in the index reads as they did', async () => {
    const repo = createRepo({ files: { 'app.js': twoBlocks(1, 1) } });
    const target = await iterationOf(repo, () => writeFile(repo, 'app.js', twoBlocks(2, 1)));
    writeFile(repo, 'app.js', twoBlocks(4, 1));
    git(repo, 'add', 'app.js');
    const index = git(repo, 'ls-files', '-s');
    const outcome = await stageChanges({ ...target, iteration: 1 });
    assert.equal(outcome.result, 'conflict', outcome.message);
    assert.equal(git(repo, 'ls-files', '-s'), index, 'the index is as it was');
    assert.equal(git(repo, 'show', ':app.js'), twoBlocks(4, 1));
  });

  it('places hunks by their own lines in CRLF files and files without a final newline, moved by earlier hunks, by the user’s lines above them and by later rejections', async () => {
    const crlf = (change: Record<number, string> = {}, insert: Record<number, string[]> = {}) =>
      Array.from({ length: 30 }, (_, index) => [...(insert[index + 1] ?? []), change[index + 1] ?? `line ${index + 1}`])
        .flat()
        .map((line) => `${line}\r\n`)
        .join('');
    // No newline at the end: the last hunk's last line says so on both sides.
    const open = (change: Record<number, string> = {}, insert: string[] = []) =>
      ['first', ...insert, ...Array.from({ length: 11 }, (_, index) => change[index + 2] ?? `row ${index + 2}`)].join('\n');
    const repo = createRepo({ files: { 'win.txt': crlf(), 'open.txt': open() } });
    const target = await iterationOf(repo, () => {
      // Two lines added after line 3 (hunk 1) and line 20 changed (hunk 2): hunk 2 is two lines lower after the change than before it.
      writeFile(repo, 'win.txt', crlf({ 20: 'twenty' }, { 4: ['new a', 'new b'] }));
      writeFile(repo, 'open.txt', open({ 12: 'last row' }, ['inserted']));
    });
    const hunks = (await iterationHunks(target, 1))!.flatMap((file) => file.hunks.map((hunk) => [hunk.number, hunk.path, hunk.newStart]));
    assert.deepEqual(hunks, [
      [1, 'open.txt', 1],
      [2, 'open.txt', 10],
      [3, 'win.txt', 1],
      [4, 'win.txt', 19],
    ]);
    const read = (file: string) => fs.readFileSync(path.join(repo, file), 'utf8');

    // The user adds lines at the top of win.txt: both of its hunks move down by them.
    writeFile(repo, 'win.txt', `mine 1\r\nmine 2\r\n${crlf({ 20: 'twenty' }, { 4: ['new a', 'new b'] })}`);
    for (const hunk of [3, 4, 2, 1]) {
      const outcome = await rejectHunk({ ...target, iteration: 1, hunk, reason: null });
      assert.equal(outcome.result, 'rejected', `hunk ${hunk}: ${outcome.message}`);
    }
    assert.equal(read('win.txt'), `mine 1\r\nmine 2\r\n${crlf()}`);
    assert.equal(read('open.txt'), open());

    // Put back in another order (R1.1 to R1.4 are hunks 3, 4, 2 and 1): each where it belongs, whatever is rejected around it.
    for (const id of ['R1.4', 'R1.2', 'R1.1']) {
      const outcome = await undoRejection({ ...target, id });
      assert.equal(outcome.result, 'rejection_undone', `${id}: ${outcome.message}`);
    }
    assert.equal(read('win.txt'), `mine 1\r\nmine 2\r\n${crlf({ 20: 'twenty' }, { 4: ['new a', 'new b'] })}`);
    assert.equal(read('open.txt'), open({}, ['inserted']), 'hunk 2 (the last line) is still rejected');

    // Staged without the hunk still rejected; the user's own lines stay out of the index.
    const staged = await stageChanges({ ...target, iteration: 1 });
    assert.equal(staged.result, 'staged', staged.message);
    assert.equal(git(repo, 'show', ':win.txt'), crlf({ 20: 'twenty' }, { 4: ['new a', 'new b'] }));
    assert.equal(git(repo, 'show', ':open.txt'), open({}, ['inserted']));
    assert.equal((await undoRejection({ ...target, id: 'R1.3' })).result, 'rejection_undone');
    assert.equal(read('open.txt'), open({ 12: 'last row' }, ['inserted']));
    assert.equal((await stageChanges({ ...target, iteration: 1 })).result, 'staged', 'the rest of the iteration');
    assert.equal(git(repo, 'show', ':open.txt'), open({ 12: 'last row' }, ['inserted']));
  });

  it('places a hunk in a file git keeps with LF and the disk with CRLF (core.autocrlf), and writes it back with CRLF', async () => {
    const repo = createRepo();
    git(repo, 'config', 'core.autocrlf', 'true');
    writeFile(repo, 'app.txt', lines(20, {}, '\r\n'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'initial');
    const target = await iterationOf(repo, () => writeFile(repo, 'app.txt', lines(20, { 3: 'three', 15: 'fifteen' }, '\r\n')));
    assert.match((await iterationHunks(target, 1))![0]!.hunks[0]!.text, /^-line 3\n\+three\n/m, 'the hunks are made of what git keeps: LF');
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 2, reason: null })).result, 'rejected');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 3: 'three' }, '\r\n'));
    assert.equal((await undoRejection({ ...target })).result, 'rejection_undone');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 3: 'three', 15: 'fifteen' }, '\r\n'));
    assert.equal((await stageChanges({ ...target, iteration: 1 })).result, 'staged');
    assert.equal(git(repo, 'show', ':app.txt'), lines(20, { 3: 'three', 15: 'fifteen' }));
  });

  it('gives a file the line endings it had when it is rejected and put back where git converts them (core.autocrlf with LF on disk)', async () => {
    const repo = createRepo();
    git(repo, 'config', 'core.autocrlf', 'true');
    // Written LF and committed: git would check it out as CRLF, but on disk it is LF, and stays so.
    writeFile(repo, 'app.txt', lines(20));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'initial');
    const target = await iterationOf(repo, () => writeFile(repo, 'app.txt', lines(20, { 3: 'three', 15: 'fifteen' })));
    assert.equal((await rejectHunk({ ...target, iteration: 1, hunk: 2, reason: null })).result, 'rejected');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 3: 'three' }), 'LF, as it was: not CRLF');
    assert.equal((await undoRejection({ ...target })).result, 'rejection_undone');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(20, { 3: 'three', 15: 'fifteen' }));
  });

  it('stages only the iteration’s change of a file the user also edited without staging: their edit stays in the file and out of the index', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(30) } });
    const target = await iterationOf(repo, () => writeFile(repo, 'app.txt', lines(30, { 3: 'by the actor' })));
    writeFile(repo, 'app.txt', lines(30, { 3: 'by the actor', 25: 'by the user, not staged' }));
    const outcome = await stageChanges({ ...target, iteration: 1 });
    assert.equal(outcome.result, 'staged', outcome.message);
    assert.equal(git(repo, 'show', ':app.txt'), lines(30, { 3: 'by the actor' }), 'only the iteration’s change is staged');
    assert.equal(fs.readFileSync(path.join(repo, 'app.txt'), 'utf8'), lines(30, { 3: 'by the actor', 25: 'by the user, not staged' }));
    assert.match(git(repo, 'diff'), /^-line 25\n\+by the user, not staged$/m, 'the user’s edit is still unstaged');
  });

  it('refuses to reject a nested repository’s commit (git apply passes over it) and records nothing', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(3) } });
    const nested = path.join(repo, 'vendor', 'lib');
    fs.mkdirSync(nested, { recursive: true });
    git(nested, 'init', '-q', '-b', 'main');
    writeFile(nested, 'lib.txt', 'v1\n');
    git(nested, 'add', '-A');
    git(nested, 'commit', '-q', '-m', 'v1');
    const target = await iterationOf(repo, () => {
      writeFile(nested, 'lib.txt', 'v2\n');
      git(nested, 'commit', '-q', '-am', 'v2');
    });
    const hunks = (await iterationHunks(target, 1))!.flatMap((file) => file.hunks);
    assert.deepEqual(
      hunks.map((hunk) => [hunk.path, hunk.text.replace(/[0-9a-f]{40}/g, '<commit>')]),
      [['vendor/lib', '@@ -1 +1 @@\n-Subproject commit <commit>\n+Subproject commit <commit>\n']],
    );
    const head = git(nested, 'rev-parse', 'HEAD');
    const outcome = await rejectHunk({ ...target, iteration: 1, hunk: 1, reason: 'not v2' });
    assert.equal(outcome.result, 'conflict', outcome.message);
    assert.deepEqual(outcome.conflicts, ['vendor/lib']);
    assert.match(outcome.message, /^Changed nothing: .*the nested repository vendor\/lib/);
    assert.equal(git(nested, 'rev-parse', 'HEAD'), head);
    assert.deepEqual((await readReview([target.sidecarDir])).rejections, [], 'nothing recorded, so the actor is never told');
  });

  it('says a file with a merge conflict must be resolved first when staging it', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(10) } });
    git(repo, 'checkout', '-q', '-b', 'other');
    writeFile(repo, 'app.txt', lines(10, { 2: 'theirs' }));
    git(repo, 'commit', '-q', '-am', 'theirs');
    git(repo, 'checkout', '-q', 'main');
    const target = await iterationOf(repo, () => writeFile(repo, 'app.txt', lines(10, { 2: 'by the actor' })));
    git(repo, 'commit', '-q', '-am', 'the actor’s');
    assert.throws(() => git(repo, 'merge', '-q', 'other'), 'the merge stops on the conflict');
    const index = git(repo, 'ls-files', '-s');
    const outcome = await stageChanges({ ...target, iteration: 1 });
    assert.equal(outcome.result, 'conflict', outcome.message);
    assert.deepEqual(outcome.conflicts, ['app.txt']);
    assert.match(outcome.message, /app\.txt has a merge conflict in your index\. Resolve the conflict/);
    assert.doesNotMatch(outcome.message, /stage the iterations before it/);
    assert.equal(git(repo, 'ls-files', '-s'), index);
  });

  it('stages nothing when the iteration does not apply to the index (an earlier iteration of the same lines not staged)', async () => {
    const repo = createRepo({ files: { 'app.txt': lines(10) } });
    const repository = await openRepository(repo);
    const sessionId = '2026-01-02T00-00-00Z_abcdef';
    await takeSnapshot(repository, 'pre 1', [snapshotRef(sessionId, 1, 'pre')]);
    fs.writeFileSync(path.join(repo, 'app.txt'), lines(10, { 4: 'first' }));
    await takeSnapshot(repository, 'post 1', [snapshotRef(sessionId, 1, 'post')]);
    await takeSnapshot(repository, 'pre 2', [snapshotRef(sessionId, 2, 'pre')]);
    fs.writeFileSync(path.join(repo, 'app.txt'), lines(10, { 4: 'second' }));
    await takeSnapshot(repository, 'post 2', [snapshotRef(sessionId, 2, 'post'), sessionHeadRef(sessionId)]);
    const target = { sessionId, workingDir: repo, sidecarDir: path.join(tempDir(), sessionId) };
    const index = git(repo, 'ls-files', '-s');
    const refused = await stageChanges({ ...target, iteration: 2 });
    assert.equal(refused.result, 'conflict', refused.message);
    assert.equal(git(repo, 'ls-files', '-s'), index, 'the index is as it was');
    const whole = await stageChanges({ ...target, iteration: null });
    assert.equal(whole.result, 'staged', whole.message);
    assert.equal(git(repo, 'show', ':app.txt'), lines(10, { 4: 'second' }));
  });
});
