import * as vscode from 'vscode';
import type { RunEvent } from '../../sessionFormat/runEvents.js';
import { LIVE_EVENT_TYPES, LiveReplay } from '../../sessionView/liveReplay.js';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { viewerMessageSchema, viewerStateSchema, type HostMessage, type ViewerMessage } from '../../sessionView/viewerProtocol.js';
import { previewLine } from '../../text/truncate.js';
import type { DiffOpener } from '../diffs/diffOpener.js';
import { COMMANDS, VIEWER_PANEL_TYPE } from '../ids.js';
import type { RunningLoopsView } from '../runs/loopRegistry.js';
import { PagePanels, WebviewPage } from './webviewPages.js';

/** Events after which the session file has grown: the viewer gets the whole session again. */
const RELOAD_EVENTS = new Set<RunEvent['type']>(['iteration_finished', 'run_finished', 'run_started', 'review_delivered']);

/** What a viewer can ask of the editor beyond data: files opened, a paused loop told to go on. */
export interface ViewerActions {
  diffs: DiffOpener;
  /** Opens a file of a session's repository at a line. */
  openLocation(sessionId: string, file: string, line: number | null): Promise<void>;
  /** Tells the session's loop, paused for review, to go on or to stop. */
  reviewControl(sessionId: string, action: 'continue' | 'stop'): Promise<void>;
  /** Accepts a protected change an iteration recorded, asking the user why. */
  acceptChange(sessionId: string, iteration: number, file: string): Promise<void>;
  /** Accepts one of the start's tests failing on the final code, asking the user why. */
  acceptTest(sessionId: string, test: string): Promise<void>;
}

/**
 * The session viewer panels: one per session, restored when VS Code reloads,
 * updated live while the session's loop runs.
 */
export class ViewerPanels extends PagePanels<SessionPanel> {
  constructor(extensionUri: vscode.Uri, library: SessionLibrary, runs: RunningLoopsView, actions: ViewerActions) {
    super({
      viewType: VIEWER_PANEL_TYPE,
      title: 'Codeloops session',
      extensionUri,
      keyOf: (state) => viewerStateSchema.safeParse(state).data?.sessionId,
      create: (panel, sessionId) => new SessionPanel(panel, extensionUri, sessionId, library, runs, actions),
    });
  }

  /** Called when a session file changed on disk (a CLI in a terminal, a deletion). */
  sessionChanged(sessionId: string): void {
    void this.page(sessionId)?.sendSession();
  }
}

class SessionPanel extends WebviewPage<ViewerMessage, HostMessage> {
  /** The current iteration's live events, replayed to a viewer that was not ready when they happened. */
  private readonly replay = new LiveReplay();

  constructor(
    panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly sessionId: string,
    private readonly library: SessionLibrary,
    private readonly runs: RunningLoopsView,
    private readonly actions: ViewerActions,
  ) {
    super(panel, extensionUri, { page: 'session', title: 'Codeloops session' }, viewerMessageSchema);
    this.disposables.push(runs.onEvent(({ sessionId: from, event }) => from === sessionId && this.onRunEvent(event)));
    void this.library.view(sessionId).then(
      (view) => this.showPrompt(view.start.prompt),
      () => undefined, // the page says why when it loads
    );
  }

  private showPrompt(prompt: string): void {
    this.showTitle(`Codeloops: ${previewLine(prompt, 40)}`);
  }

  /** An event of this session's loop. */
  private onRunEvent(event: RunEvent): void {
    this.replay.add(event);
    // The end too, so the viewer's live panel goes at once.
    if (this.isReady && (LIVE_EVENT_TYPES.has(event.type) || event.type === 'run_finished')) this.post({ type: 'live', event });
    if (this.isReady && RELOAD_EVENTS.has(event.type)) void this.sendSession();
  }

  protected async onReady(): Promise<void> {
    await this.sendSession();
    for (const event of this.replay.events()) this.post({ type: 'live', event });
  }

  protected async onMessage(message: Exclude<ViewerMessage, { type: 'ready' }>): Promise<void> {
    switch (message.type) {
      case 'requestIteration': {
        const detail = await this.library.detail(this.sessionId, message.iteration);
        if (detail) this.post({ type: 'iterationDetail', detail });
        break;
      }
      case 'resume':
        await vscode.commands.executeCommand(COMMANDS.resumeSession, this.sessionId);
        break;
      case 'openDiff':
        await this.openDiff(message.iteration, message.path);
        break;
      case 'openLocation':
        await this.actions.openLocation(this.sessionId, message.file, message.line);
        break;
      case 'reviewControl':
        await this.actions.reviewControl(this.sessionId, message.action);
        break;
      case 'acceptChange':
        await this.actions.acceptChange(this.sessionId, message.iteration, message.file);
        break;
      case 'acceptTest':
        await this.actions.acceptTest(this.sessionId, message.test);
        break;
    }
  }

  /** An iteration's changes in the diff editor: all its files, or one of them. */
  private async openDiff(iteration: number, path: string | undefined): Promise<void> {
    if (!path) return this.actions.diffs.openIteration(this.sessionId, iteration);
    const view = await this.library.view(this.sessionId);
    const file = view.iterations.find((it) => it.iteration_number === iteration)?.files.find((candidate) => candidate.path === path);
    if (file) await this.actions.diffs.openFile(this.sessionId, iteration, file);
  }

  async sendSession(): Promise<void> {
    if (!this.isReady) return;
    try {
      const view = await this.library.view(this.sessionId);
      this.showPrompt(view.start.prompt);
      // A session with an end is not running, whatever the controller has not yet noticed.
      const running = view.end === null && this.runs.runningSessionIds().has(this.sessionId);
      this.post({
        type: 'session',
        view,
        running,
        capabilities: { openDiff: true, resume: true, openLocation: true, reviewControl: true, acceptChange: true },
      });
    } catch (error) {
      this.post({ type: 'error', message: `This session cannot be shown: ${(error as Error).message}` });
    }
  }
}
