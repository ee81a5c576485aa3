import * as vscode from 'vscode';
import { candidateChange, compareGroup, type ComparisonSources } from '../../candidates/comparison.js';
import { readGroup } from '../../candidates/groupRecord.js';
import { openRepository } from '../../git/repository.js';
import { groupsDir } from '../../sessionFormat/candidateGroupFiles.js';
import type { GroupComparison } from '../../sessionFormat/candidateGroups.js';
import {
  comparisonStateSchema,
  comparisonViewerMessageSchema,
  type ComparisonHostMessage,
  type ComparisonViewerMessage,
} from '../../sessionView/comparisonProtocol.js';
import { previewLine } from '../../text/truncate.js';
import type { Disposable, Event } from '../editorPorts.js';
import { COMMANDS, COMPARISON_PANEL_TYPE } from '../ids.js';
import type { RunningLoopsView } from '../runs/loopRegistry.js';
import { PagePanels, WebviewPage } from './webviewPages.js';

/** Updates are gathered: candidates report in bursts. */
const REFRESH_DELAY_MS = 250;
/** How much of a candidate's diff the page gets; the snapshots keep all of it. */
const MAX_DIFF_CHARS = 2_000_000;

/** Run events after which a comparison's figures change. */
const REFRESH_EVENTS = new Set(['run_started', 'phase', 'iteration_finished', 'run_finished']);

/**
 * The comparison pages of candidate groups: one per group, restored when VS Code
 * reloads, following the group live while it runs.
 */
export class ComparisonPanels extends PagePanels<ComparisonPanel> {
  private readonly following: Disposable[];

  constructor(extensionUri: vscode.Uri, sources: ComparisonSources, runs: RunningLoopsView, groupEvents: Event<unknown>) {
    super({
      viewType: COMPARISON_PANEL_TYPE,
      title: 'Codeloops candidates',
      extensionUri,
      keyOf: (state) => comparisonStateSchema.safeParse(state).data?.groupId,
      create: (panel, groupId) => new ComparisonPanel(panel, extensionUri, groupId, sources),
    });
    this.following = [
      runs.onEvent(({ event }) => REFRESH_EVENTS.has(event.type) && this.refresh()),
      groupEvents(() => this.refresh()),
      runs.onDidEnd(() => this.refresh()),
    ];
  }

  /** Every page shows its group again (after an apply, a change on disk). */
  refresh(): void {
    for (const page of this.allPages()) page.refreshSoon();
  }

  override dispose(): void {
    super.dispose();
    for (const disposable of this.following) disposable.dispose();
  }
}

class ComparisonPanel extends WebviewPage<ComparisonViewerMessage, ComparisonHostMessage> {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly groupId: string,
    private readonly sources: ComparisonSources,
  ) {
    super(panel, extensionUri, { page: 'comparison', title: 'Codeloops candidates' }, comparisonViewerMessageSchema);
    void readGroup(groupsDir(), groupId).then(
      (state) => this.showTitle(titleOf(state.started.prompt)),
      () => undefined, // the page says why when it loads
    );
  }

  refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.send(), REFRESH_DELAY_MS);
  }

  private async comparison(): Promise<GroupComparison> {
    return compareGroup(await readGroup(groupsDir(), this.groupId), this.sources);
  }

  private async send(): Promise<void> {
    if (!this.isReady) return;
    try {
      const comparison = await this.comparison();
      this.showTitle(titleOf(comparison.prompt));
      this.post({ type: 'comparison', comparison, capabilities: { apply: true } });
    } catch (error) {
      this.post({ type: 'error', message: `This candidate group cannot be shown: ${(error as Error).message}` });
    }
  }

  protected onReady(): Promise<void> {
    return this.send();
  }

  protected async onMessage(message: Exclude<ComparisonViewerMessage, { type: 'ready' }>): Promise<void> {
    const comparison = await this.comparison();
    const row = comparison.candidates.find((candidate) => candidate.label === ('label' in message ? message.label : undefined));
    switch (message.type) {
      case 'requestDiff': {
        if (!row?.session_id) return;
        const change = await candidateChange(await openRepository(comparison.working_dir), row.session_id, MAX_DIFF_CHARS);
        this.post({ type: 'candidateDiff', label: row.label, diff: change?.diff ?? '', truncated: change?.diffTruncated ?? false });
        break;
      }
      case 'apply':
        if (row?.session_id) await vscode.commands.executeCommand(COMMANDS.applyCandidate, row.session_id);
        await this.send();
        break;
      case 'openSession':
        // Only a session of this group.
        if (comparison.candidates.some((candidate) => candidate.session_id === message.sessionId))
          await vscode.commands.executeCommand(COMMANDS.openViewer, message.sessionId);
        break;
    }
  }

  override dispose(): void {
    super.dispose();
    clearTimeout(this.timer);
  }
}

function titleOf(prompt: string): string {
  return `Candidates: ${previewLine(prompt, 40)}`;
}
