import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { groupComparisonSchema } from '../../src/sessionFormat/candidateGroups.js';
import { runSummarySchema } from '../../src/sessionFormat/runEvents.js';
import { runCli } from '../support/cliProcess.js';
import { stopRunners } from '../support/processes.js';
import { claudeStream, decision, done, scriptedClaudeSetup, scriptedCliSetup, type AgentScript } from '../support/scriptedAgent.js';
import { removeTempDirs, tempDir, writeFile } from '../support/testEnvironment.js';
import { webhookReceiver } from '../support/webhookReceiver.js';

/** In the prompt and in the agents' output: neither may ever leave the machine in a notification. */
const PROMPT_MARKER = 'PROMPT-MARKER-7f3a';
const OUTPUT_MARKER = 'AGENT-OUTPUT-MARKER-c41d';
const QUESTION = 'Should the greeting be formal or casual?';

const succeeding: AgentScript = {
  actor: [[{ write: { path: 'greeting.txt', content: 'Hi\n' } }, { print: `Wrote it. ${OUTPUT_MARKER}` }]],
  critic: [[done('greeting written')]],
};
const asking: AgentScript = {
  actor: [[{ write: { path: 'greeting.txt', content: 'Hi\n' } }], [{ write: { path: 'greeting.txt', content: 'Good day\n' } }]],
  critic: [[decision({ type: 'blocked', question: QUESTION })], [done('formal greeting')]],
};

const notifyToml = (lines: string[]) => `\n[notify]\n${lines.join('\n')}\n`;

