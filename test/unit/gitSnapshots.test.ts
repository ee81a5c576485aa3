import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MissingDirectoryError, NotAGitRepositoryError, openRepository } from '../../src/git/repository.js';
import { restoreChangedPaths } from '../../src/git/restore.js';
import { listSessionRefs, readSnapshot, snapshotRef, takeSnapshot } from '../../src/git/snapshots.js';
import { diffSnapshots } from '../../src/git/treeDiff.js';
import { keepLineEndings } from '../../src/git/exactBytes.js';
import { GitCommandError, gitBytes } from '../../src/git/gitProcess.js';
import type { CodeloopsError } from '../../src/sessionFormat/failures.js';
import { createRepo, git, removeTempDirs, tempDir, treeOf, writeFile } from '../support/testEnvironment.js';

/** Everything about the user's git state that a snapshot must never change. */
function userGitState(dir: string) {
  const gitDir = path.join(dir, '.git');
  // Status first: it refreshes the index's stat cache, which must not count as a change.
  const status = git(dir, 'status', '--porcelain=v1', '--untracked-files=all');
  return {
    status,
    index: fs.existsSync(path.join(gitDir, 'index')) ? fs.readFileSync(path.join(gitDir, 'index')).toString('base64') : null,
    head: fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8'),
    refs: git(dir, 'for-each-ref', '--format=%(refname) %(objectname)')
      .split('\n')
      .filter((line) => !line.startsWith('refs/codeloops/'))
      .join('\n'),
  };
}

