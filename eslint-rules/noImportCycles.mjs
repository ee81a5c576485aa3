// A lint rule of this project's own: no import cycles among its modules, type-only
// imports included. import-x/no-cycle skips `import type`, but a cycle of types still
// ties two modules together: neither can be understood, moved or layered without the
// other. Imports are read with TypeScript's own pre-processor; the modules imported
// are read from disk.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** A module's own imports (relative specifiers resolved to files), by absolute path. */
const importsOnDisk = new Map();

function importsOf(file, text) {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((imported) => resolve(file, imported.fileName))
    .filter((target) => target !== undefined);
}

/** `./x.js` written in `file` to the file it names: the TypeScript source it is compiled from, when there is one. */
function resolve(file, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const target = path.resolve(path.dirname(file), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts'), target]) {
    if (candidate !== file && fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

function diskImports(file) {
  let imports = importsOnDisk.get(file);
  if (!imports) {
    imports = importsOf(file, fs.readFileSync(file, 'utf8'));
    importsOnDisk.set(file, imports);
  }
  return imports;
}

/** A path of imports from `from` back to `to`, or undefined: breadth first, so the shortest cycle is named. */
function pathBack(from, to) {
  const cameFrom = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of diskImports(file)) {
      if (next === to) {
        const chain = [file];
        for (let step = cameFrom.get(file); step !== null; step = cameFrom.get(step)) chain.unshift(step);
        return chain;
      }
      if (cameFrom.has(next)) continue;
      cameFrom.set(next, file);
      queue.push(next);
    }
  }
  return undefined;
}

export const noImportCycles = {
  meta: {
    type: 'problem',
    docs: { description: 'No import cycles among the project’s modules, type-only imports included.' },
    messages: { cycle: 'This import closes a cycle: {{cycle}}. Move what both need into a lower module.' },
    schema: [],
  },
  create(context) {
    const file = context.filename;
    const cwd = context.cwd;
    const check = (node) => {
      if (!node.source || typeof node.source.value !== 'string') return;
      const target = resolve(file, node.source.value);
      if (!target) return;
      const chain = pathBack(target, file);
      if (!chain) return;
      const cycle = [file, ...chain, file].map((step) => path.relative(cwd, step)).join(' → ');
      context.report({ node: node.source, messageId: 'cycle', data: { cycle } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};
