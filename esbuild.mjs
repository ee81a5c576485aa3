// One build for every bundle: the runner CLI, the extension and the session viewer.
// Type checking is separate: `npm run typecheck`.
//   node esbuild.mjs                dist/ (with source maps)
//   node esbuild.mjs --production   dist/ minified, no source maps (what the VSIX ships)
//   node esbuild.mjs --tests        also the test, benchmark and demo bundles into out/
//   node esbuild.mjs --watch        rebuild on change
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const args = new Set(process.argv.slice(2));
const watch = args.has('--watch');
const production = args.has('--production');
const withTests = args.has('--tests');
const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8'));

/** @type {esbuild.BuildOptions} */
const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  // Some ESM dependencies read import.meta.url; give the CommonJS bundle a real one.
  inject: [path.resolve('src/cli/importMetaUrl.js')],
  define: { CODELOOPS_VERSION: JSON.stringify(version), 'import.meta.url': 'import_meta_url' },
};

const builds = [
  // The runner's bundle, and the small executable that starts it with V8's code cache (src/cli/launcher.ts).
  { ...node, entryPoints: { runner: 'src/cli/bin.ts' }, outdir: 'dist' },
  {
    ...node,
    entryPoints: { cli: 'src/cli/launcher.ts' },
    outdir: 'dist',
    banner: { js: '#!/usr/bin/env node' },
    inject: [],
    define: { CODELOOPS_VERSION: JSON.stringify(version) },
  },
  // The MCP server (`codeloops mcp`): the SDK and its full zod in a bundle of their own, which the runner loads only
  // for that command (src/cli/mcpCommand.ts), so that no other command reads them at its start.
  { ...node, entryPoints: { mcp: 'src/cli/mcp/mcpServer.ts' }, outdir: 'dist' },
  // The extension host provides `vscode`; everything else is bundled.
  { ...node, entryPoints: { extension: 'src/extension/extension.ts' }, outdir: 'dist', external: ['vscode'] },
  // What the chat participant and the language model tools run: loaded on their first use, not at activation (chatRegistration.ts).
  { ...node, entryPoints: { chat: 'src/extension/chat/chatFeatures.ts' }, outdir: 'dist', external: ['vscode'] },
  // Hunks rejected, restored and staged: loaded when the user first reviews hunks.
  { ...node, entryPoints: { review: 'src/extension/review/hunkReviewBundle.ts' }, outdir: 'dist' },
  // The Queue view: a bundle of its own that the extension loads when the view is first shown (src/extension/queue/queueViewLoader.ts).
  { ...node, entryPoints: { queueView: 'src/extension/queue/queueView.ts' }, outdir: 'dist', external: ['vscode'] },
  {
    // One bundle for every page: the editor's viewer and comparison webviews and the pages of `codeloops ui` share the
    // Markdown renderer, zod and the wording, and the VSIX ships them once.
    entryPoints: { webview: 'webview-ui/main.ts' },
    outdir: 'dist/webview',
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: ['chrome120'],
    sourcemap: production ? false : 'linked',
    minify: production,
    logLevel: 'warning',
  },
];

if (withTests) {
  // The test bundles are built afresh: a test file renamed or removed must not keep running from an old build.
  fs.rmSync('out/test', { recursive: true, force: true });
  const testEntries = walk('test').filter((file) => /\.(test|bench)\.ts$/.test(file) || /test[\\/]vscode[\\/].*[\\/]index\.ts$/.test(file));
  builds.push({
    ...node,
    entryPoints: [
      ...testEntries,
      'test/bench/runBenchmarks.ts',
      'test/demo/runDemo.ts',
      'test/support/readmeScreenshots.ts',
      'test/editor/extensionHostSuite.ts',
      'test/editor/runWithElectron.ts',
    ].filter((file) => fs.existsSync(file)),
    outbase: '.',
    outdir: 'out',
    external: ['mocha', 'vscode', 'playwright-core', 'eslint'],
  });
}

function walk(directory) {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

/** The viewer's stylesheets, the codicon font and the page icon, next to the scripts. */
function copyViewerAssets() {
  fs.mkdirSync('dist/webview', { recursive: true });
  fs.copyFileSync('webview-ui/viewer.css', 'dist/webview/viewer.css');
  fs.copyFileSync('webview-ui/stats.css', 'dist/webview/stats.css');
  fs.copyFileSync('webview-ui/browser/browser.css', 'dist/webview/browser.css');
  fs.copyFileSync('media/codeloops.svg', 'dist/webview/codeloops.svg');
  for (const file of ['codicon.css', 'codicon.ttf']) fs.copyFileSync(path.join('node_modules/@vscode/codicons/dist', file), path.join('dist/webview', file));
}

if (watch) {
  copyViewerAssets();
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  if (production) fs.rmSync('dist', { recursive: true, force: true });
  const results = await Promise.all(builds.map((options) => esbuild.build({ ...options, metafile: true })));
  // What each bundle is made of, for `npm run bench` (its size against its inputs') and for a curious reader.
  fs.mkdirSync('out/meta', { recursive: true });
  ['runner', 'cli', 'mcp', 'extension', 'chat', 'review', 'webview'].forEach((name, index) =>
    fs.writeFileSync(`out/meta/${name}.json`, JSON.stringify(results[index].metafile)),
  );
  copyViewerAssets();
  fs.chmodSync('dist/cli.js', 0o755);
}
