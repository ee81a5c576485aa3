import type { ViewerMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';
import { ViewerApp } from './viewerApp.js';
import { VsCodeTransport } from './vscodeTransport.js';

// The editor's webview entry point (the browser page has its own, with an HTTP transport).
const root = document.getElementById('root');
if (root) new ViewerApp(root, new VsCodeTransport<ViewerMessage, ViewerState>());
