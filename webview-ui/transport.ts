import type { ViewerMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';

/**
 * How the viewer talks to its host: postMessage in the editor's webview, HTTP and
 * Server-Sent Events in the browser. The viewer itself does not know which. What
 * arrives is `unknown` until the viewer has checked it against the protocol's
 * schemas (`viewerProtocol.ts`): one check, whatever the host.
 */
export interface Transport {
  send(message: ViewerMessage): void;
  onMessage(listener: (message: unknown) => void): void;
  /** What `saveState` kept, as it came back (from the editor, or the tab's storage). */
  loadState(): unknown;
  saveState(state: ViewerState): void;
}
