import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../support/testEnvironment.js';

/** Files under a folder, recursively. */
function sourceFiles(directory: string): string[] {
  return fs.readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

const IMPORTS_VSCODE = /(?:from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)|import\(\s*['"]vscode['"]\s*\))/;

describe('engine boundary', () => {
  it('nothing outside src/extension imports vscode: the CLI, the extension and the server share one engine', () => {
    const src = path.join(repoRoot(), 'src');
    const offenders = sourceFiles(src)
      .filter((file) => !file.startsWith(path.join(src, 'extension') + path.sep))
      .filter((file) => IMPORTS_VSCODE.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(repoRoot(), file));
    assert.deepEqual(offenders, []);
  });

  it('the check itself recognises every form of import', () => {
    for (const line of ["import * as vscode from 'vscode';", 'import { window } from "vscode"', "const vscode = require('vscode')", "await import('vscode')"]) {
      assert.ok(IMPORTS_VSCODE.test(line), line);
    }
    assert.ok(!IMPORTS_VSCODE.test("import x from 'vscode-uri'"));
  });

  it('the bundled CLI does not contain the vscode module', () => {
    const bundle = fs.readFileSync(path.join(repoRoot(), 'dist', 'cli.js'), 'utf8');
    assert.ok(!IMPORTS_VSCODE.test(bundle));
  });
});
