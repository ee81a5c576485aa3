import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { MORE_ITERATIONS } from '../../src/extension/chat/loopChat.js';
import { offeredMcpServers } from '../../src/extension/chat/mcpServerDefinition.js';
import { COMMANDS } from '../../src/extension/ids.js';
import { unsupportedPlatformMessage } from '../../src/process/platformSupport.js';
import { cliPath } from '../support/cliProcess.js';
import { FakeCancelToken, FakeChatStream, chatFor, type ChatPart } from '../support/fakeChat.js';
import { runnerSuiteHome } from '../support/processes.js';
import { CHECKLIST_TASK, UNMET_EVIDENCE, checklistProject } from '../support/requirementsSession.js';
import { carryOnNaming, configureScriptedAgent, done } from '../support/scriptedAgent.js';
import { createRepo } from '../support/testEnvironment.js';

/**
 * `@codeloops` in VS Code's chat and the language model tools, in plain Node: the
 * real runner (dist/cli.js) with scripted agents on real repositories, the chat's
 * response stream and the editor's window stubbed. What a response shows, in which
 * order, and what its buttons and follow-ups do, is decided here.
 */
describe('chat: @codeloops and the language model tools (plain Node, the real runner, a stubbed editor)', () => {
  const suiteHome = runnerSuiteHome();

  const indexOf = (stream: FakeChatStream, test: (part: ChatPart) => boolean) => {
    const index = stream.parts.findIndex(test);
    assert.ok(index >= 0, `shown: ${JSON.stringify(stream.parts.map((part) => ('text' in part ? part.text : part.command.title)))}`);
    return index;
  };
  const markdownWith = (pattern: RegExp) => (part: ChatPart) => part.kind === 'markdown' && pattern.test(part.text);

  it('/run streams the loop as it happens (iterations, phases, checks, requirements, verdicts, cost, outcome) with its buttons, then offers to review the changes', async () => {
    const repo = checklistProject(suiteHome());
    const { chat, editor } = chatFor(repo, suiteHome().env, { editorSettings: JSON.stringify({ max_cost_usd: 5 }) });
    const stream = new FakeChatStream();
    const metadata = await chat.handle({ command: 'run', prompt: CHECKLIST_TASK }, stream, new FakeCancelToken());
    const sessionId = metadata.sessionId!;
    assert.deepEqual(metadata, { command: 'run', sessionId, status: 'success' });
    // Each in the order it happened.
    const order = [
      indexOf(stream, (part) => part.kind === 'button' && part.command.command === COMMANDS.openViewer),
      indexOf(stream, markdownWith(/#### ── Iteration 1 ──/)),
      indexOf(stream, (part) => part.kind === 'progress' && /actor/.test(part.text)),
      indexOf(stream, markdownWith(/check tests: passed/)),
      indexOf(stream, (part) => part.kind === 'progress' && /critic/.test(part.text)),
      indexOf(stream, markdownWith(new RegExp(`REQ3 difference\\(a, b\\) returns a - b — unmet: ${UNMET_EVIDENCE}`))),
      indexOf(stream, markdownWith(/^DONE refused: REQ3/)),
      indexOf(stream, markdownWith(/^critic: CONTINUE/)),
      indexOf(stream, markdownWith(/^Cost so far: \$0\.00 of \$5\.00/)),
      indexOf(stream, (part) => part.kind === 'button' && part.command.title === 'Show Changes of Iteration 1'),
      indexOf(stream, markdownWith(/#### ── Iteration 2 ──/)),
      indexOf(stream, markdownWith(/^critic: DONE/)),
      indexOf(stream, markdownWith(/^✓ Done after 2 iterations/)),
    ];
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
      'in the order it happened',
    );
    assert.deepEqual(stream.buttons(), [
      { command: COMMANDS.openViewer, title: 'Open Viewer', arguments: [sessionId] },
      { command: COMMANDS.interrupt, title: 'Interrupt', arguments: [{ kind: 'session', id: sessionId }] },
      { command: COMMANDS.showIterationChanges, title: 'Show Changes of Iteration 1', arguments: [{ kind: 'iteration', sessionId, number: 1 }] },
      { command: COMMANDS.showIterationChanges, title: 'Show Changes of Iteration 2', arguments: [{ kind: 'iteration', sessionId, number: 2 }] },
    ]);
    assert.ok(!/unverified/.test(stream.text()), 'verified: a required check passed on the final tree');
    assert.match(stream.text(), /diff: 1 file changed, \+1 −0 {2}\n {2}M src\/sum\.js/);
    assert.deepEqual(chat.followups(metadata), [{ label: 'Review the changes', command: 'sessions', prompt: sessionId }]);
    // The same path as Run Prompt: the status bar item while it ran, and the notification at the end.
    assert.deepEqual(editor.statusItems, [{ folder: repo.split('/').at(-1), disposed: true }]);
    assert.match(editor.texts('info')[0]!, /^Codeloops finished in .* after 2 iterations/);

    // "Review the changes": the session's iterations with their verdicts, requirements and diff stat, each linked to its changes.
    const review = new FakeChatStream();
    const shown = await chat.handle({ command: 'sessions', prompt: sessionId }, review, new FakeCancelToken());
    assert.deepEqual(shown, { command: 'sessions', sessionId, status: 'success' });
    const [details] = review.parts;
    assert.ok(details?.kind === 'markdown');
    assert.deepEqual(details.commands, [COMMANDS.showIterationChanges], 'its links may run only the command they name');
    assert.match(details.text, /\*\*Iteration 1\*\*: CONTINUE · 1 file \+1 −0 · unmet: REQ3 \(\[changes\]\(command:codeloops\.showIterationChanges\?/);
    assert.match(details.text, /\*\*Iteration 2\*\*: DONE · 1 file \+1 −0/);
    assert.match(details.text, /\*\*Outcome\*\*: success · verified/);
    assert.deepEqual(review.buttons(), [{ command: COMMANDS.openViewer, title: 'Open Viewer', arguments: [sessionId] }]);
  });

  it('/status shows the running loop; a second /run there is refused; the chat’s stop button interrupts the loop and resuming is offered', async () => {
    configureScriptedAgent(suiteHome().configHome, { actor: [[{ print: 'slow' }, { sleep: 60_000 }]], critic: [[done()]] });
    const repo = createRepo({ files: { 'README.md': '# project\n' } });
    const { chat } = chatFor(repo, suiteHome().env);
    const stream = new FakeChatStream();
    const token = new FakeCancelToken();
    const running = chat.handle({ command: 'run', prompt: 'slow work' }, stream, token);
    await stream.shows((part) => part.kind === 'progress' && /actor/.test(part.text));

    const status = new FakeChatStream();
    await chat.handle({ command: 'status', prompt: '' }, status, new FakeCancelToken());
    assert.match(status.text(), new RegExp(`^\\*\\*${repo.split('/').at(-1)}\\*\\*: iteration 1 · actor`));
    assert.deepEqual(
      status.buttons().map((button) => button.title),
      ['Open Viewer', 'Interrupt'],
    );

    const second = new FakeChatStream();
    assert.deepEqual(await chat.handle({ command: 'run', prompt: 'again' }, second, new FakeCancelToken()), { command: 'run' });
    assert.match(second.text(), /^A loop already runs in .*: `\/status` shows where it is\./);

    token.cancel();
    const metadata = await running;
    assert.equal(metadata.status, 'interrupted');
    assert.match(stream.text(), /Interrupted after/);
    assert.deepEqual(chat.followups(metadata), [
      { label: 'Review the changes', command: 'sessions', prompt: metadata.sessionId },
      { label: 'Resume with more iterations', command: 'resume', prompt: `${metadata.sessionId} +${MORE_ITERATIONS}` },
    ]);
    const after = new FakeChatStream();
    await chat.handle({ command: 'status', prompt: '' }, after, new FakeCancelToken());
    assert.match(after.text(), /^No loop is running\./);
  });

  it('"Resume with more iterations" carries a session that used its iterations on, streamed like /run', async () => {
    configureScriptedAgent(suiteHome().configHome, {
      actor: [[{ write: { path: 'a.txt', content: 'a\n' } }], [{ write: { path: 'a.txt', content: 'a, better\n' } }]],
      critic: [[carryOnNaming('not yet')], [done('made a')]],
    });
    const repo = createRepo({ files: { 'README.md': '# project\n' } });
    const { chat } = chatFor(repo, suiteHome().env, { editorSettings: JSON.stringify({ max_iterations: 1 }) });
    const first = await chat.handle({ command: 'run', prompt: 'make a' }, new FakeChatStream(), new FakeCancelToken());
    assert.equal(first.status, 'max_iterations_reached');
    const resume = chat.followups(first).find((followup) => followup.label === 'Resume with more iterations')!;

    const stream = new FakeChatStream();
    const metadata = await chat.handle({ command: resume.command, prompt: resume.prompt }, stream, new FakeCancelToken());
    assert.equal(metadata.status, 'success', stream.text());
    assert.notEqual(metadata.sessionId, first.sessionId, 'a resume is a session of its own');
    assert.match(stream.text(), /#### ── Iteration 2 ──/);
    assert.ok(!/Iteration 1 ──/.test(stream.text()), 'only what this run did');
    assert.match(stream.text(), /✓ Done after 2 iterations \(.*\), unverified: no required check passed/);
  });

  it('/resume and /sessions say what is wrong with what was asked: no session, an unknown one', async () => {
    const repo = createRepo({ files: { 'README.md': '# project\n' } });
    const { chat } = chatFor(repo, suiteHome().env);
    const usage = new FakeChatStream();
    await chat.handle({ command: 'resume', prompt: '' }, usage, new FakeCancelToken());
    assert.match(usage.text(), /^Name the session to carry on/);
    const unknown = new FakeChatStream();
    assert.deepEqual(await chat.handle({ command: 'resume', prompt: 'no-such-session' }, unknown, new FakeCancelToken()), { command: 'resume' });
    assert.match(unknown.text(), /^\*\*No session "no-such-session" in /);
  });

  it('/sessions lists the recent sessions, each a link that opens its viewer', async () => {
    configureScriptedAgent(suiteHome().configHome, { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done('made a')]] });
    const repo = createRepo({ files: { 'README.md': '# project\n' } });
    const { chat } = chatFor(repo, suiteHome().env);
    const ran = await chat.handle({ command: 'run', prompt: 'make a' }, new FakeChatStream(), new FakeCancelToken());
    const stream = new FakeChatStream();
    await chat.handle({ command: 'sessions', prompt: '' }, stream, new FakeCancelToken());
    const [list] = stream.parts;
    assert.ok(list?.kind === 'markdown');
    assert.deepEqual(list.commands, [COMMANDS.openViewer]);
    const link = `[${ran.sessionId!.replace(/_/g, '\\_')}](command:codeloops.openViewer?${encodeURIComponent(JSON.stringify([ran.sessionId]))})`;
    assert.ok(list.text.split('\n')[0]!.startsWith(`- ${link} · ${repo.split('/').at(-1)} · success · 1 iteration · `), list.text);
    assert.match(list.text.split('\n')[0]!, /: make a$/);
  });

  it('runs no loop in an untrusted workspace: the response says why and offers to manage trust; the tool answers project_untrusted', async () => {
    configureScriptedAgent(suiteHome().configHome, { actor: [[{ write: { path: 'a.txt', content: 'a\n' } }]], critic: [[done()]] });
    const repo = createRepo({ files: { 'README.md': '# project\n' } });
    const { chat, tools, store } = chatFor(repo, suiteHome().env, { trusted: false });
    const before = (await store.list()).length;
    const stream = new FakeChatStream();
    assert.deepEqual(await chat.handle({ command: 'run', prompt: 'make a' }, stream, new FakeCancelToken()), { command: 'run' });
    assert.match(stream.text(), /^Codeloops does not run loops in an untrusted workspace/);
    assert.deepEqual(stream.buttons(), [{ command: 'workbench.trust.manage', title: 'Manage Workspace Trust' }]);
    const answer = JSON.parse(await tools.runLoop({ task: 'make a' }, new FakeCancelToken()));
    assert.equal(answer.failure.code, 'project_untrusted');
    assert.equal((await tools.prepareRunLoop({ task: 'make a' })).confirmationMessages, undefined, 'nothing to confirm');
    assert.equal((await store.list()).length, before, 'no session started');
  });

  it('runs no loop on a platform loops cannot run on: the response and the tool say where they can', async () => {
    const refusal = unsupportedPlatformMessage('win32', 'editor')!;
    const { chat, tools } = chatFor(createRepo({ files: { 'README.md': '#\n' } }), suiteHome().env, { platformRefusal: refusal });
    const stream = new FakeChatStream();
    assert.deepEqual(await chat.handle({ command: 'run', prompt: 'make a' }, stream, new FakeCancelToken()), { command: 'run' });
    assert.match(stream.text(), /^Codeloops runs on Linux and macOS/);
    const answer = JSON.parse(await tools.runLoop({ task: 'make a' }, new FakeCancelToken()));
    assert.deepEqual(answer.failure, { code: 'platform_unsupported', message: refusal, details: {}, hint: null }, 'the one failure envelope');
    assert.deepEqual(answer.error, answer.failure, "0.x's error repeats it for a release");
  });

  it('without a command, says what it can do and offers to run what was asked', async () => {
    const { chat } = chatFor(createRepo({ files: { 'README.md': '#\n' } }), suiteHome().env);
    const stream = new FakeChatStream();
    const metadata = await chat.handle({ prompt: 'fix the flaky test' }, stream, new FakeCancelToken());
    assert.match(stream.text(), /`\/run <task>`/);
    assert.deepEqual(chat.followups(metadata), [{ label: 'Run this as a loop', command: 'run', prompt: 'fix the flaky test' }]);
  });

  it('codeloops_runLoop: the confirmation names the folder, the agents and the guards; the run answers its outcome, verification, summary and session; getSession and listSessions read it', async () => {
    const repo = checklistProject(suiteHome());
    const { tools, folder } = chatFor(repo, suiteHome().env);
    const input = { task: CHECKLIST_TASK, maxIterations: 3, checks: ['node --test test/sum.test.js'] };
    const prepared = await tools.prepareRunLoop(input);
    assert.equal(prepared.invocationMessage, `Running a Codeloops loop in ${folder.name}`);
    assert.equal(prepared.confirmationMessages?.title, 'Run a Codeloops loop?');
    const message = prepared.confirmationMessages!.message;
    assert.ok(message.startsWith(`In **${folder.name}** (${repo}): actor **`), message);
    assert.match(
      message,
      /critic \*\*.+\*\*; at most 3 iterations; checks: tests, node --test test\/sum\.test\.js; stops after 3 iterations without progress\./,
    );
    assert.match(message, /> Add product and difference beside sum/);

    const answer = JSON.parse(await tools.runLoop(input, new FakeCancelToken()));
    assert.deepEqual(
      { ...answer, session_id: typeof answer.session_id },
      {
        session_id: 'string',
        outcome: 'success',
        verification: 'verified',
        summary: 'All three functions are there.',
        iterations: 2,
        stop_reason: null,
        error: null,
        total_cost_usd: null,
      },
    );

    const session = JSON.parse(await tools.getSession({ sessionId: answer.session_id }));
    // The view every tool gives a model (sessionView/modelSession.ts): where its loop is, and its outcome once ended.
    assert.deepEqual([session.status, session.outcome], ['ended', 'success']);
    assert.deepEqual(
      session.iterations.map((iteration: Record<string, unknown>) => [
        iteration.iteration,
        iteration.decision,
        iteration.files_changed,
        iteration.insertions,
        iteration.failed_checks,
      ]),
      [
        [1, 'CONTINUE', 1, 1, []],
        [2, 'DONE', 1, 1, []],
      ],
    );
    assert.deepEqual(
      session.iterations[0].unmet_requirements.map(({ id, text, met }: Record<string, unknown>) => ({ id, text, met })),
      [{ id: 'REQ3', text: 'difference(a, b) returns a - b', met: false }],
    );
    assert.equal(session.end.verification, 'verified');
    assert.equal(session.max_iterations, 3, 'the iteration limit asked for');

    const listed = JSON.parse(await tools.listSessions({ limit: 1, project: folder.name }));
    assert.deepEqual(
      listed.sessions.map((entry: Record<string, unknown>) => [entry.id, entry.outcome, entry.running]),
      [[answer.session_id, 'success', false]],
    );
    assert.equal(listed.total, 1);
    assert.deepEqual(JSON.parse(await tools.listSessions({ project: 'no-such-project' })), { sessions: [], total: 0 });
    const unknown = JSON.parse(await tools.getSession({ sessionId: 'no-such-session' }));
    assert.equal(unknown.failure.code, 'session_not_found');
  });

  it('codeloops_runLoop refuses a second loop in a folder (loop_running) and stops its loop when the call is cancelled', async () => {
    configureScriptedAgent(suiteHome().configHome, { actor: [[{ print: 'slow' }, { sleep: 60_000 }]], critic: [[done()]] });
    const repo = createRepo({ files: { 'README.md': '# project\n' } });
    const { tools, runs } = chatFor(repo, suiteHome().env);
    const token = new FakeCancelToken();
    const running = tools.runLoop({ task: 'slow work' }, token);
    await new Promise<void>((resolve) => runs.onEvent(({ event }) => event.type === 'agent_event' && resolve()));
    assert.equal(JSON.parse(await tools.runLoop({ task: 'again' }, new FakeCancelToken())).failure.code, 'loop_running');
    token.cancel();
    assert.equal(JSON.parse(await running).outcome, 'interrupted');
  });

  it('offers `node dist/cli.js mcp` as the MCP server only when the setting asks: the bundled CLI run by the editor’s Node, a server an MCP client can list the tools of', async () => {
    const runner = { cliPath: cliPath(), nodePath: process.execPath, version: '1.2.3' };
    // By default the language model tools are VS Code's one tool set: the server's would be the same tools again, named otherwise.
    assert.deepEqual(offeredMcpServers(runner, false), []);
    const [definition, ...more] = offeredMcpServers(runner, true);
    assert.equal(more.length, 0);
    assert.ok(definition);
    assert.deepEqual(definition, {
      label: 'Codeloops',
      command: process.execPath,
      args: [cliPath(), 'mcp'],
      env: { ELECTRON_RUN_AS_NODE: '1' },
      version: '1.2.3',
    });
    // Started as VS Code starts a stdio server: the command, its arguments, the extension host's environment and the definition's.
    const client = new Client({ name: 'vscode-as-a-client', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: definition.command,
        args: definition.args,
        env: { ...(process.env as Record<string, string>), ...suiteHome().env, ...definition.env },
      }),
    );
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((tool) => tool.name).sort(), [
        'get_session',
        'interrupt_session',
        'list_sessions',
        'review_session',
        'run_loop',
        'wait_session',
      ]);
    } finally {
      await client.close();
    }
  });
});
