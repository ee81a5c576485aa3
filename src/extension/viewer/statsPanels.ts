import type * as vscode from 'vscode';
import { statsStateSchema, statsViewerMessageSchema, type StatsHostMessage, type StatsViewerMessage } from '../../sessionView/statsProtocol.js';
import type { Event } from '../editorPorts.js';
import { STATS_PANEL_TYPE } from '../ids.js';
import { StatsFeed, type StatsSource } from './statsFeed.js';
import { PagePanels, WebviewPage } from './webviewPages.js';

/** There is one stats page: its filters say what it counts. */
const THE_PAGE = 'stats';
const TITLE = 'Codeloops Statistics';

/** Where the stats page's figures come from and when they change. */
export interface StatsSources {
  store: StatsSource;
  /** Fired whenever the sessions may have changed (the Sessions view's watcher, the loops of this window). */
  sessionsChanged: Event<unknown>;
  /** Starts watching the sessions folder, if nothing has yet: the page may open before the Sessions view is ever shown. */
  watchSessions(): void;
  /** The project the page counts at first: this workspace folder's. */
  defaultProject(): string | undefined;
}

/** The stats page (Codeloops: Show Statistics): restored when VS Code reloads, following the sessions as they change. */
export class StatsPanels extends PagePanels<StatsPanel> {
  constructor(extensionUri: vscode.Uri, sources: StatsSources) {
    super({
      viewType: STATS_PANEL_TYPE,
      title: TITLE,
      extensionUri,
      keyOf: (state) => (statsStateSchema.safeParse(state).success ? THE_PAGE : undefined),
      create: (panel) => {
        sources.watchSessions();
        return new StatsPanel(panel, extensionUri, sources);
      },
    });
  }

  show(): void {
    this.open(THE_PAGE);
  }
}

class StatsPanel extends WebviewPage<StatsViewerMessage, StatsHostMessage> {
  private readonly feed: StatsFeed;

  constructor(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, sources: StatsSources) {
    super(panel, extensionUri, { page: 'stats', title: TITLE, stylesheets: ['stats.css'] }, statsViewerMessageSchema);
    this.feed = new StatsFeed(sources.store, (message) => this.isReady && this.post(message), {
      project: sources.defaultProject(),
      sessionsChanged: sources.sessionsChanged,
    });
    this.disposables.push(this.feed);
  }

  protected onReady(): Promise<void> {
    return this.feed.send();
  }

  protected onMessage(message: Exclude<StatsViewerMessage, { type: 'ready' }>): Promise<void> {
    return this.feed.setFilter(message.filter);
  }
}
