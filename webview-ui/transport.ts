import type { HostMessage, ViewerMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';

/**
 * How the viewer talks to its host: postMessage in the editor's webview, HTTP and
 * Server-Sent Events in the browser. The viewer itself does not know which.
 */
export interface Transport {
  send(message: ViewerMessage): void;
  onMessage(listener: (message: HostMessage) => void): void;
  loadState(): ViewerState | undefined;
  saveState(state: ViewerState): void;
}
