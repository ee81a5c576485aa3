import assert from 'node:assert/strict';
import { ESLint } from 'eslint';
import { repoRoot } from '../support/testEnvironment.js';

/**
 * The lint guards the design: each rule of eslint.config.mjs is shown catching a
 * deliberate violation (and letting the allowed direction through), so a change to
 * the config that stops enforcing a layer fails here.
 */
describe('the lint guards the layers (eslint.config.mjs)', function () {
  this.timeout(60_000);
  const eslint = new ESLint({ cwd: repoRoot() });

  async function problems(filePath: string, code: string): Promise<string[]> {
    const [result] = await eslint.lintText(code, { filePath });
    return (result?.messages ?? []).map((message) => `${message.ruleId}: ${message.message}`);
  }

  it('stops a lower folder importing a higher one, with a message that says why', async () => {
    const found = await problems('src/sessions/example.ts', "import { runLoop } from '../loop/loopRunner.js';\nexport const x = runLoop;\n");
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0]!, /src\/sessions\/ may import only text, process, files, sessionFormat, git: the layers go one way/);
    assert.deepEqual(
      await problems('src/loop/example.ts', "import { SessionStore } from '../sessions/sessionStore.js';\nexport const x = SessionStore;\n"),
      [],
      'the other way is allowed',
    );
  });

  it('keeps the surfaces apart: the extension never imports the CLI or the web server', async () => {
    const found = await problems('src/extension/example.ts', "import { startUiServer } from '../server/uiServer.js';\nexport const x = startUiServer;\n");
    assert.match(found.join('\n'), /src\/extension\/ may import only/);
  });

  it('allows vscode only in src/extension/', async () => {
    const code = "import * as vscode from 'vscode';\nexport const x = vscode;\n";
    assert.match((await problems('src/loop/example.ts', code)).join('\n'), /Only src\/extension\/ may import vscode/);
    assert.match((await problems('src/server/example.ts', code)).join('\n'), /Only src\/extension\/ may import vscode/);
    assert.deepEqual(await problems('src/extension/example.ts', code), []);
  });

  it('keeps Node out of the webview, and the engine’s Node-bound folders too', async () => {
    assert.match((await problems('webview-ui/example.ts', "import fs from 'node:fs';\nexport const x = fs;\n")).join('\n'), /no Node modules/);
    assert.match((await problems('webview-ui/example.ts', "import path from 'path';\nexport const x = path;\n")).join('\n'), /no Node modules/);
    assert.match(
      (await problems('webview-ui/example.ts', "import { SessionStore } from '../src/sessions/sessionStore.js';\nexport const x = SessionStore;\n")).join('\n'),
      /only what a page can run/,
    );
    assert.deepEqual(await problems('webview-ui/example.ts', "import { takeTail } from '../src/text/truncate.js';\nexport const x = takeTail;\n"), []);
  });

  it('has one zod, configured once', async () => {
    const found = await problems('src/agents/example.ts', "import { z } from 'zod';\nexport const x = z;\n");
    assert.match(found.join('\n'), /Import z from src\/sessionFormat\/zod\.ts/);
  });
});
