import assert from 'node:assert/strict';
import fs from 'node:fs';
import fsPromises from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { apiErrorSchema, sessionDocumentSchema, sessionListSchema, sessionViewResponseSchema } from '../../src/server/apiPayloads.js';
import { sessionStatsSchema } from '../../src/sessionFormat/sessionSummaries.js';
import * as z from '../../src/sessionFormat/zod.js';
import { iterationDetailSchema } from '../../src/sessionView/sessionView.js';
import { PAGE_CSP } from '../../src/server/staticFiles.js';
import type { UiServer } from '../../src/server/uiServer.js';
import { runCli } from '../support/cliProcess.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { isolateHome, removeTempDirs, tempDir, type IsolatedHome } from '../support/testEnvironment.js';
import { eventually, rawRequest, request, startTestServer, type Reply } from './serverClient.js';

const HUGE_OUTPUT_BYTES = 50 * 1024 * 1024;

function errorOf(reply: Reply): string {
  return apiErrorSchema.parse(reply.json()).error;
}

describe('codeloops ui: the sessions API', () => {
  let home: IsolatedHome;
  let server: UiServer;
  let port: number;
  const ids: Record<string, string> = {};

  before(async () => {
    home = isolateHome();
    home.restore(); // only the CLI children read it
    const dir = home.sessionsDir;
    ids.signup = writeSession(dir, [
      startLine({ prompt: 'Add validation to signup', timestamp: '2025-01-10T09:00:00Z', working_dir: '/w/alpha' }),
      iterationLine(1, {
        git_diff: 'diff --git a/signup.ts b/signup.ts\n--- a/signup.ts\n+++ b/signup.ts\n@@ -1 +1 @@\n-old\n+new\n',
        actor_output: 'first try',
      }),
      iterationLine(2, { critic_decision: 'DONE', feedback: null, git_diff: 'diff --git a/test.ts b/test.ts\n+test\n', actor_output: 'second try' }),
      endLine({ iterations: 2, summary: 'Validation added', confidence: 0.95, duration_secs: 80 }),
    ]);
    ids.flaky = writeSession(dir, [
      startLine({ prompt: 'Fix the flaky test', timestamp: '2025-01-12T09:00:00Z', working_dir: '/w/beta' }),
      iterationLine(1),
      endLine({ outcome: 'failed', summary: null, confidence: null, error: 'the actor failed twice' }),
    ]);
    ids.payments = writeSession(dir, [
      startLine({ prompt: 'Refactor payments, find the NEEDLE 🪡', timestamp: '2025-02-01T09:00:00Z', working_dir: '/w/alpha' }),
      iterationLine(1),
      endLine({ outcome: 'interrupted', summary: null, confidence: null }),
    ]);
    ids.limit = writeSession(dir, [
      startLine({ prompt: 'Rewrite the parser', timestamp: '2025-02-15T09:00:00Z', working_dir: '/w/gamma' }),
      iterationLine(1),
      iterationLine(2),
      iterationLine(3),
      endLine({ outcome: 'max_iterations_reached', iterations: 3, summary: null, confidence: null }),
    ]);
    ids.unfinished = writeSession(dir, [
      startLine({ prompt: 'Left without an end', timestamp: '2025-03-01T09:00:00Z', working_dir: '/w/alpha' }),
      iterationLine(1),
    ]);
    ids.torn = writeSession(dir, [
      startLine({ prompt: 'Torn at the end', timestamp: '2025-03-02T09:00:00Z', working_dir: '/w/beta' }),
      iterationLine(1),
      { raw: 'this line is not JSON\n' },
      iterationLine(2),
      { raw: '{"type":"iteration","iteration_number":3,"actor_out' },
    ]);
    ids.huge = writeSession(dir, [
      startLine({ prompt: 'A huge actor output', timestamp: '2025-03-03T09:00:00Z', working_dir: '/w/gamma' }),
      iterationLine(1, { actor_output: 'x'.repeat(HUGE_OUTPUT_BYTES), git_diff: `diff --git a/big b/big\n${'+big line\n'.repeat(1000)}` }),
      endLine(),
    ]);
    // Named like a session, but its first line is not a session_start.
    fs.writeFileSync(path.join(dir, '2025-03-04T09-00-00Z_000000.jsonl'), JSON.stringify(iterationLine(1)) + '\n');
    ids.notSession = '2025-03-04T09-00-00Z_000000';
    // A valid session outside the sessions folder: what a path traversal would reach.
    writeSession(path.dirname(dir), [startLine({ prompt: 'SECRET outside the sessions folder' })], 'secret');
    server = await startTestServer(dir, home.env);
    port = server.port;
  });

  after(async () => {
    await server?.close();
    removeTempDirs();
  });

  const get = (rawPath: string, options?: Parameters<typeof request>[2]) => request(port, rawPath, options);

  it('lists sessions newest first, exactly as `codeloops sessions list --json` prints them', async () => {
    const reply = await get('/api/sessions');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['content-type'], 'application/json; charset=utf-8');
    const summaries = sessionListSchema.parse(reply.json());
    assert.deepEqual(
      summaries.map((summary) => summary.id),
      [ids.huge, ids.torn, ids.unfinished, ids.limit, ids.payments, ids.flaky, ids.signup],
    );
    const cli = await runCli(['sessions', 'list', '--json'], { cwd: tempDir(), env: home.env });
    assert.deepEqual(reply.json(), JSON.parse(cli.stdout));
    const torn = summaries.find((summary) => summary.id === ids.torn)!;
    assert.equal(torn.iterations, 2, 'the torn last line is skipped; the last whole iteration counts');
    assert.equal(torn.outcome, null);
  });

  it('filters by outcome (several at once), dates, prompt text and project, as the CLI does', async () => {
    const list = async (query: string) => {
      const reply = await get(`/api/sessions?${query}`);
      assert.equal(reply.status, 200, `${query}: ${reply.body}`);
      return sessionListSchema.parse(reply.json()).map((summary) => summary.id);
    };
    assert.deepEqual(await list('outcome=failed&outcome=interrupted'), [ids.payments, ids.flaky]);
    assert.deepEqual(await list('outcome=failed,max_iterations_reached'), [ids.limit, ids.flaky]);
    assert.deepEqual(await list('after=2025-02-01&before=2025-02-15'), [ids.limit, ids.payments]);
    assert.deepEqual(await list('after=2025-03-01T12:00:00Z'), [ids.huge, ids.torn]);
    assert.deepEqual(await list('search=needle'), [ids.payments]);
    assert.deepEqual(await list(`search=${encodeURIComponent('🪡')}`), [ids.payments]);
    assert.deepEqual(await list('project=alpha'), [ids.unfinished, ids.payments, ids.signup]);
    assert.deepEqual(await list('project=alpha&outcome=success'), [ids.signup]);
    const cli = await runCli(['sessions', 'list', '--json', '--outcome', 'failed', 'interrupted', '--project', 'beta'], { cwd: tempDir(), env: home.env });
    assert.deepEqual((await get('/api/sessions?outcome=failed&outcome=interrupted&project=beta')).json(), JSON.parse(cli.stdout));
  });

  it('refuses bad filters with a 400 and a message that names the parameter', async () => {
    const cases: Array<[string, RegExp]> = [
      ['/api/sessions?outcome=great', /outcome great is not an outcome \(one of: success, failed, interrupted, max_iterations_reached\)/],
      ['/api/sessions?after=yesterday', /after "yesterday" is not a date/],
      ['/api/sessions?before=2025-13-45', /before "2025-13-45" is not a date/],
      ['/api/sessions?outcomes=success', /Unknown query parameter "outcomes" \(this route takes: outcome, after, before, search, project, actor, critic\)/],
      ['/api/sessions?search=a&search=b', /"search" is given 2 times/],
      [`/api/sessions?search=${'a'.repeat(2001)}`, /"search" is longer than 2000 characters/],
      ['/api/stats?outcome=nope', /outcome nope is not an outcome/],
      ['/api/sessions/x/view?verbose=1', /Unknown query parameter "verbose" \(this route takes none\)/],
      // Names that are special to JavaScript objects are names like any other.
      ['/api/sessions?__proto__=1', /Unknown query parameter "__proto__"/],
      ['/api/stats?constructor=1', /Unknown query parameter "constructor"/],
      ['/api/sessions/x/diff?__proto__=1', /Unknown query parameter "__proto__"/],
      ['/api/sessions/live?__proto__=1', /Unknown query parameter "__proto__"/],
    ];
    for (const [rawPath, message] of cases) {
      const reply = await get(rawPath);
      assert.equal(reply.status, 400, rawPath);
      assert.match(errorOf(reply), message, rawPath);
    }
  });

  it('gives stats over all or filtered sessions, exactly as `codeloops sessions stats --json`', async () => {
    const reply = await get('/api/stats');
    assert.equal(reply.status, 200);
    const stats = sessionStatsSchema.parse(reply.json());
    assert.equal(stats.total_sessions, 7);
    assert.equal(stats.success_rate, 2 / 7);
    const cli = await runCli(['sessions', 'stats', '--json'], { cwd: tempDir(), env: home.env });
    assert.deepEqual(reply.json(), JSON.parse(cli.stdout));
    const alpha = sessionStatsSchema.parse((await get('/api/stats?project=alpha')).json());
    assert.deepEqual(alpha.by_project, [{ project: 'alpha', total: 3, success_rate: 1 / 3 }]);
  });

  it('returns a whole session as `sessions show --json` does, plus the lines it skipped', async () => {
    const reply = await get(`/api/sessions/${ids.signup}`);
    assert.equal(reply.status, 200);
    const document = sessionDocumentSchema.parse(reply.json());
    assert.deepEqual(
      document.iterations.map((iteration) => iteration.actor_output),
      ['first try', 'second try'],
    );
    assert.deepEqual(document.warnings, []);
    const cli = await runCli(['sessions', 'show', ids.signup!, '--json'], { cwd: tempDir(), env: home.env });
    const { warnings, ...asTheCliPrintsIt } = reply.json<Record<string, unknown>>();
    assert.deepEqual(warnings, []);
    assert.deepEqual(asTheCliPrintsIt, JSON.parse(cli.stdout));

    const torn = sessionDocumentSchema.parse((await get(`/api/sessions/${ids.torn}`)).json());
    assert.deepEqual(
      torn.iterations.map((iteration) => iteration.iteration_number),
      [1, 2],
    );
    assert.equal(torn.end, null);
    assert.equal(torn.warnings.length, 2);
    assert.match(torn.warnings[0]!, /skipped line 3: not valid JSON/);
    assert.match(torn.warnings[1]!, /skipped a torn last line 5/);
  });

  it('serves the recorded diff as text, whole or one iteration, as `sessions diff` prints it', async () => {
    const whole = await get(`/api/sessions/${ids.signup}/diff`);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers['content-type'], 'text/plain; charset=utf-8');
    const cli = await runCli(['sessions', 'diff', ids.signup!], { cwd: tempDir(), env: home.env });
    assert.equal(whole.body, cli.stdout);
    const second = await get(`/api/sessions/${ids.signup}/diff?iteration=2`);
    assert.equal(second.body, 'diff --git a/test.ts b/test.ts\n+test\n');
    const missing = await get(`/api/sessions/${ids.signup}/diff?iteration=7`);
    assert.equal(missing.status, 404);
    assert.match(errorOf(missing), /has no iteration 7 \(iterations: 1, 2\)/);
    for (const bad of ['0', '-1', 'two', '1.5']) {
      const reply = await get(`/api/sessions/${ids.signup}/diff?iteration=${bad}`);
      assert.equal(reply.status, 400, bad);
      assert.match(errorOf(reply), /"iteration" must be a positive whole number/);
    }
  });

  it('gives the viewer its model of a session and each iteration on demand', async () => {
    const reply = await get(`/api/sessions/${ids.signup}/view`);
    assert.equal(reply.status, 200);
    const { view, running } = sessionViewResponseSchema.parse(reply.json());
    assert.equal(running, false);
    assert.equal(view.end?.outcome, 'success');
    assert.deepEqual(
      view.iterations.map((iteration) => [iteration.iteration_number, iteration.critic_decision, iteration.files.map((file) => file.path)]),
      [
        [1, 'CONTINUE', ['signup.ts']],
        [2, 'DONE', ['test.ts']],
      ],
    );
    assert.ok(!reply.body.includes('first try'), 'the view holds no agent output');
    const detail = iterationDetailSchema.parse((await get(`/api/sessions/${ids.signup}/iterations/2`)).json());
    assert.equal(detail.actor_output, 'second try');
    assert.equal(detail.diff, 'diff --git a/test.ts b/test.ts\n+test\n');
    const unfinished = sessionViewResponseSchema.parse((await get(`/api/sessions/${ids.unfinished}/view`)).json());
    assert.equal(unfinished.running, false, 'no loop holds its repository: it is not running');
    const missing = await get(`/api/sessions/${ids.signup}/iterations/3`);
    assert.equal(missing.status, 404);
    assert.match(errorOf(missing), /has no iteration 3 \(iterations: 1, 2\)/);
    assert.equal((await get(`/api/sessions/${ids.signup}/iterations/zero`)).status, 400);
  });

  it('answers 404 for unknown sessions and routes, 422 for a file that is not a session', async () => {
    const unknown = await get('/api/sessions/2020-01-01T00-00-00Z_abcdef');
    assert.equal(unknown.status, 404);
    assert.match(errorOf(unknown), /No session "2020-01-01T00-00-00Z_abcdef"/);
    for (const rawPath of [
      '/api/sessions/2020-01-01T00-00-00Z_abcdef/view',
      '/api/sessions/2020-01-01T00-00-00Z_abcdef/diff',
      '/api/sessions/2020-01-01T00-00-00Z_abcdef/iterations/1',
    ]) {
      assert.equal((await get(rawPath)).status, 404, rawPath);
    }
    const notSession = await get(`/api/sessions/${ids.notSession}`);
    assert.equal(notSession.status, 422);
    assert.match(errorOf(notSession), /does not start with a session_start line/);
    for (const rawPath of [
      '/api/nothing',
      `/api/sessions/${ids.signup}/nothing`,
      '/nothing',
      '/assets/cli.js',
      '/assets/../cli.js',
      '/assets/%2e%2e%2fcli.js',
    ]) {
      const reply = await get(rawPath);
      assert.equal(reply.status, 404, rawPath);
      assert.ok(apiErrorSchema.safeParse(reply.json()).success, rawPath);
    }
  });

  it('refuses every session id that is not a plain file name, with a 400, before reading anything', async () => {
    const hostile = [
      '/api/sessions/..',
      '/api/sessions/../secret',
      '/api/sessions/..%2fsecret',
      '/api/sessions/..%2Fsecret/diff',
      '/api/sessions/%2e%2e',
      '/api/sessions/%2e%2e%2fsecret/view',
      '/api/sessions/%2E%2E/iterations/1',
      '/api/sessions/secret%00.jsonl',
      '/api/sessions/%00',
      '/api/sessions/%2fetc%2fpasswd',
      '/api/sessions/%2Ftmp%2Fsecret',
      '/api/sessions/..%5csecret',
      '/api/sessions/.hidden',
      '/api/sessions/a%20b',
      '/api/sessions/%ZZ',
      '/api/sessions/live?session=..%2fsecret',
      '/sessions/..%2fsecret',
    ];
    // Every file-system entry point the server reads through, watched while the hostile requests run.
    const touched: string[] = [];
    const spied: Array<[object, string]> = [
      [fs, 'createReadStream'],
      [fs, 'openSync'],
      [fs, 'statSync'],
      [fs, 'existsSync'],
      [fs, 'readFileSync'],
      [fs, 'watch'],
      [fsPromises, 'access'],
      [fsPromises, 'open'],
      [fsPromises, 'readdir'],
      [fsPromises, 'readFile'],
    ];
    const originals = spied.map(([target, name]) => (target as Record<string, unknown>)[name] as (...args: unknown[]) => unknown);
    spied.forEach(([target, name], index) => {
      (target as Record<string, unknown>)[name] = (...args: unknown[]) => {
        touched.push(`${name}(${String(args[0])})`);
        return originals[index]!.apply(target, args);
      };
    });
    const replies: Reply[] = [];
    try {
      for (const rawPath of hostile) replies.push(await get(rawPath));
    } finally {
      spied.forEach(([target, name], index) => ((target as Record<string, unknown>)[name] = originals[index]));
    }
    replies.forEach((reply, index) => {
      assert.equal(reply.status, 400, `${hostile[index]}: ${reply.body}`);
      assert.ok(!reply.body.includes('SECRET'), hostile[index]);
      assert.ok(apiErrorSchema.safeParse(reply.json()).success, hostile[index]);
    });
    assert.match(errorOf(replies[2]!), /"\.\.\/secret" is not a session id/);
    assert.deepEqual(touched, [], 'no file was opened, read or even looked at');
  });

  it('refuses other host names (DNS rebinding) with 421 and other origins with 403', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1:${port + 1}`, `127.0.0.2:${port}`, `[::1]:${port}`]) {
      const reply = await get('/api/sessions', { headers: { host } });
      assert.equal(reply.status, 421, host);
      assert.match(errorOf(reply), new RegExp(`answers only to http://127\\.0\\.0\\.1:${port}/`));
    }
    assert.equal((await get('/', { headers: { host: 'rebound.example' } })).status, 421, 'the page too');
    assert.match(await rawRequest(port, 'GET /api/sessions HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 421 /, 'no Host at all');
    assert.equal((await get('/api/sessions', { headers: { host: `localhost:${port}` } })).status, 200, 'localhost is this server too');

    for (const origin of ['http://evil.example', 'null', `http://localhost:${port + 1}`, `https://127.0.0.1:${port}`]) {
      const reply = await get('/api/sessions', { headers: { origin } });
      assert.equal(reply.status, 403, origin);
      assert.match(errorOf(reply), /only the page this server serves may call it/);
    }
    assert.equal((await get('/api/sessions', { headers: { origin: `http://127.0.0.1:${port}` } })).status, 200);
    const crossSite = await get('/api/sessions', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' } });
    assert.equal(crossSite.status, 403, 'another site’s <script src> or <img> cannot read it');
    assert.equal(
      (await get('/api/sessions', { headers: { 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors' } })).status,
      403,
      'nor another port of localhost',
    );
    assert.equal(
      (await get('/', { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' } })).status,
      200,
      'following a link to the page is fine',
    );
  });

  it('only reads: every other method is a 405 that says which are allowed', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const reply = await get(`/api/sessions/${ids.signup}`, { method });
      assert.equal(reply.status, 405, method);
      assert.equal(reply.headers.allow, 'GET, HEAD');
    }
    const head = await get(`/api/sessions/${ids.signup}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
    assert.equal((await get('/api/sessions', { method: 'HEAD' })).body, '');
  });

  it('serves the page under a strict CSP, and nothing without nosniff', async () => {
    for (const rawPath of ['/', '/stats', `/sessions/${ids.signup}`]) {
      const page = await get(rawPath);
      assert.equal(page.status, 200, rawPath);
      assert.equal(page.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(page.headers['content-security-policy'], PAGE_CSP);
      assert.match(page.body, /<script src="\/assets\/webview\.js"><\/script>/);
      assert.doesNotMatch(page.body, /<script>|\son\w+=|style=/, 'no inline script, handler or style');
    }
    assert.match(PAGE_CSP, /default-src 'none'/);
    assert.match(PAGE_CSP, /script-src 'self'(;|$)/);
    assert.doesNotMatch(PAGE_CSP, /unsafe-inline|unsafe-eval|\*/);
    const script = await get('/assets/webview.js');
    assert.equal(script.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.ok(script.body.length < 400_000, `the page's script stays small: ${script.body.length} bytes (zod/mini, tree-shaken)`);
    for (const rawPath of ['/', '/api/sessions', '/api/stats', `/api/sessions/${ids.signup}/diff`, '/assets/viewer.css', '/api/nothing', '/api/sessions/..']) {
      const reply = await get(rawPath);
      assert.equal(reply.headers['x-content-type-options'], 'nosniff', rawPath);
      assert.equal(reply.headers['x-frame-options'], 'DENY', rawPath);
    }
    assert.equal((await get('/api/sessions')).headers['access-control-allow-origin'], undefined, 'no CORS');
  });

  it('streams a 50 MB iteration without trouble: listed, shown, and its diff', async () => {
    const list = sessionListSchema.parse((await get('/api/sessions?project=gamma')).json());
    assert.deepEqual(
      list.map((summary) => summary.id),
      [ids.huge, ids.limit],
    );
    const reply = await get(`/api/sessions/${ids.huge}`);
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['transfer-encoding'], 'chunked', 'streamed, not sent as one buffer');
    const document = z.object({ iterations: z.array(z.object({ actor_output: z.string() })) }).parse(reply.json());
    assert.equal(document.iterations[0]!.actor_output.length, HUGE_OUTPUT_BYTES);
    const diff = await get(`/api/sessions/${ids.huge}/diff?iteration=1`);
    assert.equal(diff.body.split('\n').length, 1002);
  });

  it('releases the file and the stream when a client leaves in the middle of a download', async () => {
    const openFiles = () => fs.readdirSync('/proc/self/fd').length;
    const baseline = openFiles();
    for (const rawPath of [`/api/sessions/${ids.huge}`, `/api/sessions/${ids.huge}/diff`]) {
      await new Promise<void>((resolve, reject) => {
        const req = http.get({ host: '127.0.0.1', port, path: rawPath, headers: { host: `127.0.0.1:${port}` }, agent: false }, (res) => {
          res.once('data', () => {
            req.destroy(); // the user closed the tab
            resolve();
          });
        });
        req.on('error', () => {});
        setTimeout(() => reject(new Error('no data')), 10_000);
      });
    }
    await eventually(() => server.openStreams() === 0, 'the streams to close');
    await eventually(() => openFiles() <= baseline, `open files back to ${baseline} (now ${openFiles()})`);
    // And the server still answers.
    assert.equal((await get('/api/stats')).status, 200);
  });
});
