import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { RunEvent } from '../../sessionFormat/runEvents.js';
import { LIVE_EVENT_TYPES, LiveReplay } from '../../sessionView/liveReplay.js';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { viewerMessageSchema, viewerStateSchema, type HostMessage } from '../../sessionView/viewerProtocol.js';
import { previewLine } from '../../text/truncate.js';
import type { DiffOpener } from '../diffs/diffOpener.js';
import { COMMANDS, VIEWER_PANEL_TYPE } from '../ids.js';
import type { RunningLoopsView } from '../runs/loopRegistry.js';

/** Events after which the session file has grown: the viewer gets the whole session again. */
const RELOAD_EVENTS = new Set<RunEvent['type']>(['iteration_finished', 'run_finished', 'run_started', 'review_delivered']);

/** What a viewer can ask of the editor beyond data: files opened, a paused loop told to go on. */
export interface ViewerActions {
  diffs: DiffOpener;
  /** Opens a file of a session's repository at a line. */
  openLocation(sessionId: string, file: string, line: number | null): Promise<void>;
  /** Tells the session's loop, paused for review, to go on or to stop. */
  reviewControl(sessionId: string, action: 'continue' | 'stop'): Promise<void>;
}

/**
 * The session viewer panels: one per session, restored when VS Code reloads
 * (WebviewPanelSerializer), updated live while the session's loop runs.
 */
export class ViewerPanels implements vscode.WebviewPanelSerializer, vscode.Disposable {
  private readonly panels = new Map<string, SessionPanel>();

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly library: SessionLibrary,
    private readonly runs: RunningLoopsView,
    private readonly actions: ViewerActions,
  ) {}

  /** Opens (or reveals) a session's viewer; `preserveFocus` for opens the user did not ask for. */
  open(sessionId: string, options: { preserveFocus?: boolean } = {}): void {
    const preserveFocus = options.preserveFocus ?? false;
    const existing = this.panels.get(sessionId);
    if (existing) {
      existing.panel.reveal(undefined, preserveFocus);
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      VIEWER_PANEL_TYPE,
      'Codeloops session',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus },
      viewerWebviewOptions(this.extensionUri),
    );
    this.adopt(panel, sessionId);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const parsed = viewerStateSchema.safeParse(state);
    if (!parsed.success) {
      panel.dispose(); // nothing to restore
      return;
    }
    panel.webview.options = viewerWebviewOptions(this.extensionUri);
    this.adopt(panel, parsed.data.sessionId);
  }

  /** Called when a session file changed on disk (a CLI in a terminal, a deletion). */
  sessionChanged(sessionId: string): void {
    void this.panels.get(sessionId)?.sendSession();
  }

  private adopt(panel: vscode.WebviewPanel, sessionId: string): void {
    const session = new SessionPanel(panel, sessionId, this.extensionUri, this.library, this.runs, this.actions);
    this.panels.set(sessionId, session);
    panel.onDidDispose(() => {
      this.panels.delete(sessionId);
      session.dispose();
    });
  }

  dispose(): void {
    for (const session of this.panels.values()) session.panel.dispose();
  }
}

/** How long a visible viewer may take to say it is ready before its page is loaded again, and how often. */
const READY_TIMEOUT_MS = 5_000;
const READY_RETRIES = 3;