describe('git snapshots', () => {
  after(removeTempDirs);

  it('see a same-size rewrite made in the second the index was written, even when the snapshot comes a second later', async () => {
    // Racy git: the index entry's stat still matches the rewritten file to the second;
    // only the index's own time tells git to look at the content.
    for (let attempt = 0; ; attempt++) {
      const dir = createRepo({ files: { 'a.txt': 'v0\n' } });
      writeFile(dir, 'a.txt', 'v1\n');
      const indexSecond = Math.floor(fs.statSync(path.join(dir, '.git', 'index')).mtimeMs / 1000);
      if (Math.floor(fs.statSync(path.join(dir, 'a.txt')).mtimeMs / 1000) !== indexSecond) {
        assert.ok(attempt < 5, 'could not write within the index second');
        continue;
      }
      while (Math.floor(Date.now() / 1000) <= indexSecond) await new Promise((resolve) => setTimeout(resolve, 20));
      const repository = await openRepository(dir);
      const snapshot = await takeSnapshot(repository, 'racy');
      assert.equal(git(dir, 'show', `${snapshot.commit}:a.txt`), 'v1\n');
      return;
    }
  });

  it('capture untracked files and leave index, HEAD, branch, stash and status untouched', async () => {
    const dir = createRepo({ files: { 'a.txt': 'one\n', 'staged.txt': 'x\n' } });
    writeFile(dir, 'staged.txt', 'staged change\n');
    git(dir, 'add', 'staged.txt');
    writeFile(dir, 'stash-me.txt', 'stash\n');
    git(dir, 'stash', 'push', '-u', '-q', '--', 'stash-me.txt');
    writeFile(dir, 'a.txt', 'two\n');
    writeFile(dir, 'new/untracked.txt', 'fresh\n');
    const before = userGitState(dir);
    const repository = await openRepository(dir);
    const snapshot = await takeSnapshot(repository, 'test', snapshotRef('s1', 1, 'pre'));
    assert.deepEqual(userGitState(dir), before);
    assert.equal(git(dir, 'show', `${snapshot.commit}:new/untracked.txt`), 'fresh\n');
    assert.equal(git(dir, 'show', `${snapshot.commit}:a.txt`), 'two\n');
    assert.equal(git(dir, 'log', '-1', '--format=%an <%ae>', snapshot.commit).trim(), 'codeloops <codeloops@localhost>');
    assert.deepEqual(await readSnapshot(repository, snapshotRef('s1', 1, 'pre')), { commit: snapshot.commit, tree: snapshot.tree });
    assert.deepEqual([...(await listSessionRefs(repository, 's1')).keys()], ['refs/codeloops/s1/1/pre']);
    assert.equal(fs.readdirSync(path.join(dir, '.git')).filter((name) => name.startsWith('codeloops-')).length, 0, 'no temporary index left behind');
  });

  it('work on a repository with no commit and no index yet', async () => {
    const dir = createRepo({ files: { 'main.py': 'print(1)\n' }, commit: false });
    const repository = await openRepository(dir);
    const snapshot = await takeSnapshot(repository, 'first');
    assert.equal(git(dir, 'show', `${snapshot.commit}:main.py`), 'print(1)\n');
    assert.equal(git(dir, 'rev-list', '--count', snapshot.commit).trim(), '1');
    assert.ok(!fs.existsSync(path.join(dir, '.git', 'index')), 'the user still has no index');
  });

  it('leave ignored files out and diff what an agent committed, changed through a shell, deleted and renamed', async () => {
    const dir = createRepo({
      files: { 'keep.txt': 'keep\n', 'gone.txt': 'bye\n', 'old-name.txt': 'same content\nline 2\nline 3\n', 'ünï.txt': 'x\n' },
      gitignore: 'build/\n',
    });
    const repository = await openRepository(dir);
    const pre = await takeSnapshot(repository, 'pre');
    writeFile(dir, 'build/out.bin', 'ignored');
    writeFile(dir, 'committed.txt', 'agent committed this\n');
    git(dir, 'add', 'committed.txt');
    git(dir, 'commit', '-q', '-m', 'agent commit');
    fs.appendFileSync(path.join(dir, 'keep.txt'), 'appended by a shell\n');
    fs.rmSync(path.join(dir, 'gone.txt'));
    fs.renameSync(path.join(dir, 'old-name.txt'), path.join(dir, 'new-name.txt'));
    writeFile(dir, 'ünï.txt', 'changed ✓\n');
    writeFile(dir, 'image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    const post = await takeSnapshot(repository, 'post');
    const diff = await diffSnapshots(repository, pre.commit, post.commit);
    const byPath = Object.fromEntries(diff.files.map((file) => [file.path, file]));
    assert.deepEqual(Object.keys(byPath).sort(), ['committed.txt', 'gone.txt', 'image.png', 'keep.txt', 'new-name.txt', 'ünï.txt']);
    assert.equal(byPath['new-name.txt']!.status, 'renamed');
    assert.equal(byPath['new-name.txt']!.oldPath, 'old-name.txt');
    assert.equal(byPath['gone.txt']!.status, 'deleted');
    assert.equal(byPath['image.png']!.insertions, null, 'binary files have no line counts');
    assert.equal(diff.filesChanged, 6);
    assert.equal(diff.insertions, 3);
    assert.equal(diff.deletions, 2);
    assert.match(diff.diff, /\+agent committed this/);
    assert.match(diff.diff, /\+appended by a shell/);
    assert.match(diff.diff, /diff --git a\/ünï.txt b\/ünï.txt/);
    assert.doesNotMatch(diff.diff, /build\/out\.bin/);
  });

  it('report nothing between identical trees', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a' } });
    const repository = await openRepository(dir);
    const first = await takeSnapshot(repository, 'one');
    const second = await takeSnapshot(repository, 'two');
    assert.equal(first.tree, second.tree);
    const diff = await diffSnapshots(repository, first.commit, second.commit);
    assert.equal(diff.filesChanged, 0);
    assert.equal(diff.diff, '');
  });

  it('record a nested repository as a link without touching it', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a' } });
    const nested = path.join(dir, 'vendor', 'lib');
    fs.mkdirSync(nested, { recursive: true });
    git(nested, 'init', '-q');
    writeFile(nested, 'lib.c', 'int x;\n');
    git(nested, 'add', '-A');
    git(nested, 'commit', '-q', '-m', 'lib');
    const repository = await openRepository(dir);
    const snapshot = await takeSnapshot(repository, 'with nested');
    assert.match(git(dir, 'ls-tree', snapshot.commit, 'vendor/lib'), /^160000 commit/);
    assert.equal(git(nested, 'status', '--porcelain'), '');
  });

  it('leave out a nested repository that has no commit yet, and say so', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a' } });
    for (const name of ['scaffold', 'other']) {
      git(dir, 'init', '-q', name);
      writeFile(dir, `${name}/x.txt`, 'x');
    }
    writeFile(dir, 'b.txt', 'b');
    const snapshot = await takeSnapshot(await openRepository(dir), 'unborn nested');
    assert.deepEqual(snapshot.leftOut.sort(), ['other', 'scaffold']);
    assert.equal(git(dir, 'show', `${snapshot.commit}:b.txt`), 'b');
  });

  it('see edits to files the user marked assume-unchanged or skip-worktree', async () => {
    const dir = createRepo({ files: { 'assumed.txt': 'a\n', 'skipped.txt': 's\n', 'sparse-gone.txt': 'g\n' } });
    git(dir, 'update-index', '--assume-unchanged', 'assumed.txt');
    git(dir, 'update-index', '--skip-worktree', 'skipped.txt', 'sparse-gone.txt');
    fs.rmSync(path.join(dir, 'sparse-gone.txt')); // as a sparse checkout leaves it
    const repository = await openRepository(dir);
    const pre = await takeSnapshot(repository, 'pre');
    writeFile(dir, 'assumed.txt', 'edited by an agent\n');
    writeFile(dir, 'skipped.txt', 'edited too\n');
    const post = await takeSnapshot(repository, 'post');
    const diff = await diffSnapshots(repository, pre.commit, post.commit);
    assert.deepEqual(diff.files.map((file) => file.path).sort(), ['assumed.txt', 'skipped.txt']);
    assert.match(git(dir, 'ls-files', '-v'), /^h assumed\.txt$/m, "the user's own flags are untouched");
  });

  it('copy the index of the repository, also when started from a subfolder', async () => {
    const dir = createRepo({ files: { 'src/deep/a.ts': 'x' } });
    const repository = await openRepository(path.join(dir, 'src', 'deep'));
    assert.equal(repository.indexFile, path.join(dir, '.git', 'index'));
  });

  it('explain how to fix a folder that is not a repository or does not exist', async () => {
    const plain = tempDir();
    await assert.rejects(openRepository(plain), (error: Error) => error instanceof NotAGitRepositoryError && /git init/.test(error.message));
    await assert.rejects(openRepository(path.join(plain, 'missing')), MissingDirectoryError);
  });

  it('work whatever the user has in the environment: EDITOR, PAGER, GIT_DIR pointing elsewhere', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a' } });
    const elsewhere = createRepo({ files: { 'other.txt': 'other' } });
    const saved = { ...process.env };
    Object.assign(process.env, {
      EDITOR: 'vim',
      VISUAL: 'code --wait',
      PAGER: 'less',
      PREFIX: '/usr/local',
      GIT_PAGER: 'cat',
      GIT_DIR: path.join(elsewhere, '.git'),
      GIT_INDEX_FILE: '/nonexistent/index',
    });
    let snapshot;
    try {
      const repository = await openRepository(dir);
      assert.equal(repository.root, dir);
      snapshot = await takeSnapshot(repository, 'env');
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
    }
    assert.equal(git(dir, 'show', `${snapshot.commit}:a.txt`), 'a');
  });

  it('open from a subfolder at the top of the work tree', async () => {
    const dir = createRepo({ files: { 'src/a.ts': 'x' } });
    assert.equal((await openRepository(path.join(dir, 'src'))).root, dir);
  });
});

