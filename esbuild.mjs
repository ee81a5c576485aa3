// One build for every bundle: the runner CLI (and later the extension and the
// webview). Type checking is separate: `npm run typecheck`.
//   node esbuild.mjs            production bundles into dist/
//   node esbuild.mjs --tests    also the test and benchmark bundles into out/
//   node esbuild.mjs --watch    rebuild on change
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';

const args = new Set(process.argv.slice(2));
const watch = args.has('--watch');
const withTests = args.has('--tests');
const { version } = JSON.parse(fs.readFileSync('package.json', 'utf8'));

/** @type {esbuild.BuildOptions} */
const node = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  // Some ESM dependencies read import.meta.url; give the CommonJS bundle a real one.
  inject: [path.resolve('src/cli/importMetaUrl.js')],
  define: { CODELOOPS_VERSION: JSON.stringify(version), 'import.meta.url': 'import_meta_url' },
};

const builds = [
  {
    ...node,
    entryPoints: { cli: 'src/cli/main.ts' },
    outdir: 'dist',
    banner: { js: '#!/usr/bin/env node' },
  },
];

if (withTests) {
  const testEntries = [...fs.globSync?.('test/**/*.{test,bench}.ts') ?? walk('test').filter((file) => /\.(test|bench)\.ts$/.test(file))];
  builds.push({
    ...node,
    entryPoints: [...testEntries, 'test/bench/runBenchmarks.ts', 'test/demo/runDemo.ts'].filter((file) => fs.existsSync(file)),
    outbase: '.',
    outdir: 'out',
    external: ['mocha', 'vscode'],
  });
}

function walk(directory) {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    return entry.isDirectory() ? walk(full) : [full];
  });
}

if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
  fs.chmodSync('dist/cli.js', 0o755);
}
