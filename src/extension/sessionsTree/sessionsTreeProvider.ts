import * as vscode from 'vscode';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { SessionWatcher } from '../../sessions/sessionWatcher.js';
import { COMMANDS } from '../ids.js';
import type { RunningLoopsView } from '../runs/loopRegistry.js';
import type { SessionSummary } from '../../sessionFormat/sessionSummaries.js';
import { groupNode } from './candidateNodes.js';
import {
  fileNodes,
  iterationNodes,
  moreNode,
  SESSIONS_PAGE,
  sessionNode,
  type GroupNode,
  type SessionNode,
  type TooltipSpec,
  type TopNodeLook,
  type TreeNode,
} from './sessionsTreeModel.js';

/** Refreshes are gathered: a loop writes in bursts. */
const REFRESH_DELAY_MS = 150;

/**
 * The Sessions view: sessions newest first, each with its iterations, each with its
 * changed files. It follows the sessions folder (sessions written by a CLI in a
 * terminal appear too) and the loops this window runs.
 */
export class SessionsTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly sessionsChanged = new vscode.EventEmitter<void>();
  /** The sessions may have changed (the folder's watcher, a loop of this window, a command): the stats page counts again. */
  readonly onDidChangeSessions = this.sessionsChanged.event;
  private watcher: SessionWatcher | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private shown = SESSIONS_PAGE;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly library: SessionLibrary,
    private readonly runs: RunningLoopsView,
    private readonly log: vscode.LogOutputChannel,
    /** Candidate groups, whose candidates are shown under them rather than among the sessions. */
    private readonly groups: () => Promise<CandidateGroupEntry[]> = async () => [],
  ) {
    this.disposables.push(
      runs.onEvent(({ event }) => {
        if (event.type === 'run_started' || event.type === 'iteration_finished' || event.type === 'run_finished') this.refreshSoon();
      }),
      runs.onDidEnd(() => this.refreshSoon()),
    );
  }

  refresh(): void {
    this.changed.fire(undefined);
    this.sessionsChanged.fire();
  }

  private refreshSoon(): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => this.refresh(), REFRESH_DELAY_MS);
  }

  /** Watching starts with the first look at the view (or the stats page), not at activation. */
  ensureWatching(): void {
    if (this.watcher) return;
    try {
      this.watcher = new SessionWatcher(this.library.store.directory);
      this.watcher.onChange(({ id }) => {
        this.library.invalidate(id);
        this.refreshSoon();
      });
    } catch (error) {
      this.log.warn(`Cannot watch ${this.library.store.directory} for new sessions: ${(error as Error).message}`);
    }
  }

  showMore(): void {
    this.shown += SESSIONS_PAGE;
    this.refresh();
  }

  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    if (!node) {
      this.ensureWatching();
      const [summaries, groups] = await Promise.all([this.library.store.list(), this.groups().catch(() => [])]);
      const running = this.runs.runningSessionIds();
      const items = withGroups(summaries, groups, running);
      const byId = new Map(summaries.map((summary) => [summary.id, summary]));
      const nodes: TreeNode[] = await Promise.all(
        items.slice(0, this.shown).map(async (item) => {
          if (item.kind !== 'session') return item;
          const summary = byId.get(item.id)!;
          // A finished session the user has since commented on can be carried on.
          return summary.outcome === 'success' && (await this.library.hasOpenFeedback(summary.id)) ? sessionNode(summary, running.has(summary.id), true) : item;
        }),
      );
      if (items.length > this.shown) nodes.push(moreNode(items.length - this.shown));
      return nodes;
    }
    if (node.kind === 'group') return node.candidates;
    if (node.kind === 'session') {
      try {
        return iterationNodes(await this.library.view(node.id));
      } catch (error) {
        this.log.warn(`Cannot read session ${node.id}: ${(error as Error).message}`);
        return [];
      }
    }
    if (node.kind === 'iteration') return fileNodes(node.sessionId, node.number, node.files);
    return [];
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    switch (node.kind) {
      case 'session': {
        return iconItem(`session:${node.id}`, node, vscode.TreeItemCollapsibleState.Collapsed);
      }
      case 'iteration': {
        const collapsible = node.files.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
        return iconItem(`iteration:${node.sessionId}:${node.number}`, node, collapsible);
      }
      case 'file': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = `file:${node.sessionId}:${node.iteration}:${node.file.path}`;
        item.description = node.description;
        // A file-like URI gives the item the theme's icon for its type.
        item.resourceUri = vscode.Uri.from({ scheme: 'codeloops-file', path: `/${node.file.path}` });
        item.tooltip = tooltip(node.tooltip);
        item.contextValue = node.contextValue;
        item.command = { command: COMMANDS.showFileDiff, title: 'Show Diff', arguments: [node] };
        return item;
      }
      case 'group': {
        return iconItem(`group:${node.id}`, node, vscode.TreeItemCollapsibleState.Expanded);
      }
      case 'more': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = 'more';
        item.iconPath = new vscode.ThemeIcon('ellipsis');
        item.contextValue = node.contextValue;
        item.command = { command: COMMANDS.showMoreSessions, title: 'Show more' };
        return item;
      }
    }
  }

  dispose(): void {
    clearTimeout(this.refreshTimer);
    this.watcher?.close();
    this.changed.dispose();
    this.sessionsChanged.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }
}

