import type { ViewerMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';
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

  onMessage(listener: (message: unknown) => void): void {
    window.addEventListener('message', (event: MessageEvent<unknown>) => listener(event.data));
  }

  loadState(): unknown {
    return this.api.getState();
  }

  saveState(state: ViewerState): void {
    this.api.setState(state);
  }
}
