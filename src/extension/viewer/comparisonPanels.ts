import * as vscode from 'vscode';
import { candidateChange, compareGroup, type ComparisonSources } from '../../candidates/comparison.js';
import { readGroup } from '../../candidates/groupRecord.js';
import { openRepository } from '../../git/repository.js';
import { groupsDir } from '../../sessionFormat/candidateGroupFiles.js';
import { comparisonStateSchema, comparisonViewerMessageSchema, type ComparisonHostMessage } from '../../sessionView/comparisonProtocol.js';
import { previewLine } from '../../text/truncate.js';
import type { Event } from '../editorPorts.js';
import { COMMANDS, COMPARISON_PANEL_TYPE } from '../ids.js';
import type { RunningLoopsView } from '../runs/loopRegistry.js';
import { viewerHtml, viewerWebviewOptions } from './viewerPanels.js';

/** Updates are gathered: candidates report in bursts. */
const REFRESH_DELAY_MS = 250;
/** How much of a candidate's diff the page gets; the snapshots keep all of it. */
const MAX_DIFF_CHARS = 2_000_000;

/**
 * The comparison pages of candidate groups: one per group, restored when VS Code
 * reloads, following the group live while it runs.
 */
export class ComparisonPanels implements vscode.WebviewPanelSerializer, vscode.Disposable {
  private readonly panels = new Map<string, ComparisonPanel>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    /** Where the candidates' sessions and records are read. */
    private readonly sources: ComparisonSources,
    runs: RunningLoopsView,
    groupEvents: Event<unknown>,
  ) {
    const refreshAll = () => this.refresh();
    this.disposables.push(
      runs.onEvent(({ event }) => {
        if (event.type === 'run_started' || event.type === 'phase' || event.type === 'iteration_finished' || event.type === 'run_finished') refreshAll();
      }),
      groupEvents(refreshAll),
      runs.onDidEnd(refreshAll),
    );
  }

  open(groupId: string, options: { preserveFocus?: boolean } = {}): void {
    const existing = this.panels.get(groupId);
    if (existing) {
      existing.panel.reveal(undefined, options.preserveFocus ?? false);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      COMPARISON_PANEL_TYPE,
      'Codeloops candidates',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: options.preserveFocus ?? false },
      viewerWebviewOptions(this.extensionUri),
    );
    this.adopt(panel, groupId);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const parsed = comparisonStateSchema.safeParse(state);
    if (!parsed.success) {
      panel.dispose();
      return;
    }
    panel.webview.options = viewerWebviewOptions(this.extensionUri);
    this.adopt(panel, parsed.data.groupId);
  }

  /** Every page shows its group again (after an apply, a change on disk). */
  refresh(): void {
    for (const panel of this.panels.values()) panel.refreshSoon();
  }

  private adopt(panel: vscode.WebviewPanel, groupId: string): void {
    const page = new ComparisonPanel(panel, groupId, this.extensionUri, this.sources);
    this.panels.set(groupId, page);
    panel.onDidDispose(() => {
      this.panels.delete(groupId);
      page.dispose();
    });
  }

  dispose(): void {
    for (const page of this.panels.values()) page.panel.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }
}

class ComparisonPanel implements vscode.Disposable {
  private ready = false;
  private disposed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly groupId: string,
    extensionUri: vscode.Uri,
    private readonly sources: ComparisonSources,
  ) {
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'codeloops.svg');
    panel.webview.html = viewerHtml(panel.webview, extensionUri, { script: 'comparison.js', title: 'Codeloops candidates' });
    this.disposables.push(panel.webview.onDidReceiveMessage((message: unknown) => void this.receive(message)));
    // The tab names its task from the start: a page opened in the background loads only when shown.
    void readGroup(groupsDir(), groupId).then(
      (state) => {
        if (!this.disposed) panel.title = titleOf(state.started.prompt);
      },
      () => undefined, // the page says why when it loads
    );
  }

  refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.send(), REFRESH_DELAY_MS);
  }

  private async comparison() {
    return compareGroup(await readGroup(groupsDir(), this.groupId), this.sources);
  }

  private async send(): Promise<void> {
    if (!this.ready || this.disposed) return;
    try {
      const comparison = await this.comparison();
      this.panel.title = titleOf(comparison.prompt);
      this.post({ type: 'comparison', comparison, capabilities: { apply: true } });
    } catch (error) {
      this.post({ type: 'error', message: `This candidate group cannot be shown: ${(error as Error).message}` });
    }
  }

  private async receive(raw: unknown): Promise<void> {
    // The webview is an untrusted boundary: only well-formed messages are acted on.
    const parsed = comparisonViewerMessageSchema.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    try {
      switch (message.type) {
        case 'ready':
          this.ready = true;
          await this.send();
          break;
        case 'requestDiff': {
          const comparison = await this.comparison();
          const row = comparison.candidates.find((candidate) => candidate.label === message.label);
          if (!row?.session_id) return;
          const change = await candidateChange(await openRepository(comparison.working_dir), row.session_id, MAX_DIFF_CHARS);
          this.post({ type: 'candidateDiff', label: row.label, diff: change?.diff ?? '', truncated: change?.diffTruncated ?? false });
          break;
        }
        case 'apply': {
          const row = (await this.comparison()).candidates.find((candidate) => candidate.label === message.label);
          if (row?.session_id) await vscode.commands.executeCommand(COMMANDS.applyCandidate, row.session_id);
          await this.send();
          break;
        }
        case 'openSession':
          // Only a session of this group.
          if ((await this.comparison()).candidates.some((candidate) => candidate.session_id === message.sessionId))
            await vscode.commands.executeCommand(COMMANDS.openViewer, message.sessionId);
          break;
      }
    } catch (error) {
      this.post({ type: 'error', message: (error as Error).message });
    }
  }

  private post(message: ComparisonHostMessage): void {
    void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    for (const disposable of this.disposables) disposable.dispose();
  }
}

function titleOf(prompt: string): string {
  return `Candidates: ${previewLine(prompt, 40)}`;
}
