import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../support/cliProcess.js';
import { removeTempDirs, repoRoot, tempDir } from '../support/testEnvironment.js';

/** `dist/cli.js` starts the runner's bundle with V8's code cache (src/cli/launcher.ts). */
describe('the codeloops executable and its code cache', () => {
  after(removeTempDirs);
  const runnerBundle = path.join(repoRoot(), 'dist', 'runner.js');

  const cacheFiles = (cacheHome: string) => {
    const folder = path.join(cacheHome, 'codeloops');
    return fs.existsSync(folder) ? fs.readdirSync(folder).map((name) => path.join(folder, name)) : [];
  };

  it('keeps a cache in the user’s cache folder, private to them, and replaces a damaged or outdated one', async () => {
    const cacheHome = tempDir();
    const env = { XDG_CACHE_HOME: cacheHome };
    const first = await runCli(['--version'], { cwd: cacheHome, env });
    assert.equal(first.code, 0, first.stderr);
    const [cache] = cacheFiles(cacheHome);
    assert.ok(cache, 'a cache was written');
    // Named by the bundle it was made from (its version, size, modification and change times, inode) and the engine.
    const bundle = fs.statSync(runnerBundle);
    const made = [first.stdout.trim(), bundle.size, Math.round(bundle.mtimeMs * 1000), Math.round(bundle.ctimeMs * 1000), bundle.ino].join('-');
    assert.ok(path.basename(cache).startsWith(`runner-${made}-`), path.basename(cache));
    assert.equal(fs.statSync(cache).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(cache)).mode & 0o777, 0o700);

    // A damaged cache is refused by V8: the command runs as usual and the cache is made again.
    fs.writeFileSync(cache, 'not bytecode');
    const damaged = await runCli(['--version'], { cwd: cacheHome, env });
    assert.equal(damaged.code, 0, damaged.stderr);
    assert.equal(damaged.stdout, first.stdout);
    assert.notEqual(fs.readFileSync(cache, 'utf8'), 'not bytecode');

    // The cache of another build is removed when this one's is written.
    const outdated = path.join(path.dirname(cache), 'runner-0.0.1-1000-1-x64-11.3.0.v8cache');
    fs.writeFileSync(outdated, 'old');
    fs.rmSync(cache);
    assert.equal((await runCli(['--version'], { cwd: cacheHome, env })).code, 0);
    assert.deepEqual(cacheFiles(cacheHome), [cache]);

    // A bundle built again (same length, new modification time) is never run with the old one's cache.
    const later = new Date(bundle.mtimeMs + 1000);
    fs.utimesSync(runnerBundle, later, later);
    try {
      assert.equal((await runCli(['--version'], { cwd: cacheHome, env })).code, 0);
      const [rebuilt, ...others] = cacheFiles(cacheHome);
      assert.deepEqual(others, []);
      assert.notEqual(rebuilt, cache);
      assert.ok(rebuilt!.includes(`-${Math.round(fs.statSync(runnerBundle).mtimeMs * 1000)}-`), rebuilt);
    } finally {
      fs.utimesSync(runnerBundle, bundle.atime, bundle.mtime);
    }
  });

  it('runs without a cache where none can be written', async () => {
    const cacheHome = tempDir();
    fs.writeFileSync(path.join(cacheHome, 'codeloops'), 'a file where the cache folder would be');
    const result = await runCli(['--version'], { cwd: cacheHome, env: { XDG_CACHE_HOME: cacheHome } });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^\d+\.\d+\.\d+/);
    assert.equal(result.stderr, '');
  });
});
