import type { PageTransport } from './transport.js';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** A page in the editor's webview: messages through postMessage, state through get/setState (restored after a reload). */
export class VsCodeTransport<Outgoing, State> implements PageTransport<Outgoing, State> {
  private readonly api = acquireVsCodeApi();

  send(message: Outgoing): void {
    this.api.postMessage(message);
  }

  onMessage(listener: (message: unknown) => void): void {
    window.addEventListener('message', (event: MessageEvent<unknown>) => listener(event.data));
  }

  loadState(): unknown {
    return this.api.getState();
  }

  saveState(state: State): void {
    this.api.setState(state);
  }
}
