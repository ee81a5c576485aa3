/**
 * Extension activation: `require('dist/extension.js')` and `activate()` in a fresh Node
 * process, with a stand-in for the `vscode` module that answers every call at once (so
 * what is timed is the extension, not the editor); and the bundle's size. The baseline
 * is a one-command extension loaded and activated the same way: the floor any extension pays.
 */
import fs from 'node:fs';
import path from 'node:path';
import { median, runBenchmark, scratch, timedProcess } from './benchmark.js';

/**
 * Node's built-in modules that VS Code's extension host has loaded before it activates
 * any extension (its process.moduleLoadList, read in code-server's extension host:
 * these and http, https, tls, http2, dns, worker_threads, cluster…), of those the
 * extension requires; zlib, not seen there for sure, is left to be timed. Loaded before
 * the clock starts, as they are in the host: in a bare Node, loading them cost about a
 * third of the figure, and none of it falls to the extension in the editor.
 */
const LOADED_BY_THE_EXTENSION_HOST = ['child_process', 'crypto', 'net', 'stream', 'os', 'url', 'fs/promises', 'string_decoder', 'events', 'buffer'];

const ACTIVATION_SCRIPT = `
const Module = require('module');
const path = require('path');
const handler = {
  get: (target, key) => (key === 'then' || typeof key === 'symbol' ? undefined : key === 'subscriptions' ? [] : stub),
  apply: () => stub,
  construct: () => stub,
};
const stub = new Proxy(function () {}, handler);
// The API's namespaces and classes the extension names, each answering anything (a bundle copies the module's own properties).
const api = {};
for (const name of JSON.parse(process.argv[2])) api[name] = stub;
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) { return request === 'vscode' ? 'vscode' : resolve.call(this, request, ...rest); };
require.cache.vscode = { id: 'vscode', filename: 'vscode', loaded: true, exports: api };
const file = process.argv[1];
for (const builtin of JSON.parse(process.argv[3])) require(builtin);
const context = { subscriptions: [], extensionPath: path.dirname(path.dirname(file)), extensionUri: stub, globalState: stub, workspaceState: stub };
const started = performance.now();
const extension = require(file);
const required = performance.now();
extension.activate(context);
const activated = performance.now();
process.stdout.write(JSON.stringify({ require: required - started, activate: activated - required }));
`;

/** Every name the extension's sources take from `vscode` (types too: a stub more does no harm), so a new API in use needs no change here. */
function vscodeApiNames(): Set<string> {
  const apiNames = new Set<string>();
  for (const source of fs.readdirSync(path.join(process.cwd(), 'src', 'extension'), { recursive: true, encoding: 'utf8' })) {
    if (!source.endsWith('.ts')) continue;
    const text = fs.readFileSync(path.join(process.cwd(), 'src', 'extension', source), 'utf8');
    for (const match of text.matchAll(/\bvscode\.([A-Za-z]+)/g)) apiNames.add(match[1]!);
  }
  return apiNames;
}

runBenchmark(async () => {
  const bundle = path.join(process.cwd(), 'dist', 'extension.js');
  // The baseline: the smallest extension there is.
  const floor = path.join(scratch('activation'), 'dist', 'extension.js');
  fs.mkdirSync(path.dirname(floor), { recursive: true });
  fs.writeFileSync(floor, "exports.activate = (context) => { context.subscriptions.push(require('vscode').commands.registerCommand('x', () => {})); };\n");
  const apiNames = vscodeApiNames();
  const measure = (file: string) => {
    const runs = [1, 2, 3, 4, 5].map(
      () =>
        JSON.parse(timedProcess(['-e', ACTIVATION_SCRIPT, file, JSON.stringify([...apiNames]), JSON.stringify(LOADED_BY_THE_EXTENSION_HOST)]).stdout) as {
          require: number;
          activate: number;
        },
    );
    return { require: median(runs.map((run) => run.require)), activate: median(runs.map((run) => run.activate)) };
  };
  const ours = measure(bundle);
  const baseline = measure(floor);
  const total = ours.require + ours.activate;
  const kb = fs.statSync(bundle).size / 1024;
  return {
    name: 'extension activation: require dist/extension.js + activate() (a stub vscode)',
    ours: `${total.toFixed(1)} ms (require ${ours.require.toFixed(1)}, activate ${ours.activate.toFixed(1)}); bundle ${kb.toFixed(0)} KB`,
    baseline: `a one-command extension: ${(baseline.require + baseline.activate).toFixed(1)} ms`,
    ratio: total / (baseline.require + baseline.activate),
    ratioText: `+${(total - baseline.require - baseline.activate).toFixed(1)} ms over the floor`,
    goal: '≤ 30 ms, bundle ≤ 250 KB',
    met: total <= 30 && kb <= 250,
  };
});
