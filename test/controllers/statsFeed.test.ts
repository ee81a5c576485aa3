import assert from 'node:assert/strict';
import type { Event } from '../../src/extension/editorPorts.js';
import { StatsFeed, type StatsSource } from '../../src/extension/viewer/statsFeed.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { SessionWatcher } from '../../src/sessions/sessionWatcher.js';
import type { StatsHostMessage } from '../../src/sessionView/statsProtocol.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { EXPECTED_BY_AGENTS, EXPECTED_STATS, writeStatsSessions } from '../support/statsSessions.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** What the feed posted, and a way to wait for the next post. */
class PostedMessages {
  readonly all: StatsHostMessage[] = [];
  private waiting: Array<(message: StatsHostMessage) => void> = [];

  readonly post = (message: StatsHostMessage): void => {
    this.all.push(message);
    for (const resolve of this.waiting.splice(0)) resolve(message);
  };

  next(): Promise<StatsHostMessage> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
}

function figuresOf(message: StatsHostMessage | undefined) {
  assert.ok(message?.type === 'stats', JSON.stringify(message));
  return message;
}

/** The sessions folder's real watcher, as the Sessions view's `onDidChangeSessions` passes its changes on. */
function watched(dir: string): { changes: Event<unknown>; close(): void } {
  const watcher = new SessionWatcher(dir);
  return {
    changes: (listener) => ({ dispose: watcher.onChange(listener) }),
    close: () => watcher.close(),
  };
}

describe('the stats page’s feed (plain Node, the real session store and watcher)', () => {
  after(removeTempDirs);

  function sessions(): { dir: string; store: SessionStore } {
    const dir = tempDir('codeloops-stats-feed-');
    writeStatsSessions(dir);
    writeSession(dir, [startLine({ prompt: 'Elsewhere', timestamp: '2025-03-09T10:00:00Z', working_dir: '/w/blog' }), endLine({ iterations: 1 })]);
    return { dir, store: new SessionStore(dir) };
  }

  it('sends this folder’s project at first, each figure as worked out by hand; All projects and other filters on request', async () => {
    const { dir, store } = sessions();
    const posted = new PostedMessages();
    const source = watched(dir);
    const feed = new StatsFeed(store, posted.post, { project: 'shop', sessionsChanged: source.changes });
    try {
      await feed.send();
      const first = figuresOf(posted.all[0]);
      const { sessions_over_time: _days, by_project, by_agents, ...figures } = first.stats;
      assert.deepEqual(figures, EXPECTED_STATS, 'the blog’s session is not counted');
      assert.deepEqual(by_agents, EXPECTED_BY_AGENTS);
      assert.deepEqual(by_project, [{ project: 'shop', total: 8, success_rate: 3 / 8 }]);
      assert.deepEqual(first.filter, { project: 'shop' });
      assert.deepEqual(first.projects, ['blog', 'shop'], 'every project, for the menu');
      assert.equal(first.sessions.length, 8);
      assert.deepEqual(
        first.sessions.find((session) => session.timestamp === '2025-03-04T10:00:00Z'),
        {
          timestamp: '2025-03-04T10:00:00Z',
          outcome: 'success',
          iterations: 4,
        },
      );

      await feed.setFilter({});
      assert.equal(figuresOf(posted.all[1]).stats.total_sessions, 9, 'All projects');
      await feed.setFilter({ outcome: ['success'], project: 'shop' });
      const successes = figuresOf(posted.all[2]).stats;
      assert.deepEqual([successes.total_sessions, successes.total_tasks, successes.total_iterations], [3, 3, 7]);
      await feed.setFilter({ after: 'yesterday' });
      assert.deepEqual(posted.all[3], {
        type: 'error',
        message: 'The stats cannot be computed: after "yesterday" is not a date: use YYYY-MM-DD or an ISO 8601 datetime.',
      });
    } finally {
      feed.dispose();
      source.close();
    }
  });

  it('sends the figures again when a session is written, a CLI’s in a terminal as much as this window’s', async () => {
    const { dir, store } = sessions();
    const posted = new PostedMessages();
    const source = watched(dir);
    const feed = new StatsFeed(store, posted.post, { project: 'shop', sessionsChanged: source.changes, refreshDelayMs: 10 });
    try {
      await feed.send();
      assert.equal(figuresOf(posted.all[0]).stats.total_tasks, 6);
      const refreshed = posted.next();
      writeSession(dir, [
        startLine({ prompt: 'Another task', timestamp: '2025-03-10T10:00:00Z', working_dir: '/w/shop' }),
        iterationLine(1, { critic_decision: 'DONE', feedback: null }),
        endLine({ iterations: 1, duration_secs: 10, verification: 'verified' }),
      ]);
      const after = figuresOf(await refreshed).stats;
      assert.deepEqual([after.total_sessions, after.total_tasks, after.first_try_success_rate], [9, 7, 2 / 4]);
    } finally {
      feed.dispose();
      source.close();
    }
  });

  it('sends only the answer to the latest request: a slow one overtaken by a newer filter is dropped, and nothing after the page closed', async () => {
    const { store } = sessions();
    let releaseFirst: (() => void) | undefined;
    // The store as it is, except that the first count waits until the test lets it go: a slow disk.
    const slowFirst: StatsSource = {
      stats: async (filter) => {
        if (!releaseFirst) await new Promise<void>((resolve) => (releaseFirst = resolve));
        return store.stats(filter);
      },
      list: (filter) => store.list(filter),
    };
    const posted = new PostedMessages();
    const feed = new StatsFeed(slowFirst, posted.post, { project: 'shop', sessionsChanged: () => ({ dispose() {} }) });
    const slow = feed.send();
    await feed.setFilter({});
    releaseFirst!();
    await slow;
    assert.deepEqual(
      posted.all.map((message) => figuresOf(message).filter),
      [{}],
      'the folder’s figures, answered after All projects was asked for, are not sent',
    );
    feed.dispose();
    await feed.send();
    assert.equal(posted.all.length, 1);
  });
});
