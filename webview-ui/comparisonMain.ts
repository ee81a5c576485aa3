import type { ComparisonState, ComparisonViewerMessage } from '../src/sessionView/comparisonProtocol.js';
import { ComparisonApp } from './comparisonApp.js';
import { VsCodeTransport } from './vscodeTransport.js';

// The comparison page's entry point in the editor's webview.
const root = document.getElementById('root');
if (root) new ComparisonApp(root, new VsCodeTransport<ComparisonViewerMessage, ComparisonState>());
