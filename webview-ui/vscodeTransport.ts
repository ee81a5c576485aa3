import type { HostMessage, ViewerMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';
import { isHostMessage, isViewerState } from './messageGuards.js';
import type { Transport } from './transport.js';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** The editor's webview: messages through postMessage, state through get/setState (restored after a reload). */
export class VsCodeTransport implements Transport {
  private readonly api = acquireVsCodeApi();

  send(message: ViewerMessage): void {
    this.api.postMessage(message);
  }

  onMessage(listener: (message: HostMessage) => void): void {
    window.addEventListener('message', (event: MessageEvent) => {
      if (isHostMessage(event.data)) listener(event.data);
      else console.warn('codeloops viewer: ignored a message that is not from its host');
    });
  }

  loadState(): ViewerState | undefined {
    const state = this.api.getState();
    return isViewerState(state) ? state : undefined;
  }

  saveState(state: ViewerState): void {
    this.api.setState(state);
  }
}

export function inVsCodeWebview(): boolean {
  return typeof (globalThis as { acquireVsCodeApi?: unknown }).acquireVsCodeApi === 'function';
}