describe('surgical restore', () => {
  after(removeTempDirs);

  it('puts back exactly the paths that changed and touches nothing else', async () => {
    const dir = createRepo({
      files: { 'keep.txt': 'keep\n', 'edit.txt': 'original\n', 'remove.txt': 'was here\n', 'dir/nested.txt': 'n\n' },
      gitignore: '*.log\n',
    });
    writeFile(dir, 'untracked-before.txt', 'mine\n');
    const repository = await openRepository(dir);
    const target = await takeSnapshot(repository, 'target');
    const indexBefore = fs.readFileSync(path.join(dir, '.git', 'index'));
    // What an agent does:
    writeFile(dir, 'edit.txt', 'agent edit\n');
    fs.rmSync(path.join(dir, 'remove.txt'));
    writeFile(dir, 'created/deep/file.txt', 'agent file\n');
    fs.rmSync(path.join(dir, 'dir'), { recursive: true });
    writeFile(dir, 'dir', 'now a file\n');
    writeFile(dir, 'debug.log', 'ignored, created meanwhile\n');
    const current = await takeSnapshot(repository, 'current');

    const result = await restoreChangedPaths(repository, current.commit, target.commit);
    assert.deepEqual(result.removed.sort(), ['created/deep/file.txt', 'dir']);
    assert.deepEqual(result.restored.sort(), ['dir/nested.txt', 'edit.txt', 'remove.txt']);
    assert.deepEqual(treeOf(dir), {
      '.gitignore': '*.log\n',
      'keep.txt': 'keep\n',
      'edit.txt': 'original\n',
      'remove.txt': 'was here\n',
      'dir/nested.txt': 'n\n',
      'untracked-before.txt': 'mine\n',
      'debug.log': 'ignored, created meanwhile\n',
    });
    assert.ok(!fs.existsSync(path.join(dir, 'created')), 'folders the agent created are gone once empty');
    assert.ok(fs.readFileSync(path.join(dir, '.git', 'index')).equals(indexBefore), 'the index is untouched');
  });

  it('restores files whose names are not valid UTF-8, or hold newlines, byte for byte', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a' } });
    const strange = [Buffer.from('bad\xff.txt', 'latin1'), Buffer.from('line\nbreak.txt'), Buffer.from('ünï 🎉.txt')];
    const full = (name: Buffer) => Buffer.concat([Buffer.from(dir + '/'), name]);
    for (const name of strange) fs.writeFileSync(full(name), 'original');
    const repository = await openRepository(dir);
    const target = await takeSnapshot(repository, 'target');
    for (const name of strange) fs.writeFileSync(full(name), 'changed by the critic');
    const added = Buffer.from('new\xfe', 'latin1');
    fs.writeFileSync(full(added), 'new');
    const current = await takeSnapshot(repository, 'current');
    const result = await restoreChangedPaths(repository, current.commit, target.commit);
    assert.equal(result.restored.length, 3);
    for (const name of strange) assert.equal(fs.readFileSync(full(name), 'utf8'), 'original');
    assert.ok(!fs.existsSync(full(added)));
  });

  it('restores binary files and executable bits', async () => {
    const dir = createRepo({ files: { 'run.sh': '#!/bin/sh\necho hi\n', 'blob.bin': Buffer.from([0, 1, 2, 255]) } });
    fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
    const repository = await openRepository(dir);
    const target = await takeSnapshot(repository, 'target');
    writeFile(dir, 'blob.bin', Buffer.from([9, 9]));
    fs.chmodSync(path.join(dir, 'run.sh'), 0o644);
    const current = await takeSnapshot(repository, 'current');
    await restoreChangedPaths(repository, current.commit, target.commit);
    assert.deepEqual([...fs.readFileSync(path.join(dir, 'blob.bin'))], [0, 1, 2, 255]);
    assert.equal(fs.statSync(path.join(dir, 'run.sh')).mode & 0o111, 0o111);
  });
});

