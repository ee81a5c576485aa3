import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
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

  it('keeps loops in worktrees a layer of their own: candidates, eval and queue use worktreeLoops/, which uses none of them', async () => {
    const upward = "import { runCandidates } from '../candidates/runCandidates.js';\nexport const x = runCandidates;\n";
    assert.match(
      (await problems('src/worktreeLoops/example.ts', upward)).join('\n'),
      /src\/worktreeLoops\/ may import only text, .*, verify, loop: the layers go one way/,
    );
    const sideways = "import { readGroup } from '../candidates/groupRecord.js';\nexport const x = readGroup;\n";
    assert.match(
      (await problems('src/eval/example.ts', sideways)).join('\n'),
      /src\/eval\/ may import only/,
      'eval runs its loops through worktreeLoops/, not candidates/',
    );
    assert.match((await problems('src/queue/example.ts', sideways)).join('\n'), /src\/queue\/ may import only/);
    const shared = "import { runLoopInWorktree } from '../worktreeLoops/runInWorktree.js';\nexport const x = runLoopInWorktree;\n";
    for (const folder of ['candidates', 'eval', 'queue']) assert.deepEqual(await problems(`src/${folder}/example.ts`, shared), [], `${folder} may use it`);
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

  it('lets only the runner client start processes in the extension: one way to the runner', async () => {
    const message = /Only src\/extension\/runner\/runnerClient\.ts starts processes in the extension/;
    for (const module of ['node:child_process', 'child_process', 'execa'])
      assert.match(
        (await problems('src/extension/runs/example.ts', `import { spawn } from '${module}';\nexport const x = spawn;\n`)).join('\n'),
        message,
        module,
      );
    const code = "import { spawn } from 'node:child_process';\nexport const x = spawn;\n";
    assert.deepEqual(await problems('src/extension/runner/runnerClient.ts', code), []);
    assert.deepEqual(await problems('src/cli/example.ts', code), [], 'the CLI starts processes as it must');
    assert.match(
      (await problems('src/extension/runner/runnerClient.ts', "import { x } from '../../server/uiServer.js';\nexport const y = x;\n")).join('\n'),
      /may import only/,
      'the layers still hold there',
    );
  });

  it('keeps the extension’s own layers: a lower folder never imports a higher one, the base files no folder', async () => {
    const upward = await problems(
      'src/extension/runs/example.ts',
      "import { CandidateRuns } from '../candidates/candidateRuns.js';\nexport const x = CandidateRuns;\n",
    );
    assert.match(upward.join('\n'), /src\/extension\/runs\/ may import runner: the extension's layers go one way/);
    const fromRunner = await problems(
      'src/extension/runner/example.ts',
      "import { RunController } from '../runs/runController.js';\nexport const x = RunController;\n",
    );
    assert.match(fromRunner.join('\n'), /src\/extension\/runner\/ may import no other folder of src\/extension\//);
    const fromBase = await problems('src/extension/ids.ts', "import { RunController } from './runs/runController.js';\nexport const x = RunController;\n");
    assert.match(fromBase.join('\n'), /The base files of src\/extension\/ may import no folder of src\/extension\//);
    assert.deepEqual(
      await problems('src/extension/candidates/example.ts', "import { RunController } from '../runs/runController.js';\nexport const x = RunController;\n"),
      [],
      'downward is allowed',
    );
    assert.deepEqual(
      await problems('src/extension/runs/example.ts', "import { runCandidates } from '../../candidates/runCandidates.js';\nexport const x = runCandidates;\n"),
      [],
      "the engine's candidates/ is not the extension's",
    );
    assert.deepEqual(
      await problems('src/extension/extension.ts', "import { QueueController } from './queue/queueController.js';\nexport const x = QueueController;\n"),
      [],
      'the composition imports any',
    );
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

  it('keeps each CLI command apart: a command imports no other, not even a type or lazily; what they share has a module of its own', async () => {
    const message = /A command \(src\/cli\/\*Command\.ts\) never imports another: put what commands share in a module of its own/;
    assert.match(
      (await problems('src/cli/exampleCommand.ts', "import { runCommand } from './runCommand.js';\nexport const x = runCommand;\n")).join('\n'),
      message,
    );
    assert.match(
      (await problems('src/cli/exampleCommand.ts', "import type { ApplyOptions } from './applyCommand.js';\nexport type X = ApplyOptions;\n")).join('\n'),
      message,
    );
    assert.match(
      (await problems('src/cli/exampleCommand.ts', "export const x = async () => (await import('./candidateRunCommand.js')).runCandidatesCommand;\n")).join(
        '\n',
      ),
      message,
    );
    assert.deepEqual(await problems('src/cli/exampleCommand.ts', "import { readPrompt } from './runSetup.js';\nexport const x = readPrompt;\n"), []);
    assert.deepEqual(
      await problems('src/cli/main.ts', "export const x = async () => (await import('./runCommand.js')).runCommand;\n"),
      [],
      'main.ts, which builds the command line, loads every command',
    );
    // The layer rules and the others still hold in a command's file.
    assert.match(
      (await problems('src/cli/exampleCommand.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n")).join('\n'),
      /Only src\/extension\//,
    );
    assert.match((await problems('src/cli/exampleCommand.ts', "export * from './runSetup.js';\n")).join('\n'), /No barrel files/);
  });

  it('keeps functions short and shallow in src/ and the webview, and shallow in the tests', async () => {
    const body = (lines: number) => Array.from({ length: lines }, (_, index) => `  total += ${index};`).join('\n');
    const long = `export function long(): number {\n  let total = 0;\n${body(80)}\n  return total;\n}\n`;
    assert.match((await problems('src/loop/example.ts', long)).join('\n'), /max-lines-per-function: Function 'long' has too many lines \(8\d\)/);
    assert.match((await problems('webview-ui/example.ts', long)).join('\n'), /max-lines-per-function/);
    assert.deepEqual(await problems('test/unit/example.test.ts', long), [], 'a test may be long: a describe is a list of cases');
    const commented = `export function fine(): number {\n  let total = 0;\n${body(70)}\n${Array.from({ length: 30 }, () => '  // why').join('\n')}\n\n\n  return total;\n}\n`;
    assert.deepEqual(await problems('src/loop/example.ts', commented), [], 'comments and blank lines do not count');
    const deep =
      'export function deep(a: number[][][][][]): number {\n  let n = 0;\n  for (const b of a) {\n    for (const c of b) {\n      for (const d of c) {\n        for (const e of d) {\n          if (e.length > 0) n += 1;\n        }\n      }\n    }\n  }\n  return n;\n}\n';
    assert.match((await problems('src/loop/example.ts', deep)).join('\n'), /max-depth: Blocks are nested too deeply \(5\)/);
    assert.match((await problems('test/unit/example.test.ts', deep)).join('\n'), /max-depth/);
  });

  it('keeps files and classes small enough to hold in mind in src/ and the webview, blank lines and comments aside', async () => {
    const constants = (count: number) => Array.from({ length: count }, (_, index) => `export const value${index} = ${index};`).join('\n');
    const why = (count: number) => Array.from({ length: count }, () => '// why').join('\n');
    const longFile = `${constants(601)}\n`;
    assert.match((await problems('src/loop/example.ts', longFile)).join('\n'), /max-lines: File has too many lines \(601\)\. Maximum allowed is 600/);
    assert.match((await problems('webview-ui/example.ts', longFile)).join('\n'), /max-lines/);
    assert.deepEqual(await problems('test/unit/example.test.ts', longFile), [], 'a test file may be long');
    assert.deepEqual(await problems('src/loop/example.ts', `${constants(590)}\n${why(30)}\n\n\n\n`), [], 'comments and blank lines do not count');

    // The class's first line (with its `{`) and its last count: 400 fields make 402 lines.
    const classOf = (fields: number, aside = '') =>
      `export class Big {\n${Array.from({ length: fields }, (_, index) => `  field${index} = ${index};`).join('\n')}\n${aside}}\n`;
    const tooLong = /codeloops\/max-class-lines: Class 'Big' has too many lines \(402\)\. Maximum allowed is 400: hand a cohesive part of it to a collaborator/;
    assert.match((await problems('src/loop/example.ts', classOf(400))).join('\n'), tooLong);
    assert.match((await problems('webview-ui/example.ts', classOf(400))).join('\n'), tooLong);
    const expression = classOf(400).replace('export class Big {', 'export const Big = class {');
    assert.match((await problems('src/loop/example.ts', expression)).join('\n'), /This class has too many lines \(402\)/, 'a class expression too');
    assert.deepEqual(await problems('src/loop/example.ts', classOf(398, `${why(30)}\n\n\n`)), [], 'comments and blank lines do not count');
    assert.deepEqual(await problems('test/unit/example.test.ts', classOf(400)), [], 'a test may hold a long class (a fake, a fixture)');
  });

  it('finds import cycles, type-only imports included, and names the modules on the way', async () => {
    // runEvents.ts imports failures.ts: a failures.ts that imported a type of runEvents.ts back would close a cycle.
    const found = await problems('src/sessionFormat/failures.ts', "import type { RunEvent } from './runEvents.js';\nexport type X = RunEvent;\n");
    assert.match(
      found.join('\n'),
      /codeloops\/no-import-cycles: This import closes a cycle: src\/sessionFormat\/failures\.ts → src\/sessionFormat\/runEvents\.ts → src\/sessionFormat\/failures\.ts/,
    );
    assert.deepEqual(
      await problems('src/sessionFormat/runEvents.ts', fs.readFileSync(path.join(repoRoot(), 'src/sessionFormat/runEvents.ts'), 'utf8')),
      [],
      'the way it is, one way',
    );
  });

  it('has one zod, configured once', async () => {
    const found = await problems('src/agents/example.ts', "import { z } from 'zod';\nexport const x = z;\n");
    assert.match(found.join('\n'), /Import z from src\/sessionFormat\/zod\.ts/);
  });
});