/** A session, an iteration or a group: a node with its own icon, description, tooltip and menu. */
function iconItem(id: string, node: Omit<TopNodeLook, 'id'>, collapsible: vscode.TreeItemCollapsibleState): vscode.TreeItem {
  const item = new vscode.TreeItem(node.label, collapsible);
  item.id = id;
  item.description = node.description;
  item.iconPath = themeIcon(node.icon);
  item.tooltip = tooltip(node.tooltip);
  item.contextValue = node.contextValue;
  return item;
}

function themeIcon(spec: { id: string; color?: string }): vscode.ThemeIcon {
  return new vscode.ThemeIcon(spec.id, spec.color ? new vscode.ThemeColor(spec.color) : undefined);
}

/** Text as text; only the critic's feedback as Markdown, untrusted (no commands, no HTML). */
function tooltip(spec: TooltipSpec): vscode.MarkdownString {
  const markdown = new vscode.MarkdownString(undefined, false);
  markdown.isTrusted = false;
  markdown.supportHtml = false;
  markdown.appendMarkdown('**');
  markdown.appendText(spec.title);
  markdown.appendMarkdown('**\n\n');
  for (const line of spec.lines) {
    markdown.appendText(line);
    markdown.appendMarkdown('  \n');
  }
  if (spec.markdown) {
    markdown.appendMarkdown('\n---\n\n');
    markdown.appendMarkdown(spec.markdown);
  }
  return markdown;
}

/** A candidate group as the tree needs it: its facts, and its candidates' sessions by label. */
export interface CandidateGroupEntry {
  group: Parameters<typeof groupNode>[0];
  /** Session ids by candidate label (a candidate that has not started has none). */
  sessions: ReadonlyMap<string, string>;
  labels: readonly string[];
}

/** Sessions and groups, newest first; a group's candidates are under it, not among the sessions. */
function withGroups(summaries: readonly SessionSummary[], groups: readonly CandidateGroupEntry[], running: ReadonlySet<string>): (SessionNode | GroupNode)[] {
  const byId = new Map(summaries.map((summary) => [summary.id, summary]));
  const grouped = new Set<string>();
  const groupNodes = groups.map((entry) => {
    const candidates = entry.labels.map((label) => {
      const sessionId = entry.sessions.get(label);
      const summary = sessionId ? byId.get(sessionId) : undefined;
      if (sessionId) grouped.add(sessionId);
      const isRunning = Boolean(sessionId && (running.has(sessionId) || (summary?.outcome === null && entry.group.status === 'running')));
      return { label, summary, running: isRunning };
    });
    return groupNode(entry.group, candidates);
  });
  const sessions = summaries.filter((summary) => !grouped.has(summary.id)).map((summary) => sessionNode(summary, running.has(summary.id)));
  return [...sessions, ...groupNodes].sort(
    (a, b) =>
      Date.parse(b.kind === 'group' ? b.timestamp : byId.get(b.id)!.timestamp) - Date.parse(a.kind === 'group' ? a.timestamp : byId.get(a.id)!.timestamp),
  );
}