describe('[notify]: word when a loop needs you or ends', () => {
  const servers: { close: () => Promise<void> }[] = [];
  afterEach(async () => {
    await stopRunners();
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  after(removeTempDirs);

  it('a webhook gets "finished" with the session, the project and the outcome, and nothing of the prompt, the summary or the agents’ output by default', async () => {
    const hook = await webhookReceiver();
    servers.push(hook);
    const { repo, env } = scriptedCliSetup(succeeding, notifyToml([`webhook = "${hook.url}"`]));
    const run = await runCli(['-p', `Write a greeting. ${PROMPT_MARKER}`, '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const summary = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(hook.received.length, 1, JSON.stringify(hook.received));
    assert.deepEqual(hook.received[0]!.json, { event: 'finished', session_id: summary.session_id, project: path.basename(repo), outcome: 'success' });
    for (const { body } of hook.received) {
      for (const secret of [PROMPT_MARKER, OUTPUT_MARKER, 'greeting written']) assert.ok(!body.includes(secret), `sent "${secret}": ${body}`);
    }
  });

  it('include = ["summary", "question"] adds them: the question when the loop needs you, the critic’s summary at the end (run, then resume)', async () => {
    const hook = await webhookReceiver();
    servers.push(hook);
    const { repo, env } = scriptedCliSetup(asking, notifyToml([`webhook = "${hook.url}"`, 'include = ["summary", "question"]']));
    const asked = await runCli(['-p', `Write a greeting. ${PROMPT_MARKER}`, '--json-output'], { cwd: repo, env });
    assert.equal(asked.code, 2, asked.stderr);
    const first = runSummarySchema.parse(JSON.parse(asked.stdout));
    const project = path.basename(repo);
    assert.deepEqual(
      hook.received.map(({ json }) => json),
      [
        { event: 'needs_input', session_id: first.session_id, project, outcome: null, question: QUESTION },
        { event: 'finished', session_id: first.session_id, project, outcome: 'failed', summary: null },
      ],
    );
    const resumed = await runCli(['resume', first.session_id, '--answer', 'Formal, please.', '--json-output'], { cwd: repo, env });
    assert.equal(resumed.code, 0, resumed.stderr);
    const second = runSummarySchema.parse(JSON.parse(resumed.stdout));
    assert.deepEqual(hook.received[2]?.json, { event: 'finished', session_id: second.session_id, project, outcome: 'success', summary: 'formal greeting' });
    assert.ok(!hook.received.some(({ body }) => body.includes(PROMPT_MARKER) || body.includes('Formal, please.')));
  });

  it('on = ["finished"] sends no word of the question; the default include sends the question but not the summary', async () => {
    const hook = await webhookReceiver();
    servers.push(hook);
    const { repo, env } = scriptedCliSetup(asking, notifyToml([`webhook = "${hook.url}"`, 'on = ["finished"]']));
    const asked = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(asked.code, 2, asked.stderr);
    assert.deepEqual(
      hook.received.map(({ json }) => json.event),
      ['finished'],
    );

    const everything = await webhookReceiver();
    servers.push(everything);
    const other = scriptedCliSetup(asking, notifyToml([`webhook = "${everything.url}"`]));
    await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: other.repo, env: other.env });
    assert.equal(everything.received[0]?.json.question, QUESTION);
    assert.ok(!('summary' in everything.received[1]!.json), JSON.stringify(everything.received[1]!.json));
  });

  it('each candidate of run --parallel is a session of its own: one "finished" each, the project the user’s repository, not the worktree', async () => {
    const hook = await webhookReceiver();
    servers.push(hook);
    const { repo, env } = scriptedCliSetup(succeeding, notifyToml([`webhook = "${hook.url}"`]));
    const run = await runCli(['run', '--parallel', '2', '-p', 'Write a greeting', '--json-output', '--no-judge'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const comparison = groupComparisonSchema.parse(JSON.parse(run.stdout));
    assert.deepEqual(
      hook.received.map(({ json }) => json).sort((a, b) => String(a.session_id).localeCompare(String(b.session_id))),
      comparison.candidates
        .map((candidate) => ({ event: 'finished', session_id: candidate.session_id, project: path.basename(repo), outcome: 'success' }))
        .sort((a, b) => String(a.session_id).localeCompare(String(b.session_id))),
    );
  });

  it('a queue run tells of each task as a loop of its own (its end, its question) and of the queue’s end, the project the user’s repository', async () => {
    const hook = await webhookReceiver();
    servers.push(hook);
    const script: AgentScript = { actor: [succeeding.actor![0]!, asking.actor![0]!], critic: [[done('greeting written')], asking.critic![0]!] };
    const { repo, env } = scriptedCliSetup(script, notifyToml([`webhook = "${hook.url}"`]));
    for (const prompt of [`Write a greeting. ${PROMPT_MARKER}`, 'Write a farewell']) {
      const added = await runCli(['queue', 'add', '-p', prompt], { cwd: repo, env });
      assert.equal(added.code, 0, added.stderr);
    }
    const run = await runCli(['queue', 'run'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const project = path.basename(repo);
    const sent = hook.received.map(({ json }) => json);
    assert.deepEqual(
      sent.map(({ event, project: where, outcome }) => [event, where, outcome]),
      [
        ['finished', project, 'success'],
        ['needs_input', project, null],
        ['finished', project, 'failed'],
        ['queue_finished', project, null],
      ],
    );
    assert.equal(sent[1]!.question, QUESTION);
    assert.equal(sent[1]!.session_id, sent[2]!.session_id);
    assert.notEqual(sent[0]!.session_id, sent[1]!.session_id);
    assert.equal(sent[3]!.session_id, null);
    assert.ok(!hook.received.some(({ body }) => body.includes(PROMPT_MARKER) || body.includes('greeting written')), JSON.stringify(sent));
  });

  it('a wait is told once, with its agent, reason and end, however many times the limit refuses the agent in it', async () => {
    const hook = await webhookReceiver();
    servers.push(hook);
    // Refused twice, the second time after the stated reset: the loop backs off and waits again, in the same wait.
    const reset = new Date(Date.now() + 1_000);
    const wrote = [{ write: { path: 'greeting.txt', content: 'Hi\n' } }, claudeStream.result('Wrote it.', 0.01, {})];
    const { repo, env, agent } = scriptedClaudeSetup(
      {
        actor: [claudeStream.usageLimit(reset), claudeStream.usageLimit(reset), wrote],
        critic: [[claudeStream.result('<decision>{"type":"done","summary":"ok","confidence":0.9}</decision>', 0.01, {})]],
      },
      notifyToml([`webhook = "${hook.url}"`]),
    );
    const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    const summary = runSummarySchema.parse(JSON.parse(run.stdout));
    assert.equal(agent.calls('actor'), 3);
    const waiting = hook.received.map(({ json }) => json).filter((json) => json.event === 'waiting');
    assert.deepEqual(waiting, [
      {
        event: 'waiting',
        session_id: summary.session_id,
        project: path.basename(repo),
        outcome: null,
        agent: 'Claude Code',
        reason: 'usage_limit',
        until: new Date(Math.ceil(reset.getTime() / 1000) * 1000).toISOString(),
      },
    ]);
  });

  for (const failure of ['HTTP 500', 'a refused connection', 'a webhook that never answers'] as const) {
    it(`${failure} is logged and changes nothing: the loop succeeds, exit code 0`, async () => {
      const hook = await webhookReceiver(failure === 'HTTP 500' ? 500 : 'hang');
      servers.push(hook);
      if (failure === 'a refused connection') await hook.close();
      const { repo, env } = scriptedCliSetup(succeeding, notifyToml([`webhook = "${hook.url}"`, 'timeout_secs = 1']));
      const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env, timeoutMs: 60_000 });
      assert.equal(run.timedOut, false);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(runSummarySchema.parse(JSON.parse(run.stdout)).status, 'success');
      const said = {
        'HTTP 500': /answered HTTP 500/,
        'a refused connection': /could not be reached: .*ECONNREFUSED/,
        'a webhook that never answers': /did not answer within 1 s/,
      }[failure];
      assert.match(run.stderr, new RegExp(`warning: \\[notify\\] webhook: the webhook at http://127\\.0\\.0\\.1:\\d+ ${said.source}`));
      assert.ok(!run.stderr.includes('secret-token'), 'the webhook’s path (its token) is not logged');
    });
  }

  it('a webhook that redirects is not followed: its headers and the body go to its address only, and the warning says so', async () => {
    const elsewhere = await webhookReceiver();
    const hook = await webhookReceiver({ redirect: `${elsewhere.url}/ELSEWHERE-TOKEN` });
    servers.push(elsewhere, hook);
    const headers = 'webhook_headers = { X-Api-Key = "HEADER-SECRET" }';
    const { repo, env } = scriptedCliSetup(succeeding, notifyToml([`webhook = "${hook.url}"`, headers]));
    const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(hook.received.length, 1);
    assert.deepEqual(elsewhere.received, [], 'nothing sent on to where it redirects');
    assert.match(run.stderr, /warning: \[notify\] webhook: the webhook at http:\/\/127\.0\.0\.1:\d+ answered HTTP 307, a redirect: not followed/);
    for (const secret of ['HEADER-SECRET', 'ELSEWHERE-TOKEN', 'secret-token']) assert.ok(!run.stderr.includes(secret), `"${secret}" shown: ${run.stderr}`);
  });

  it('a webhook’s address is never shown beyond its origin: not its path, its query or its fragment, whatever they hold (an IPv6 host, an @ in the path)', async () => {
    const closed = await webhookReceiver();
    await closed.close();
    const port = new URL(closed.url).port;
    for (const url of [
      `http://127.0.0.1:${port}/hooks/T0K3N@evil.example/more?token=QUERY-SECRET#FRAGMENT-SECRET`,
      `http://[::1]:${port}/hooks/T0K3N?token=QUERY-SECRET`,
      `http://@127.0.0.1:${port}/hooks/T0K3N%40x`,
    ]) {
      const { repo, env } = scriptedCliSetup(succeeding, notifyToml([`webhook = "${url}"`, 'timeout_secs = 5']));
      const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
      assert.equal(run.code, 0, run.stderr);
      const host = url.includes('[::1]') ? '\\[::1\\]' : '127\\.0\\.0\\.1';
      assert.match(run.stderr, new RegExp(`warning: \\[notify\\] webhook: the webhook at http://${host}:${port} could not be reached`), url);
      for (const secret of ['T0K3N', 'QUERY-SECRET', 'FRAGMENT-SECRET', 'evil.example', '/hooks'])
        assert.ok(!run.stderr.includes(secret), `"${secret}" shown: ${run.stderr}`);
    }
  });

  it('a webhook URL with a user name or password is config_invalid, never shown, and says to send them as a header; webhook_headers are sent', async () => {
    for (const url of [
      'http://user:S3CRET-PW@127.0.0.1:9/PATH-TOKEN',
      'http://user%40x:S3CRET-PW@hooks.example/PATH-TOKEN',
      'https://:S3CRET-PW@[::1]:8443/PATH-TOKEN?q=1',
      'http://S3CRET-PW@hooks.example/PATH-TOKEN',
    ]) {
      const { repo, env } = scriptedCliSetup(succeeding, notifyToml([`webhook = "${url}"`]));
      for (const args of [['-p', 'x', '--json-output'], ['doctor']]) {
        const refused = await runCli(args, { cwd: repo, env });
        for (const secret of ['S3CRET-PW', 'PATH-TOKEN'])
          assert.ok(!`${refused.stdout}${refused.stderr}`.includes(secret), `${args[0]} shows "${secret}" of ${url}`);
      }
      const refused = await runCli(['-p', 'x', '--json-output'], { cwd: repo, env });
      assert.equal(refused.code, 2, refused.stderr);
      const output = JSON.parse(refused.stdout) as { error_code: string; error: string };
      assert.equal(output.error_code, 'config_invalid', url);
      assert.match(output.error, /config\.toml: "notify\.webhook": must not hold a user name or password .*webhook_headers/);
    }

    const hook = await webhookReceiver();
    servers.push(hook);
    const headers = 'webhook_headers = { Authorization = "Bearer HEADER-SECRET", X-Team = "blue" }';
    const { repo, env } = scriptedCliSetup(succeeding, notifyToml([`webhook = "${hook.url}"`, headers]));
    const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(hook.received.length, 1);
    assert.equal(hook.received[0]!.headers.authorization, 'Bearer HEADER-SECRET');
    assert.equal(hook.received[0]!.headers['x-team'], 'blue');
    assert.equal(hook.received[0]!.headers['content-type'], 'application/json');

    for (const [table, why] of [
      ['{ Content-Type = "text/plain" }', /may not set content-type/],
      ['{ "Bad Name" = "x" }', /is not an HTTP header name/],
      ['{ Authorization = "Bearer a\\nX-Injected: 1" }', /must be one line of printable text/],
    ] as const) {
      const bad = scriptedCliSetup(succeeding, notifyToml([`webhook = "${hook.url}"`, `webhook_headers = ${table}`]));
      const refused = await runCli(['-p', 'x', '--json-output'], { cwd: bad.repo, env: bad.env });
      assert.equal(refused.code, 2, refused.stderr);
      assert.equal((JSON.parse(refused.stdout) as { error_code: string }).error_code, 'config_invalid');
      assert.match((JSON.parse(refused.stdout) as { error: string }).error, why);
    }
  });

  it('with both a program and a webhook set, each gets every word: the question and the end', async () => {
    const hook = await webhookReceiver();
    servers.push(hook);
    const folder = tempDir('codeloops-notify-');
    const argvFile = path.join(folder, 'argv.json');
    const script = path.join(folder, 'record.mjs');
    fs.writeFileSync(script, `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`);
    const command = [process.execPath, script, '{event}', '{session_id}'];
    const { repo, env } = scriptedCliSetup(asking, notifyToml([`command = ${JSON.stringify(command)}`, `webhook = "${hook.url}"`]));
    const asked = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(asked.code, 2, asked.stderr);
    const id = runSummarySchema.parse(JSON.parse(asked.stdout)).session_id;
    assert.deepEqual(
      hook.received.map(({ json }) => [json.event, json.session_id]),
      [
        ['needs_input', id],
        ['finished', id],
      ],
    );
    assert.deepEqual(
      fs
        .readFileSync(argvFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as string[]),
      [
        ['needs_input', id],
        ['finished', id],
      ],
    );
  });

  it('command runs the program without a shell, each placeholder filled as one argument; a failing one is logged and changes nothing', async () => {
    const folder = tempDir('codeloops-notify-');
    const argvFile = path.join(folder, 'argv.json');
    const script = path.join(folder, 'record.mjs');
    fs.writeFileSync(script, `import fs from 'node:fs';\nfs.appendFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)) + '\\n');\n`);
    const command = [process.execPath, script, '{title}', '{message}', '{event}', '{outcome}', '{session_id}', '{project}', '{summary}', '$HOME;{question}'];
    const { repo, env } = scriptedCliSetup(asking, notifyToml([`command = ${JSON.stringify(command)}`]));
    const asked = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: repo, env });
    assert.equal(asked.code, 2, asked.stderr);
    const id = runSummarySchema.parse(JSON.parse(asked.stdout)).session_id;
    const project = path.basename(repo);
    const calls = fs
      .readFileSync(argvFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[]);
    assert.deepEqual(calls, [
      [`Codeloops needs you in ${project}`, QUESTION, 'needs_input', '', id, project, '', `$HOME;${QUESTION}`],
      [`Codeloops failed in ${project}`, `Session ${id}`, 'finished', 'failed', id, project, '', '$HOME;'],
    ]);

    const failing = scriptedCliSetup(succeeding, notifyToml(['command = ["false"]']));
    const run = await runCli(['-p', 'Write a greeting', '--json-output'], { cwd: failing.repo, env: failing.env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /warning: \[notify\] command: false exited with code 1/);
  });

  it('[notify] in a project’s codeloops.toml is config_invalid, saying it belongs in the global config and why; an unknown placeholder too', async () => {
    const { repo, env } = scriptedCliSetup(succeeding);
    writeFile(repo, 'codeloops.toml', '[notify]\nwebhook = "https://example.invalid/hook"\n');
    const refused = await runCli(['-p', 'x', '--json-output'], { cwd: repo, env });
    assert.equal(refused.code, 2, refused.stderr);
    const output = JSON.parse(refused.stdout) as { error_code: string; error: string };
    assert.equal(output.error_code, 'config_invalid');
    assert.match(output.error, /codeloops\.toml: \[notify\] can only be set in the global config .*a webhook could send a project's work away/);

    const misspelt = scriptedCliSetup(succeeding, notifyToml(['command = ["notify-send", "{mesage}"]']));
    const bad = await runCli(['-p', 'x', '--json-output'], { cwd: misspelt.repo, env: misspelt.env });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match((JSON.parse(bad.stdout) as { error: string }).error, /"notify\.command": names an unknown placeholder \(expected \{title\}, \{message\}/);
  });
});
