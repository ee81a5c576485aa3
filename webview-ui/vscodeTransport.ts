import { hostMessageSchema, viewerStateSchema, type HostMessage, type ViewerMessage, type ViewerState } from '../src/sessionView/viewerProtocol.js';
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
      const parsed = hostMessageSchema.safeParse(event.data);
      if (parsed.success) listener(parsed.data);
      else console.warn('codeloops viewer: ignored a malformed message', parsed.error.issues[0]);
    });
  }

  loadState(): ViewerState | undefined {
    const parsed = viewerStateSchema.safeParse(this.api.getState());
    return parsed.success ? parsed.data : undefined;
  }

  saveState(state: ViewerState): void {
    this.api.setState(state);
  }
}

export function inVsCodeWebview(): boolean {
  return typeof (globalThis as { acquireVsCodeApi?: unknown }).acquireVsCodeApi === 'function';
}
