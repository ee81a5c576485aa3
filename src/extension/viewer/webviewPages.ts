import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';

/**
 * The editor's side of every Codeloops webview page (a session's viewer, a candidate
 * group's comparison, the stats): `PagePanels` opens one panel per key and restores them when
 * VS Code reloads; `WebviewPage` is one panel's page. What differs between pages is
 * only what they show and what they answer.
 */

/** Which page the webview bundle (`dist/webview/webview.js`, one for every page) shows, and the title it loads with. */
export interface PageBundle {
  page: 'session' | 'comparison' | 'stats';
  title: string;
  /** Stylesheets of the bundle folder the page needs beside `viewer.css`. */
  stylesheets?: readonly string[];
}

/** What checks a page's messages on arrival: one of the protocol's zod schemas. */
export interface MessageSchema<T> {
  safeParse(raw: unknown): { success: true; data: T } | { success: false };
}

/** How long a visible page may take to say it is ready before it is loaded again, and how often. */
const READY_TIMEOUT_MS = 5_000;
const READY_RETRIES = 3;

/**
 * One panel's page: it loads the page (again, when a visible one does not say it is
 * ready: a webview opened while the workbench is busy sometimes stays blank in VS Code
 * for the web, and a reload heals it), waits for its `ready`, checks every message
 * against the protocol (the webview is an untrusted boundary: only well-formed
 * messages are acted on), answers a message that fails with an `error` the page
 * shows, and lets everything go when the panel closes.
 */
export abstract class WebviewPage<Incoming extends { type: string }, Outgoing extends { type: string }> implements vscode.Disposable {
  private ready = false;
  private disposed = false;
  private readyTimer: ReturnType<typeof setTimeout> | undefined;
  /** Let go when the page is. */
  protected readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly panel: vscode.WebviewPanel,
    private readonly extensionUri: vscode.Uri,
    private readonly bundle: PageBundle,
    private readonly schema: MessageSchema<Incoming>,
  ) {
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'codeloops.svg');
    this.disposables.push(panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)));
    this.load(READY_RETRIES);
  }

  /** The page has said it listens: until then nothing is posted. */
  protected get isReady(): boolean {
    return this.ready && !this.disposed;
  }

  /** The page listens now: send it what it shows. */
  protected abstract onReady(): Promise<void>;

  /** A checked message of the page other than `ready`. */
  protected abstract onMessage(message: Exclude<Incoming, { type: 'ready' }>): Promise<void>;

  protected post(message: Outgoing | { type: 'error'; message: string }): void {
    if (!this.disposed) void this.panel.webview.postMessage(message);
  }

  /** The tab's title, from the start: a panel opened or restored in the background does not load its page until it is shown. */
  protected showTitle(title: string): void {
    if (!this.disposed) this.panel.title = title;
  }

  private load(retries: number): void {
    this.panel.webview.html = pageHtml(this.panel.webview, this.extensionUri, this.bundle);
    clearTimeout(this.readyTimer);
    if (retries === 0) return;
    this.readyTimer = setTimeout(() => {
      if (this.ready || this.disposed) return;
      if (this.panel.visible) this.load(retries - 1);
      else this.readyTimer = undefined; // a hidden webview loads when shown
    }, READY_TIMEOUT_MS);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = this.schema.safeParse(raw);
    if (!parsed.success) return;
    const message = parsed.data;
    try {
      if (message.type === 'ready') {
        this.ready = true;
        await this.onReady();
      } else await this.onMessage(message as Exclude<Incoming, { type: 'ready' }>);
    } catch (error) {
      this.post({ type: 'error', message: (error as Error).message });
    }
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.readyTimer);
    for (const disposable of this.disposables) disposable.dispose();
  }
}

/**
 * The panels of one kind of page, one per key (a session, a group): opened or
 * revealed on demand, restored when VS Code reloads (WebviewPanelSerializer) from the
 * state the page saved.
 */
export class PagePanels<P extends WebviewPage<{ type: string }, { type: string }>> implements vscode.WebviewPanelSerializer, vscode.Disposable {
  private readonly pages = new Map<string, P>();

  constructor(
    private readonly kind: {
      viewType: string;
      title: string;
      extensionUri: vscode.Uri;
      /** The key a page saved in its state, or undefined when there is nothing to restore. */
      keyOf: (state: unknown) => string | undefined;
      create: (panel: vscode.WebviewPanel, key: string) => P;
    },
  ) {}

  /** Opens (or reveals) the page of a key; `preserveFocus` for opens the user did not ask for. */
  open(key: string, options: { preserveFocus?: boolean } = {}): void {
    const preserveFocus = options.preserveFocus ?? false;
    const existing = this.pages.get(key);
    if (existing) {
      existing.panel.reveal(undefined, preserveFocus);
      return;
    }
    const { viewType, title, extensionUri } = this.kind;
    this.adopt(vscode.window.createWebviewPanel(viewType, title, { viewColumn: vscode.ViewColumn.Active, preserveFocus }, webviewOptions(extensionUri)), key);
  }

  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const key = this.kind.keyOf(state);
    if (key === undefined) {
      panel.dispose(); // nothing to restore
      return;
    }
    panel.webview.options = webviewOptions(this.kind.extensionUri);
    this.adopt(panel, key);
  }

  protected page(key: string): P | undefined {
    return this.pages.get(key);
  }

  protected allPages(): P[] {
    return [...this.pages.values()];
  }

  private adopt(panel: vscode.WebviewPanel, key: string): void {
    const page = this.kind.create(panel, key);
    this.pages.set(key, page);
    panel.onDidDispose(() => {
      this.pages.delete(key);
      page.dispose();
    });
  }

  dispose(): void {
    for (const page of this.pages.values()) page.panel.dispose();
  }
}

/** The options of every page: scripts on, and only the bundle's folder and the extension's images to load from. */
function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')],
    retainContextWhenHidden: false,
    enableFindWidget: true,
  };
}

/**
 * A page: a strict Content-Security-Policy with a fresh nonce per load, no inline
 * script, resources from the bundle folder only.
 */
function pageHtml(webview: vscode.Webview, extensionUri: vscode.Uri, bundle: PageBundle): string {
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
${(bundle.stylesheets ?? []).map((name) => `<link rel="stylesheet" href="${asset(name)}">\n`).join('')}<title>${bundle.title}</title>
</head>
<body>
<div id="root" data-page="${bundle.page}"></div>
<script nonce="${nonce}" src="${asset('webview.js')}"></script>
</body>
</html>`;
}
