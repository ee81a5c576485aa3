import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { browserOpener } from '../../src/cli/uiCommand.js';
import { sessionListSchema } from '../../src/server/apiPayloads.js';
import { cliPath } from '../support/cliProcess.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { isolateHome, removeTempDirs, tempDir, type IsolatedHome } from '../support/testEnvironment.js';
import { eventually, request, startUiProcess as startUi } from './serverClient.js';

describe('codeloops ui (the built CLI)', () => {
  let home: IsolatedHome;
  const running: ChildProcess[] = [];

  before(() => {
    home = isolateHome();
    home.restore();
    writeSession(home.sessionsDir, [startLine({ prompt: 'Shown in the browser' }), iterationLine(1, { critic_decision: 'DONE', feedback: null }), endLine()]);
  });

  afterEach(() => {
    for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });
  after(removeTempDirs);

  it('starts well under a second on 127.0.0.1, prints its URL, serves, and stops cleanly on Ctrl+C', async () => {
    const ui = await startUi(['--no-open', '--port', '0'], home.env);
    running.push(ui.child);
    await eventually(() => /read-only, this machine only/.test(ui.output().stderr), 'the greeting on stderr');
    const list = sessionListSchema.parse((await request(ui.port, '/api/sessions')).json());
    assert.deepEqual(
      list.map((summary) => summary.prompt_preview),
      ['Shown in the browser'],
    );
    const page = await request(ui.port, '/');
    assert.equal(page.status, 200);
    assert.match(page.headers['content-security-policy'] as string, /script-src 'self'/);
    assert.equal((await request(ui.port, '/assets/webview.js')).status, 200, 'the bundle ships next to the CLI');
    // It does not answer on other interfaces.
    const other = await new Promise<string>((resolve) => {
      const socket = net.connect(ui.port, '::1', () => resolve('connected'));
      socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      socket.on('connect', () => socket.destroy());
    });
    assert.notEqual(other, 'connected', 'not reachable on ::1');

    // A browser tab with the live stream open must not keep it from stopping.
    const live = await new Promise<http.IncomingMessage>((resolve) =>
      http.get({ host: '127.0.0.1', port: ui.port, path: '/api/sessions/live', headers: { host: `127.0.0.1:${ui.port}` } }, resolve),
    );
    live.resume();
    ui.child.kill('SIGINT');
    const exit = await ui.exited;
    assert.equal(exit.code, 0, ui.output().stderr);
    assert.match(ui.output().stderr, /Stopped\./);
  });

  it('says so when the port is taken, and picks a free one when the default is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as net.AddressInfo).port;
    try {
      const child = spawn(process.execPath, [cliPath(), 'ui', '--no-open', '--port', String(taken)], {
        env: { ...process.env, ...home.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      running.push(child);
      let stderr = '';
      child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      assert.equal(code, 2);
      assert.match(stderr, new RegExp(`Port ${taken} on 127\\.0\\.0\\.1 is in use: pick another with --port, or --port 0 for any free one\\.`));
    } finally {
      blocker.close();
    }

    // The default port (3100): taken here on purpose, unless something else already has it.
    const holder = net.createServer();
    const held = await new Promise<boolean>((resolve) => {
      holder.once('error', () => resolve(false));
      holder.listen(3100, '127.0.0.1', () => resolve(true));
    });
    try {
      const ui = await startUi(['--no-open'], home.env);
      running.push(ui.child);
      assert.notEqual(ui.port, 3100);
      await eventually(() => new RegExp(`Port 3100 is in use; using ${ui.port} instead\\.`).test(ui.output().stderr), 'the fallback said');
      ui.child.kill('SIGTERM');
      assert.equal((await ui.exited).code, 0);
    } finally {
      if (held) holder.close();
    }
    const bad = spawn(process.execPath, [cliPath(), 'ui', '--port', '70000'], { env: { ...process.env, ...home.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let badErr = '';
    bad.stderr!.setEncoding('utf8').on('data', (chunk: string) => (badErr += chunk));
    assert.equal(await new Promise<number | null>((resolve) => bad.on('close', resolve)), 2);
    assert.match(badErr, /expected a port from 0 \(any free port\) to 65535/);
  });

  it('opens the browser with the URL as one argument (no shell), and only prints the URL when it cannot', async function () {
    if (process.platform !== 'linux') this.skip();
    // A stand-in for xdg-open that records exactly the arguments it was given.
    const bin = tempDir('codeloops-bin-');
    const record = path.join(bin, 'argv.json');
    fs.writeFileSync(
      path.join(bin, 'xdg-open'),
      `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.argv.slice(2)));\n`,
      { mode: 0o755 },
    );
    const opened = await startUi(['--port', '0'], { ...home.env, PATH: bin });
    running.push(opened.child);
    await eventually(() => fs.existsSync(record) && fs.statSync(record).size > 0, 'xdg-open to be run');
    assert.deepEqual(JSON.parse(fs.readFileSync(record, 'utf8')), [opened.url]);
    opened.child.kill('SIGINT');
    await opened.exited;

    const empty = tempDir('codeloops-empty-bin-');
    const unopened = await startUi(['--port', '0'], { ...home.env, PATH: empty });
    running.push(unopened.child);
    await eventually(() => /Could not open a browser/.test(unopened.output().stderr), 'the explanation');
    assert.match(
      unopened.output().stderr,
      new RegExp(`Could not open a browser \\(xdg-open was not found\\); open ${unopened.url.replace(/[.]/g, '\\.')} yourself\\.`),
    );
    assert.equal((await request(unopened.port, '/api/stats')).status, 200, 'and it serves all the same');
    unopened.child.kill('SIGINT');
    assert.equal((await unopened.exited).code, 0);
  });

  it('picks the opener per platform, always as an argument list', () => {
    const url = 'http://127.0.0.1:3100/';
    assert.deepEqual(browserOpener(url, 'linux'), ['xdg-open', [url]]);
    assert.deepEqual(browserOpener(url, 'darwin'), ['open', [url]]);
    assert.deepEqual(browserOpener(url, 'win32'), ['explorer.exe', [url]]);
  });
});
