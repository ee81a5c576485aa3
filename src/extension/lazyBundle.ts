import path from 'node:path';

/**
 * A part of the extension bundled on its own into `dist/<name>.js` (esbuild.mjs) and
 * read from disk when first used, not at activation: the extension's own bundle,
 * which VS Code reads at every start, stays small. What it exports is typed by its
 * entry module (`import type`); the objects it works on are the extension's, handed
 * in. Its failures are known by their code (`isCodeloopsError`), not their class.
 */
export function lazyBundle<T>(extensionPath: string, name: string): () => T {
  let loaded: T | undefined;
  // A path the bundler leaves alone; require, since the extension host loads CommonJS.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return () => (loaded ??= require(path.join(extensionPath, 'dist', `${name}.js`)) as T);
}