/** What a repository's git folder holds of a kind, by name: to see what a snapshot left behind. */
function gitFolderFiles(dir: string, pattern: RegExp): string[] {
  return fs
    .readdirSync(path.join(dir, '.git'))
    .filter((name) => pattern.test(name))
    .sort();
}

describe('git layouts a snapshot must see', () => {
  after(removeTempDirs);

  it('leave no shared index file behind in a repository that splits its index', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a\n', 'b.txt': 'b\n' } });
    git(dir, 'config', 'core.splitIndex', 'true');
    git(dir, 'update-index', '--split-index');
    const before = gitFolderFiles(dir, /^sharedindex\./);
    assert.ok(before.length > 0, 'the user’s index is split');
    const indexBefore = fs.readFileSync(path.join(dir, '.git', 'index'));
    const repository = await openRepository(dir);
    const target = await takeSnapshot(repository, 'pre');
    writeFile(dir, 'a.txt', 'changed\n');
    writeFile(dir, 'c.txt', 'new\n');
    const current = await takeSnapshot(repository, 'post');
    await restoreChangedPaths(repository, current.commit, target.commit);
    assert.deepEqual(treeOf(dir), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    assert.deepEqual(gitFolderFiles(dir, /^sharedindex\.|^codeloops-/), before, 'snapshots and restores leave no file in .git');
    assert.ok(fs.readFileSync(path.join(dir, '.git', 'index')).equals(indexBefore), 'the user’s index is untouched');
    assert.equal(git(dir, 'status', '--porcelain'), '');
  });

  for (const sparseIndex of [false, true]) {
    it(`see and put back what an agent writes outside a sparse checkout's cone${sparseIndex ? ' (with a sparse index)' : ''}`, async () => {
      const dir = createRepo({ files: { 'in/a.txt': 'a\n', 'out/b.txt': 'b\n', 'out/deep/c.txt': 'c\n', 'top.txt': 'top\n' } });
      git(dir, 'sparse-checkout', 'set', '--cone', ...(sparseIndex ? ['--sparse-index'] : []), 'in');
      assert.deepEqual(treeOf(dir), { 'in/a.txt': 'a\n', 'top.txt': 'top\n' }, 'the cone holds in/ only');
      const indexBefore = fs.readFileSync(path.join(dir, '.git', 'index'));
      const repository = await openRepository(dir);
      const pre = await takeSnapshot(repository, 'pre');
      writeFile(dir, 'in/a.txt', 'edited in the cone\n');
      writeFile(dir, 'out/new.txt', 'written outside the cone\n');
      writeFile(dir, 'elsewhere/deep/file.txt', 'a new folder outside the cone\n');
      // Files the cone leaves out, written all the same: they were not on disk before.
      writeFile(dir, 'out/b.txt', 'b, as the agent wrote it\n');
      writeFile(dir, 'out/deep/c.txt', 'c, as the agent wrote it\n');
      const post = await takeSnapshot(repository, 'post');
      const diff = await diffSnapshots(repository, pre.commit, post.commit);
      assert.deepEqual(diff.files.map((file) => `${file.status} ${file.path}`).sort(), [
        'added elsewhere/deep/file.txt',
        'added out/new.txt',
        'modified in/a.txt',
        'modified out/b.txt',
        'modified out/deep/c.txt',
      ]);
      assert.match(diff.diff, /\+written outside the cone/);
      assert.equal(git(dir, 'show', `${pre.commit}:out/deep/c.txt`), 'c\n', 'files the sparse checkout leaves out are not deletions');
      await restoreChangedPaths(repository, post.commit, pre.commit);
      assert.deepEqual(treeOf(dir), { 'in/a.txt': 'a\n', 'top.txt': 'top\n' }, 'what was on disk, and nothing the cone left out');
      assert.ok(!fs.existsSync(path.join(dir, 'out')), 'no folder left where the sparse checkout has none');
      // And back: what was on disk then is written again.
      await restoreChangedPaths(repository, pre.commit, post.commit);
      assert.equal(fs.readFileSync(path.join(dir, 'out/deep/c.txt'), 'utf8'), 'c, as the agent wrote it\n');
      await restoreChangedPaths(repository, post.commit, pre.commit);
      assert.ok(fs.readFileSync(path.join(dir, '.git', 'index')).equals(indexBefore), 'the user’s index is untouched');
      assert.equal(git(dir, 'status', '--porcelain'), '');
    });
  }

  it('say which filter cannot run and why when a required filter’s program is missing (Git LFS not installed)', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a\n' } });
    writeFile(dir, '.gitattributes', '*.bin filter=lfs diff=lfs merge=lfs -text\n');
    writeFile(dir, 'model.bin', 'large content\n');
    // What `git lfs install` writes, on a machine where git-lfs is not (or no longer) installed.
    for (const [key, value] of Object.entries({
      'filter.lfs.required': 'true',
      'filter.lfs.process': 'codeloops-test-missing-lfs filter-process',
      'filter.lfs.clean': 'codeloops-test-missing-lfs clean -- %f',
      'filter.lfs.smudge': 'codeloops-test-missing-lfs smudge -- %f',
    }))
      git(dir, 'config', key, value);
    const repository = await openRepository(dir);
    await assert.rejects(takeSnapshot(repository, 'pre'), (error: CodeloopsError) => {
      assert.equal(error.code, 'git_filter_failed');
      assert.match(error.message, /"lfs" filter/);
      assert.match(error.message, /codeloops-test-missing-lfs is not installed or not on PATH/);
      assert.doesNotMatch(error.message, /git -c/);
      assert.deepEqual(error.details, { filter: 'lfs', program: 'codeloops-test-missing-lfs', program_missing: true, command: 'add' });
      return true;
    });
    // Without the long-running process, git runs the clean command once per file: the same answer.
    git(dir, 'config', '--unset', 'filter.lfs.process');
    await assert.rejects(takeSnapshot(repository, 'pre'), (error: CodeloopsError) => {
      assert.equal(error.code, 'git_filter_failed');
      assert.deepEqual(error.details, { filter: 'lfs', program: 'codeloops-test-missing-lfs', program_missing: true, command: 'add' });
      return true;
    });
  });

  it('name the git command that failed, not the options before it', async () => {
    const dir = createRepo({ files: { 'a.txt': 'a\n' } });
    const repository = await openRepository(dir);
    const failure = await gitBytes(repository.root, ['-c', 'advice.addEmbeddedRepo=false', 'add', '--', '../outside']).catch((error: unknown) => error);
    assert.ok(failure instanceof GitCommandError);
    assert.match(failure.message, /^git add failed \(exit 128\): fatal: .*outside repository/);
  });

  /** Every file under a folder (outside `.git`) as its exact bytes, symbolic links as their target, and whether each is executable. */
  function bytesOf(dir: string): Record<string, string> {
    const files: Record<string, string> = {};
    for (const [file, content] of Object.entries(treeOf(dir))) {
      const full = path.join(dir, file);
      const bytes = content.startsWith('symlink:') ? content : fs.readFileSync(full).toString('base64');
      files[file] = `${bytes}${fs.lstatSync(full).mode & 0o111 ? ' (executable)' : ''}`;
    }
    return files;
  }

  const LINE_ENDING_LAYOUTS: { name: string; configure?: (dir: string) => void; afterCommit?: (dir: string) => void }[] = [
    { name: 'core.autocrlf=true', configure: (dir) => git(dir, 'config', 'core.autocrlf', 'true') },
    { name: 'core.autocrlf=input', configure: (dir) => git(dir, 'config', 'core.autocrlf', 'input') },
    { name: 'a text eol=crlf attribute', configure: (dir) => writeFile(dir, '.git/info/attributes', '*.txt text eol=crlf\n') },
    { name: 'a .gitattributes not committed yet', afterCommit: (dir) => writeFile(dir, 'sub/../.gitattributes', '* text=auto eol=crlf\n') },
    {
      // A file the cone leaves out has no bytes on disk to record: the others' are recorded all the same.
      name: 'core.autocrlf=true in a sparse checkout',
      configure: (dir) => (git(dir, 'config', 'core.autocrlf', 'true'), writeFile(dir, 'far/away.txt', 'left out\r\n')),
      afterCommit: (dir) => git(dir, 'sparse-checkout', 'set', '--cone', 'near'),
    },
  ];
  for (const layout of LINE_ENDING_LAYOUTS) {
    it(`put back the exact bytes that were on disk, whatever line endings git would write (${layout.name})`, async () => {
      const dir = createRepo({ files: { 'seed.txt': 'seed\n' } });
      layout.configure?.(dir);
      const original: Record<string, string | Buffer> = {
        'lf.txt': 'one\ntwo\n',
        'crlf.txt': 'one\r\ntwo\r\n',
        'mixed.txt': 'one\r\ntwo\nthree\r\n',
        'gone.txt': 'deleted later\n',
        'logo.bin': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x00, 0xff, 0x0a]),
        'run.sh': '#!/bin/sh\necho hi\n',
        'odd\nname "with" \\ in it.txt': 'odd\n',
      };
      for (const [file, content] of Object.entries(original)) writeFile(dir, file, content);
      fs.chmodSync(path.join(dir, 'run.sh'), 0o755);
      fs.symlinkSync('lf.txt', path.join(dir, 'link'));
      git(dir, 'add', '-A');
      git(dir, 'commit', '-q', '-m', 'files as a user has them');
      // After the commit, the files on disk are still as the user wrote them.
      for (const [file, content] of Object.entries(original)) writeFile(dir, file, content);
      layout.afterCommit?.(dir);
      writeFile(dir, 'untracked.txt', 'mine\n');
      const before = bytesOf(dir);
      const indexBefore = fs.readFileSync(path.join(dir, '.git', 'index'));
      const repository = await openRepository(dir);
      const pre = await takeSnapshot(repository, 'pre');
      assert.equal(git(dir, 'show', `${pre.commit}:lf.txt`), 'one\ntwo\n', 'the snapshot keeps the blobs git expects');

      // What an agent does: rewrites with other line endings, deletes, turns a file into a link, points a link elsewhere, makes a script plain.
      writeFile(dir, 'lf.txt', 'agent\r\n');
      writeFile(dir, 'mixed.txt', 'agent\n');
      writeFile(dir, 'odd\nname "with" \\ in it.txt', 'agent\r\n');
      writeFile(dir, 'logo.bin', Buffer.from([1, 2, 3]));
      fs.rmSync(path.join(dir, 'gone.txt'));
      fs.chmodSync(path.join(dir, 'run.sh'), 0o644);
      writeFile(dir, 'new.txt', 'created\n');
      fs.rmSync(path.join(dir, 'link'));
      fs.symlinkSync('crlf.txt', path.join(dir, 'link'));
      fs.rmSync(path.join(dir, 'crlf.txt'));
      fs.symlinkSync('lf.txt', path.join(dir, 'crlf.txt'));
      const afterAgent = bytesOf(dir);
      const post = await takeSnapshot(repository, 'post');

      await restoreChangedPaths(repository, post.commit, pre.commit);
      assert.deepEqual(bytesOf(dir), before, 'byte for byte as they were');
      assert.ok(fs.readFileSync(path.join(dir, '.git', 'index')).equals(indexBefore), 'the user’s index is untouched');
      assert.deepEqual(
        git(dir, 'status', '--porcelain')
          .split('\n')
          .filter((line) => line && !line.startsWith('??')),
        [],
        'git sees nothing changed',
      );
      const back = await takeSnapshot(repository, 'back');
      await restoreChangedPaths(repository, back.commit, post.commit);
      assert.deepEqual(bytesOf(dir), afterAgent, 'and the way forward again');
    });
  }

  it('leave files a filter converts to git both ways: the content behind a Git LFS–like pointer never goes into the object store', async () => {
    const dir = createRepo({ files: { 'seed.txt': 'seed\n' } });
    git(dir, 'config', 'core.autocrlf', 'true');
    // A filter that keeps a pointer in git, as Git LFS does, and gives the content back from elsewhere.
    const store = tempDir();
    git(dir, 'config', 'filter.pointer.clean', `sh -c 'cat > "${store}/content"; echo pointer'`);
    git(dir, 'config', 'filter.pointer.smudge', `sh -c 'cat > /dev/null; cat "${store}/content"'`);
    writeFile(dir, '.gitattributes', '*.model filter=pointer\n');
    writeFile(dir, 'weights.model', 'the large content\n');
    writeFile(dir, 'notes.txt', 'lf\n');
    const repository = await openRepository(dir);
    const pre = await takeSnapshot(repository, 'pre');
    assert.equal(git(dir, 'show', `${pre.commit}:weights.model`), 'pointer\n');
    const contentObject = git(dir, 'hash-object', '--no-filters', 'weights.model').trim();
    assert.throws(() => git(dir, 'cat-file', '-e', contentObject), 'the content itself is not in the object store');
    fs.rmSync(path.join(dir, 'weights.model'));
    writeFile(dir, 'notes.txt', 'changed\r\n');
    const post = await takeSnapshot(repository, 'post');
    await restoreChangedPaths(repository, post.commit, pre.commit);
    assert.equal(fs.readFileSync(path.join(dir, 'weights.model'), 'utf8'), 'the large content\n', 'the filter gave it back');
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'lf\n');
  });

  it('give files that git apply wrote the line endings they had before (what a rejected hunk needs where core.autocrlf=true)', async () => {
    const dir = createRepo({ files: { 'seed.txt': 'seed\n' } });
    git(dir, 'config', 'core.autocrlf', 'true');
    const lines = (eol: string, third = 'line 3') => ['line 1', 'line 2', third, 'line 4'].join(eol) + eol;
    writeFile(dir, 'lf.txt', lines('\n'));
    writeFile(dir, 'crlf.txt', lines('\r\n'));
    const repository = await openRepository(dir);
    const before = await takeSnapshot(repository, 'before');
    const patch = ['lf.txt', 'crlf.txt']
      .map((file) => `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+CHANGED 3\n line 4\n`)
      .join('');
    execFileSync('git', ['apply', '-'], { cwd: dir, input: patch });
    assert.equal(fs.readFileSync(path.join(dir, 'lf.txt'), 'utf8'), lines('\r\n', 'CHANGED 3'), 'git apply writes an LF file back as CRLF');
    await keepLineEndings(repository, before.commit, ['lf.txt', 'crlf.txt']);
    assert.equal(fs.readFileSync(path.join(dir, 'lf.txt'), 'utf8'), lines('\n', 'CHANGED 3'));
    assert.equal(fs.readFileSync(path.join(dir, 'crlf.txt'), 'utf8'), lines('\r\n', 'CHANGED 3'));
  });
});