class SessionPanel implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private ready = false;
  private disposed = false;
  private readyTimer: ReturnType<typeof setTimeout> | undefined;
  /** The current iteration's live events, replayed to a viewer that was not ready when they happened. */
  private readonly replay = new LiveReplay();

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly sessionId: string,
    extensionUri: vscode.Uri,
    private readonly library: SessionLibrary,
    private readonly runs: RunningLoopsView,
    private readonly actions: ViewerActions,
  ) {
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'codeloops.svg');
    this.disposables.push(
      panel.webview.onDidReceiveMessage((message: unknown) => void this.receive(message)),
      runs.onEvent(({ sessionId: from, event }) => from === sessionId && this.onRunEvent(event)),
    );
    this.render(extensionUri, READY_RETRIES);
    // The tab names its session from the start, not only once the page has loaded: a panel
    // opened or restored in the background does not load its page until it is shown.
    void this.library.view(sessionId).then(
      (view) => this.showTitle(view.start.prompt),
      () => undefined, // the page says why when it loads
    );
  }

  private showTitle(prompt: string): void {
    if (!this.disposed) this.panel.title = `Codeloops: ${previewLine(prompt, 40)}`;
  }

  /**
   * Loads the page; if a visible viewer has not said it is ready after a while, loads it
   * again. A webview opened while the workbench is busy (a loop starting, panels
   * moving) sometimes stays blank in VS Code for the web; a reload heals it.
   */
  private render(extensionUri: vscode.Uri, retries: number): void {
    this.panel.webview.html = viewerHtml(this.panel.webview, extensionUri);
    clearTimeout(this.readyTimer);
    if (retries === 0) return;
    this.readyTimer = setTimeout(() => {
      if (this.ready || this.disposed) return;
      if (this.panel.visible) this.render(extensionUri, retries - 1);
      else this.readyTimer = undefined; // a hidden webview loads when shown
    }, READY_TIMEOUT_MS);
  }

  /** An event of this session's loop. */
  private onRunEvent(event: RunEvent): void {
    this.replay.add(event);
    // The end too, so the viewer's live panel goes at once.
    if (this.ready && (LIVE_EVENT_TYPES.has(event.type) || event.type === 'run_finished')) this.post({ type: 'live', event });
    if (this.ready && RELOAD_EVENTS.has(event.type)) void this.sendSession();
  }

  private async receive(raw: unknown): Promise<void> {
    // The webview is an untrusted boundary: only well-formed messages are acted on.
    const parsed = viewerMessageSchema.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    try {
      switch (message.type) {
        case 'ready':
          this.ready = true;
          await this.sendSession();
          for (const event of this.replay.events()) this.post({ type: 'live', event });
          break;
        case 'requestIteration': {
          const detail = await this.library.detail(this.sessionId, message.iteration);
          if (detail) this.post({ type: 'iterationDetail', detail });
          break;
        }
        case 'resume':
          await vscode.commands.executeCommand(COMMANDS.resumeSession, this.sessionId);
          break;
        case 'openDiff':
          if (message.path) {
            const view = await this.library.view(this.sessionId);
            const file = view.iterations.find((it) => it.iteration_number === message.iteration)?.files.find((candidate) => candidate.path === message.path);
            if (file) await this.actions.diffs.openFile(this.sessionId, message.iteration, file);
          } else await this.actions.diffs.openIteration(this.sessionId, message.iteration);
          break;
        case 'openLocation':
          await this.actions.openLocation(this.sessionId, message.file, message.line);
          break;
        case 'reviewControl':
          await this.actions.reviewControl(this.sessionId, message.action);
          break;
      }
    } catch (error) {
      this.post({ type: 'error', message: (error as Error).message });
    }
  }

  async sendSession(): Promise<void> {
    if (!this.ready) return;
    try {
      const view = await this.library.view(this.sessionId);
      this.showTitle(view.start.prompt);
      // A session with an end is not running, whatever the controller has not yet noticed.
      const running = view.end === null && this.runs.runningSessionIds().has(this.sessionId);
      this.post({ type: 'session', view, running, capabilities: { openDiff: true, resume: true, openLocation: true, reviewControl: true } });
    } catch (error) {
      this.post({ type: 'error', message: `This session cannot be shown: ${(error as Error).message}` });
    }
  }

  private post(message: HostMessage): void {
    void this.panel.webview.postMessage(message);
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.readyTimer);
    for (const disposable of this.disposables) disposable.dispose();
  }
}

/** The options of every viewer page (a session, a candidate group's comparison). */
export function viewerWebviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return {
    enableScripts: true,
    // Only the viewer's bundle and the extension's images can be loaded.
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')],
    retainContextWhenHidden: false,
    enableFindWidget: true,
  };
}

/**
 * The viewer's page: a strict Content-Security-Policy with a fresh nonce per render,
 * no inline script, resources from the bundle folder only.
 */
export function viewerHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  page: { script: string; title: string } = { script: 'viewer.js', title: 'Codeloops session' },
): string {
  const nonce = randomBytes(16).toString('base64');
  const asset = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', name)).toString();
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset('codicon.css')}">
<link rel="stylesheet" href="${asset('viewer.css')}">
<title>${page.title}</title>
</head>
<body>
<div id="root"></div>
<script nonce="${nonce}" src="${asset(page.script)}"></script>
</body>
</html>`;
}
