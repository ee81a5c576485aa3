/**
 * The `codeloops` executable (`dist/cli.js`): runs the runner's bundle (`dist/runner.js`,
 * built from `bin.ts`) with V8's code cache. Compiling a 400 KB bundle and the
 * functions a command uses costs a short command (`sessions list`, `--version`) a
 * good part of its time, every time; with the cache a start compiles nothing it
 * compiled before. The cache is this user's own (`$XDG_CACHE_HOME/codeloops`, or
 * `~/.cache/codeloops`, never a shared temporary folder: it holds code that runs),
 * named by a hash of the bundle and the engine, written once, and a cache that
 * cannot be read or written only means a slower start.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

const bundle = path.join(__dirname, 'runner.js');
const source = fs.readFileSync(bundle, 'utf8');

/** V8 checks a cache against the source's length only, not its content: the file name carries the content's hash. */
function cacheFile(): string {
  const home = process.env.XDG_CACHE_HOME && path.isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  const key = createHash('sha256').update(source).update(`${process.version} ${process.arch} ${process.versions.v8}`).digest('hex').slice(0, 32);
  return path.join(home, 'codeloops', `runner-${key}.v8cache`);
}

const cache = cacheFile();
let cachedData: Buffer | undefined;
try {
  cachedData = fs.readFileSync(cache);
} catch {
  // none yet
}

const script = new vm.Script(Module.wrap(source), { filename: bundle, cachedData });
if (cachedData === undefined || script.cachedDataRejected) {
  // Made at exit, so that it holds the functions this command compiled as it ran, not only the top level.
  process.once('exit', () => {
    const temporary = `${cache}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(path.dirname(cache), { recursive: true, mode: 0o700 });
      fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(temporary, cache);
      // A cache of an earlier version (or engine) is never used again.
      for (const name of fs.readdirSync(path.dirname(cache))) {
        if (/^runner-[0-9a-f]+\.v8cache$/.test(name) && name !== path.basename(cache)) fs.rmSync(path.join(path.dirname(cache), name), { force: true });
      }
    } catch {
      try {
        fs.rmSync(temporary, { force: true });
      } catch {
        // nothing was written
      }
    }
  });
}

const runner = new Module(bundle, module);
runner.filename = bundle;
runner.paths = (Module as unknown as { _nodeModulePaths(from: string): string[] })._nodeModulePaths(__dirname);
const run = script.runInThisContext() as (exports: object, require: NodeJS.Require, module: Module, filename: string, dirname: string) => void;
run.call(runner.exports, runner.exports, runner.require.bind(runner) as NodeJS.Require, runner, bundle, __dirname);
