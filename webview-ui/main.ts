import type { ComparisonState, ComparisonViewerMessage } from '../src/sessionView/comparisonProtocol.js';
import type { StatsState, StatsViewerMessage } from '../src/sessionView/statsProtocol.js';
import type { ViewerMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';
import { startBrowserPage } from './browser/browserMain.js';
import { ComparisonApp } from './comparisonApp.js';
import { StatsApp } from './statsApp.js';
import { ViewerApp } from './viewerApp.js';
import { VsCodeTransport } from './vscodeTransport.js';

// The one entry point of every page. The editor's webviews have a `#root` that names
// their page (a session's viewer, a candidate group's comparison, the stats) and talk through
// VS Code's postMessage; the pages of `codeloops ui` have an `#app` and talk HTTP.
const editorRoot = document.getElementById('root');
const browserRoot = document.getElementById('app');
if (editorRoot?.dataset.page === 'comparison') new ComparisonApp(editorRoot, new VsCodeTransport<ComparisonViewerMessage, ComparisonState>());
else if (editorRoot?.dataset.page === 'stats') new StatsApp(editorRoot, new VsCodeTransport<StatsViewerMessage, StatsState>());
else if (editorRoot) new ViewerApp(editorRoot, new VsCodeTransport<ViewerMessage, ViewerState>());
else if (browserRoot) startBrowserPage(browserRoot);
