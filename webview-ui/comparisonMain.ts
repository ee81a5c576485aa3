import type { ComparisonState, ComparisonViewerMessage } from '../src/sessionView/comparisonProtocol.js';
import { ComparisonApp } from './comparisonApp.js';

interface VsCodeApi {
  postMessage(message: unknown): void;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

// The comparison page's entry point in the editor's webview.
const api = acquireVsCodeApi();
const root = document.getElementById('root');
if (root) {
  new ComparisonApp(root, {
    send: (message: ComparisonViewerMessage) => api.postMessage(message),
    onMessage: (listener) => window.addEventListener('message', (event: MessageEvent<unknown>) => listener(event.data)),
    saveState: (state: ComparisonState) => api.setState(state),
  });
}
