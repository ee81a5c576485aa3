import assert from 'node:assert/strict';
import { statsMessage } from '../../src/extension/viewer/statsFeed.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import type { StatsHostMessage, StatsState, StatsViewerMessage } from '../../src/sessionView/statsProtocol.js';
import { StatsApp, type StatsTransport } from '../../webview-ui/statsApp.js';
import { installDom } from '../support/dom.js';
import { endLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { EXPECTED_AGENT_ROWS, EXPECTED_TILES, writeStatsSessions } from '../support/statsSessions.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** The page's side of the webview: what it sent, what it saved, and a way to post it the host's messages. */
class PageHost implements StatsTransport {
  readonly sent: StatsViewerMessage[] = [];
  saved: unknown;
  private listener: ((message: unknown) => void) | undefined;

  constructor(private readonly restored?: StatsState) {}

  send(message: StatsViewerMessage): void {
    this.sent.push(message);
  }
  onMessage(listener: (message: unknown) => void): void {
    this.listener = listener;
  }
  loadState(): unknown {
    return this.restored;
  }
  saveState(state: StatsState): void {
    this.saved = state;
  }
  post(message: StatsHostMessage | Record<string, unknown>): void {
    this.listener!(JSON.parse(JSON.stringify(message)));
  }
}

/** Every tile as [its group's class, its label, what it shows]. */
function tiles(root: HTMLElement): Array<[string, string, string]> {
  return [...root.querySelectorAll('.stats-group')].flatMap((group) =>
    [...group.querySelectorAll('.tile')].map((tile): [string, string, string] => [
      [...group.classList].find((name) => name.startsWith('group-'))!,
      tile.querySelector('.tile-label')!.textContent!,
      tile.querySelector('.tile-value')!.textContent!,
    ]),
  );
}

describe('the editor’s stats page (rendered in a DOM, fed by the host’s real figures)', () => {
  let dom: ReturnType<typeof installDom>;
  let store: SessionStore;
  before(() => {
    const dir = tempDir('codeloops-stats-page-');
    writeStatsSessions(dir);
    // Another project's session: the page counts this folder's at first.
    writeSession(dir, [startLine({ prompt: 'Elsewhere', timestamp: '2025-03-09T10:00:00Z', working_dir: '/w/blog' }), endLine({ iterations: 1 })]);
    store = new SessionStore(dir);
  });
  after(removeTempDirs);
  beforeEach(() => (dom = installDom()));
  afterEach(() => dom.remove());

  function open(restored?: StatsState): { root: HTMLElement; host: PageHost } {
    const root = document.createElement('div');
    document.body.appendChild(root);
    const host = new PageHost(restored);
    new StatsApp(root, host);
    return { root, host };
  }

  it('shows the figures grouped as the web page does, each as worked out by hand, with the pairs’ table and the charts', async () => {
    const { root, host } = open();
    assert.deepEqual(host.sent, [{ type: 'ready' }]);
    assert.equal(root.querySelector('.status')!.textContent, 'Loading stats…');
    host.post(await statsMessage(store, { project: 'shop' }));
    assert.deepEqual(tiles(root), EXPECTED_TILES);
    assert.deepEqual(
      [...root.querySelectorAll('.stats-group h2')].map((heading) => heading.textContent),
      ['Sessions', 'Tasks', 'The critic', 'Cost'],
    );
    assert.deepEqual(
      [...root.querySelectorAll('.agents-table tbody tr')].map((row) => [...row.children].map((cell) => cell.textContent)),
      EXPECTED_AGENT_ROWS,
    );
    for (const chart of ['chart-sessions', 'chart-success', 'chart-iterations', 'chart-projects']) {
      assert.equal(root.querySelectorAll(`.${chart} svg.chart`).length, 1, chart);
    }
    assert.equal(root.querySelectorAll('.chart-sessions rect.bar').length, 8, 'a bar a day, 1 to 8 March');
    assert.equal(root.querySelectorAll('.chart-iterations rect.bar').length, 4, 'S2c, the longest success, ended at iteration 4');
    assert.equal(root.querySelector('.status')!.textContent, '');
    assert.deepEqual(host.saved, { filter: { project: 'shop' } }, 'kept for a reload');
  });

  it('offers this folder’s project and every other one, and asks the host again when the user picks All projects', async () => {
    const { root, host } = open();
    host.post(await statsMessage(store, { project: 'shop' }));
    const project = root.querySelector<HTMLSelectElement>('select.filter-project')!;
    assert.deepEqual(
      [...project.options].map((option) => option.textContent),
      ['All projects', 'blog', 'shop'],
    );
    assert.equal(project.value, 'shop');
    project.value = '';
    project.dispatchEvent(new window.Event('change') as unknown as Event);
    assert.deepEqual(host.sent.at(-1), { type: 'filter', filter: {} });
    // The folder's figures, answered late, are not shown over the ones now asked for.
    host.post(await statsMessage(store, { project: 'shop', outcome: ['failed'] }));
    assert.equal(tiles(root)[0]![2], '8');
    host.post(await statsMessage(store, {}));
    assert.equal(tiles(root)[0]![2], '9', 'every project: the blog’s session too');
    const success = root.querySelector<HTMLInputElement>('input[data-outcome="success"]')!;
    success.checked = true;
    success.dispatchEvent(new window.Event('change') as unknown as Event);
    assert.deepEqual(host.sent.at(-1), { type: 'filter', filter: { outcome: ['success'] } });
  });

  it('asks for the filter it had after a reload, and says why when there are no figures', async () => {
    const { root, host } = open({ filter: { project: 'blog' } });
    assert.deepEqual(host.sent, [{ type: 'ready' }, { type: 'filter', filter: { project: 'blog' } }]);
    assert.equal(root.querySelector<HTMLSelectElement>('select.filter-project')!.value, 'blog', 'the filters show at once');
    host.post(await statsMessage(store, { project: 'shop' }));
    assert.equal(root.querySelectorAll('.tile').length, 0, 'the default project’s figures, asked before, are not the ones wanted');
    host.post(await statsMessage(store, { project: 'blog' }));
    assert.equal(tiles(root)[0]![2], '1');
    host.post({ type: 'error', message: 'The stats cannot be computed: disk full' });
    assert.equal(root.querySelector('.status.error')!.textContent, 'The stats cannot be computed: disk full');
    host.post({ type: 'stats', stats: '<img src=x onerror=alert(1)>' });
    assert.equal(root.querySelectorAll('img').length, 0, 'a message that is not one of the protocol’s is dropped');
  });
});
