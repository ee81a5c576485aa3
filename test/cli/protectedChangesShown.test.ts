import assert from 'node:assert/strict';
import type { TimelineEntry } from '../../src/sessionFormat/timelineEntries.js';
import { runCli } from '../support/cliProcess.js';
import { isolateHome, removeTempDirs, type IsolatedHome } from '../support/testEnvironment.js';
import { WEAKENED_FILE, weakenedSession } from '../support/weakenedSession.js';

/**
 * A protected change, as the terminal shows a session afterwards (`sessions show`,
 * `sessions replay`, their JSON), on a session the built CLI made: its actor marked
 * the failing test skipped and the critic's DONE was refused for it.
 */
describe('protected changes in sessions show and sessions replay (the built CLI)', () => {
  let home: IsolatedHome;
  let repo: string;
  let sessionId: string;
  const cli = (args: string[]) => runCli(args, { cwd: repo, env: home.env });
  before(async () => {
    home = isolateHome();
    home.restore(); // only the CLI's processes use it
    ({ repo, sessionId } = await weakenedSession(home));
  });
  after(removeTempDirs);

  it('sessions show names the change that refused DONE and where it stands, accepted or not; --json keeps the line’s protected_changes', async () => {
    const shown = await cli(['sessions', 'show', sessionId]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /Iteration 1 {2}CONTINUE[\s\S]*\n {2}the critic said DONE; refused: what the checks rest on was weakened \(test\/sum\.test\.js: a test skipped\)\n/,
    );
    assert.doesNotMatch(shown.stdout, /check.* fails?/, 'no check failed');
    assert.match(shown.stdout, /\n {2}protected: test\/sum\.test\.js: a test skipped \(.+\); refuses DONE until restored or accepted\n/);

    const json = JSON.parse((await cli(['sessions', 'show', sessionId, '--json'])).stdout) as { iterations: Record<string, unknown>[] };
    assert.equal(json.iterations[0]!.critic_verdict, 'DONE');
    assert.deepEqual(
      (json.iterations[0]!.protected_changes as { file: string; kind: string }[]).map((change) => [change.file, change.kind]),
      [[WEAKENED_FILE, 'skip_added']],
    );

    const accepted = await cli(['accept', sessionId, '--iteration', '1', '--file', WEAKENED_FILE, '--reason', 'flaky, tracked in #12']);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.match(
      (await cli(['sessions', 'show', sessionId])).stdout,
      /protected: test\/sum\.test\.js: a test skipped \(.+\); accepted by you: flaky, tracked in #12\n/,
    );
    assert.equal((await cli(['accept', '--undo', sessionId, '--file', WEAKENED_FILE])).code, 0);
    assert.match((await cli(['sessions', 'show', sessionId])).stdout, /refuses DONE until restored or accepted/);
  });

  it('sessions replay tells the protected change and the refused DONE, in text and in JSON', async () => {
    const text = await cli(['sessions', 'replay', sessionId]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /protected: test\/sum\.test\.js: a test skipped \(.+\); refuses DONE until restored or accepted/);
    assert.match(text.stdout, /DONE refused: what the checks rest on was weakened \(test\/sum\.test\.js: a test skipped\)/);

    const json = await cli(['sessions', 'replay', sessionId, '--json']);
    const entries = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as TimelineEntry);
    const change = entries.find((entry) => entry.kind === 'protected_change');
    assert.ok(change?.kind === 'protected_change', json.stdout);
    assert.deepEqual([change.iteration, change.change.file, change.change.kind, change.status], [1, WEAKENED_FILE, 'skip_added', 'weakening']);
    const refused = entries.find((entry) => entry.kind === 'done_refused');
    assert.ok(refused?.kind === 'done_refused');
    assert.deepEqual([refused.failed_checks, refused.protected_changes?.map((each) => each.file)], [[], [WEAKENED_FILE]]);
  });
});
