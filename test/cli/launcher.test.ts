import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../support/cliProcess.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** `dist/cli.js` starts the runner's bundle with V8's code cache (src/cli/launcher.ts). */
describe('the codeloops executable and its code cache', () => {
  after(removeTempDirs);

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
    assert.match(path.basename(cache), /^runner-[0-9a-f]{32}\.v8cache$/);
    assert.equal(fs.statSync(cache).mode & 0o777, 0o600);
    assert.equal(fs.statSync(path.dirname(cache)).mode & 0o777, 0o700);

    // A damaged cache is refused by V8: the command runs as usual and the cache is made again.
    fs.writeFileSync(cache, 'not bytecode');
    const damaged = await runCli(['--version'], { cwd: cacheHome, env });
    assert.equal(damaged.code, 0, damaged.stderr);
    assert.equal(damaged.stdout, first.stdout);
    assert.notEqual(fs.readFileSync(cache, 'utf8'), 'not bytecode');

    // The cache of another build is removed when this one's is written.
    const outdated = path.join(path.dirname(cache), 'runner-00000000000000000000000000000000.v8cache');
    fs.writeFileSync(outdated, 'old');
    fs.rmSync(cache);
    assert.equal((await runCli(['--version'], { cwd: cacheHome, env })).code, 0);
    assert.deepEqual(cacheFiles(cacheHome), [cache]);
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
