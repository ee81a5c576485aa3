/**
 * The `codeloops` executable (`dist/cli.js`): runs the runner's bundle (`dist/runner.js`,
 * built from `bin.ts`) with V8's code cache. Compiling a 600 KB bundle and the
 * functions a command uses costs a short command (`sessions list`, `--version`) a
 * good part of its time, every time; with the cache a start compiles nothing it
 * compiled before. The cache is this user's own (`$XDG_CACHE_HOME/codeloops`, or
 * `~/.cache/codeloops`, never a shared temporary folder: it holds code that runs),
 * written once, and a cache that cannot be read or written only means a slower start.
 * Nothing here loads more than the runner itself needs: every module loaded is
 * start-up time for every command.
 */
import fs from 'node:fs';
import Module from 'node:module';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';

declare const CODELOOPS_VERSION: string;

const bundle = path.join(__dirname, 'runner.js');
// Read and stamped through one descriptor: a rebuild between the two cannot name one bundle's cache after another.
const descriptor = fs.openSync(bundle, 'r');
const stamp = fs.fstatSync(descriptor);
const source = fs.readFileSync(descriptor, 'utf8');
fs.closeSync(descriptor);

/**
 * V8 checks a cache against the source's length only, not its content: the file name
 * says which bundle it was made from (hashing 600 KB at every start cost more than the
 * rest of this file), and for which engine. Its version, size and modification time
 * are not enough alone: npm dates every file it packs 1985-10-26, so two builds of one
 * version with the same length would share a name. The inode and the change time
 * cannot be carried over by an archive or a copy: any file written anew has its own.
 */
function cacheFile(): string {
  const home = process.env.XDG_CACHE_HOME && path.isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  const { size, mtimeMs, ctimeMs, ino } = stamp;
  const made = [CODELOOPS_VERSION, size, Math.round(mtimeMs * 1000), Math.round(ctimeMs * 1000), ino, process.arch, process.versions.v8].join('-');
  return path.join(home, 'codeloops', `runner-${made.replace(/[^\w.-]/g, '_')}.v8cache`);
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
        if (/^runner-.+\.v8cache$/.test(name) && name !== path.basename(cache)) fs.rmSync(path.join(path.dirname(cache), name), { force: true });
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
