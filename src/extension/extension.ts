import * as vscode from 'vscode';
import { unsupportedPlatformMessage } from '../process/platformSupport.js';
import { groupsDir } from '../sessionFormat/candidateGroupFiles.js';
import { sessionsDir, sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { SessionLibrary } from '../sessionView/sessionLibrary.js';
import { projectName } from '../sessions/sessionSummary.js';
import { SessionStore } from '../sessions/sessionStore.js';
import type { ApplyDeps } from './candidates/applyCommands.js';
import { CandidateRuns } from './candidates/candidateRuns.js';
import { GroupStatusItem } from './candidates/groupStatusItem.js';
import { treeGroups } from './candidates/treeGroups.js';
import { registerChat } from './chat/chatRegistration.js';
import type { LoopChatDeps } from './chat/loopChat.js';
import { registerCommands } from './commands.js';
import { DiffOpener } from './diffs/diffOpener.js';
import { SnapshotContentProvider } from './diffs/snapshotContentProvider.js';
import { COMPARISON_PANEL_TYPE, STATS_PANEL_TYPE, URI_SCHEMES, VIEWER_PANEL_TYPE, VIEWS } from './ids.js';
import type { QueueDeps } from './queue/queueController.js';
import { LazyQueueView } from './queue/queueViewLoader.js';
import { HunkLenses } from './review/hunkLenses.js';
import { acceptChangeCommand, acceptTestCommand, type HunkReview, type ReviewCommandsDeps } from './review/reviewCommands.js';
import { lazyBundle } from './lazyBundle.js';
import { postSnapshotOf, ReviewThreads } from './review/reviewThreads.js';
import { LoopRegistry } from './runs/loopRegistry.js';
import { LoopStarter } from './runs/loopStarter.js';
import { bundledCliPath, RunController } from './runs/runController.js';
import { RunStatusItem } from './runs/runStatusItem.js';
import { RunnerClient } from './runner/runnerClient.js';
import { forecastIn, planIn } from './runner/runnerQueries.js';
import { SessionCommands } from './sessionCommands.js';
import { SessionsTreeProvider } from './sessionsTree/sessionsTreeProvider.js';
import { editorSettingsJson, offerMcpServerInEditor, openViewerOnRun, showAgentText } from './settings.js';
import { resumeSession, type TimeTravelDeps } from './timeTravel/timeTravelCommands.js';
import { ComparisonPanels } from './viewer/comparisonPanels.js';
import { StatsPanels } from './viewer/statsPanels.js';
import { ViewerPanels } from './viewer/viewerPanels.js';
import { vscodeCommands, vscodeWindow } from './vscodeWindow.js';

/** The extension's version, set by the build (esbuild.mjs). */
declare const CODELOOPS_VERSION: string;

/** What `activate` returns: the extension's parts, for the tests that drive them in a real VS Code. */
export interface CodeloopsApi {
  runs: RunController<vscode.WorkspaceFolder>;
  sessionsTree: SessionsTreeProvider;
  viewers: ViewerPanels;
  library: SessionLibrary;
  timeTravel: TimeTravelDeps<vscode.WorkspaceFolder>;
  reviewThreads: ReviewThreads;
  hunkLenses: HunkLenses;
  review: ReviewCommandsDeps;
  candidateRuns: CandidateRuns<vscode.WorkspaceFolder>;
  comparisons: ComparisonPanels;
  stats: StatsPanels;
  apply: ApplyDeps;
  queue: LazyQueueView;
}

/**
 * The composition root: everything the extension is made of is created here, wired
 * here and handed to `context.subscriptions` here; what the commands do is in
 * commands.ts. Activation does no I/O that can wait: the sessions folder is read when
 * the view is first shown.
 */
export function activate(context: vscode.ExtensionContext): CodeloopsApi {
  const activationStarted = performance.now();
  const log = vscode.window.createOutputChannel('Codeloops', { log: true });
  const warn = (message: string) => log.warn(message);
  const store = new SessionStore(sessionsDir(), warn);
  const library = new SessionLibrary(store, sidecarDirOf);
  const groups = () => treeGroups(groupsDir(), warn);
  const editor = { log, window: vscodeWindow, commands: vscodeCommands };
  const registry = new LoopRegistry<vscode.WorkspaceFolder>(editor);
  const isTrusted = () => vscode.workspace.isTrusted;
  // The one way to the bundled runner; `--trust` follows the workspace's trust from here.
  const runner = new RunnerClient({ cliPath: bundledCliPath(context.extensionPath), nodePath: process.execPath, isTrusted });
  const running = { ...editor, registry, runner, editorSettingsJson };
  const runs = new RunController<vscode.WorkspaceFolder>({ ...running, showStatus: (loop) => new RunStatusItem(loop), showAgentText });
  const candidateRuns = new CandidateRuns<vscode.WorkspaceFolder>({ ...running, showStatus: (group) => new GroupStatusItem(group) });
  const tree = new SessionsTreeProvider(library, registry, log, groups);
  const diffs = new DiffOpener(library, () => registry.anyRunning());
  const reviewThreads = new ReviewThreads(library);
  const hunks = lazyHunkReview(context.extensionPath);
  const hunkLenses = new HunkLenses(library, sidecarDirOf, hunks);
  const snapshots = new SnapshotContentProvider(library);
  const viewers = new ViewerPanels(context.extensionUri, library, registry, {
    diffs,
    openLocation: (sessionId, file, line) => diffs.openLocation(sessionId, file, line),
    reviewControl: (sessionId, action) => runs.resumeAfterReview(action, sessionId),
    acceptChange: async (sessionId, iteration, file) => void (await acceptChangeCommand(accepting(), sessionId, iteration, file)),
    acceptTest: async (sessionId, test) => void (await acceptTestCommand(accepting(), sessionId, test)),
  });
  const comparisons = new ComparisonPanels(context.extensionUri, { store, sidecarDirOf }, registry, candidateRuns.onGroupEvent);
  const stats = new StatsPanels(context.extensionUri, {
    store,
    sessionsChanged: tree.onDidChangeSessions,
    watchSessions: () => tree.ensureWatching(),
    defaultProject: () => {
      const folder = thisWorkspaceFolder();
      return folder && projectName(folder.uri.fsPath);
    },
  });
  /** A session's files or records changed: every view of it shows it again. */
  const changed = (sessionId: string): void => {
    library.invalidate(sessionId);
    viewers.sessionChanged(sessionId);
    comparisons.refresh();
    hunkLenses.invalidate(sessionId);
    if (reviewThreads.isShown(sessionId)) void reviewThreads.show(sessionId).catch((error: unknown) => log.warn(`review comments: ${String(error)}`));
    tree.refresh();
  };
  const sessionPorts = { ...editor, store, sidecarDirOf, changed };
  const review: ReviewCommandsDeps = { ...sessionPorts, hunks };
  const folderOf = (filePath: string) => vscode.workspace.getWorkspaceFolder(vscode.Uri.file(filePath));
  const timeTravel: TimeTravelDeps<vscode.WorkspaceFolder> = { ...sessionPorts, runs, registry, folderOf };
  const apply: ApplyDeps = { ...sessionPorts, registry };
  const forecast = (folder: vscode.WorkspaceFolder) => forecastIn(runner, { workingDir: folder.uri.fsPath, editorSettings: editorSettingsJson(folder) });
  const starter = new LoopStarter<vscode.WorkspaceFolder>({ ...editor, runs, isTrusted, folders: () => vscode.workspace.workspaceFolders ?? [], forecast });
  // Accepting a change or a test changes what a loop here accepts as done: only in a trusted workspace.
  const accepting = () => ({ ...review, ensureTrusted: (action: string, why: string) => starter.ensureTrusted(action, why) });
  const writeClipboard = (text: string) => vscode.env.clipboard.writeText(text);
  const sessionCommands = new SessionCommands<vscode.WorkspaceFolder>({ ...sessionPorts, registry, writeClipboard });
  const chat = chatFor(context, { runner, runs, starter, isTrusted, store, folderOf, timeTravel, forecast });
  const queue = lazyQueueView(context, { ...editor, runner, iterationsOf: async (id) => (await store.summary(id))?.iterations });
  // A running task's session moved on: its row says which iteration it is at.
  tree.onDidChangeSessions(() => queue.refreshIfLoaded());
  context.subscriptions.push(
    ...[log, registry, tree, viewers, reviewThreads, hunkLenses, candidateRuns, comparisons, stats],
    vscode.window.createTreeView(VIEWS.sessions, { treeDataProvider: tree, showCollapseAll: true }),
    queue,
    vscode.window.createTreeView(VIEWS.queue, { treeDataProvider: queue, dragAndDropController: queue }),
    vscode.workspace.registerTextDocumentContentProvider(URI_SCHEMES.snapshot, snapshots),
    vscode.workspace.registerTextDocumentContentProvider(URI_SCHEMES.recordedDiff, snapshots),
    vscode.window.registerWebviewPanelSerializer(VIEWER_PANEL_TYPE, viewers),
    vscode.window.registerWebviewPanelSerializer(COMPARISON_PANEL_TYPE, comparisons),
    vscode.window.registerWebviewPanelSerializer(STATS_PANEL_TYPE, stats),
    vscode.languages.registerCodeLensProvider({ scheme: URI_SCHEMES.snapshot }, hunkLenses),
    ...chat,
    ...followRuns({ runs, candidateRuns, viewers, comparisons, tree, reviewThreads, hunkLenses }),
    // prettier-ignore
    ...registerCommands({ log, store, registry, runs, candidateRuns, starter, tree, groups, diffs, viewers, comparisons, stats, sessionCommands, reviewThreads, hunkLenses, review, timeTravel, apply, queue }),
  );
  log.debug(`activated in ${(performance.now() - activationStarted).toFixed(1)} ms`);
  return { runs, sessionsTree: tree, viewers, library, timeTravel, reviewThreads, hunkLenses, review, candidateRuns, comparisons, stats, apply, queue };
}

/** The Queue view, made when first shown from its own bundle (`dist/queueView.js`) with these parts. */
function lazyQueueView(
  context: vscode.ExtensionContext,
  parts: Pick<QueueDeps, 'window' | 'commands' | 'runner'> & { log: vscode.LogOutputChannel; iterationsOf: (sessionId: string) => Promise<number | undefined> },
): LazyQueueView {
  return new LazyQueueView((module) => {
    const { log, iterationsOf, ...ports } = parts;
    const controller = new module.QueueController<vscode.WorkspaceFolder>({
      ...ports,
      log,
      pickChecklist: module.pickChecklist,
      fileUri: (filePath) => vscode.Uri.file(filePath),
      blobUri: module.gitBlobUri,
    });
    context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(URI_SCHEMES.gitBlob, new module.GitBlobProvider()));
    return new module.QueueView(controller, { log, iterationsOf });
  });
}

/** `@codeloops`, the language model tools and the MCP server, on the extension's parts. */
function chatFor(
  context: vscode.ExtensionContext,
  parts: Pick<LoopChatDeps<vscode.WorkspaceFolder>, 'runs' | 'starter' | 'isTrusted' | 'store' | 'folderOf' | 'forecast'> & {
    runner: RunnerClient;
    timeTravel: TimeTravelDeps<vscode.WorkspaceFolder>;
  },
): vscode.Disposable[] {
  const { runner, timeTravel } = parts;
  return registerChat({
    extensionUri: context.extensionUri,
    extensionPath: context.extensionPath,
    ...runner.program,
    version: CODELOOPS_VERSION,
    offerMcpServer: offerMcpServerInEditor,
    deps: {
      ...parts,
      folders: () => vscode.workspace.workspaceFolders ?? [],
      resume: (sessionId, overrides) => resumeSession(timeTravel, sessionId, overrides),
      plan: (folder, task, overrides) => planIn(runner, { workingDir: folder.uri.fsPath, editorSettings: editorSettingsJson(folder) }, task, overrides),
      platformRefusal: unsupportedPlatformMessage(process.platform, 'editor'),
    },
  });
}

/** The hunk review, read from `dist/review.js` when first used. */
function lazyHunkReview(extensionPath: string): HunkReview {
  const load = lazyBundle<HunkReview>(extensionPath, 'review');
  return {
    iterationHunks: (...args) => load().iterationHunks(...args),
    rejectHunk: (...args) => load().rejectHunk(...args),
    undoRejection: (...args) => load().undoRejection(...args),
    stageChanges: (...args) => load().stageChanges(...args),
  };
}

/** What the views do of themselves as loops run and diffs open. */
function followRuns(parts: {
  runs: RunController<vscode.WorkspaceFolder>;
  candidateRuns: CandidateRuns<vscode.WorkspaceFolder>;
  viewers: ViewerPanels;
  comparisons: ComparisonPanels;
  tree: SessionsTreeProvider;
  reviewThreads: ReviewThreads;
  hunkLenses: HunkLenses;
}): vscode.Disposable[] {
  const { runs, candidateRuns, viewers, comparisons, tree, reviewThreads, hunkLenses } = parts;
  return [
    // An iteration's diff shows its review: the findings and comments come with its post side.
    vscode.workspace.onDidOpenTextDocument((document) => {
      const file = postSnapshotOf(document.uri);
      if (file && !reviewThreads.isShown(file.session)) void reviewThreads.show(file.session).catch(() => undefined);
    }),
    runs.onEvent(({ sessionId, event }) => {
      // The viewer of a session a loop just started shows up at once, without taking focus.
      if (event.type === 'run_started' && openViewerOnRun()) viewers.open(event.session_id, { preserveFocus: true });
      // The critic's findings appear where the code is as soon as it has spoken.
      if (event.type === 'iteration_finished' && sessionId) {
        hunkLenses.invalidate(sessionId);
        void reviewThreads.show(sessionId).catch(() => undefined);
      }
    }),
    candidateRuns.onGroupEvent(({ event }) => {
      // A group's comparison shows up as it starts, and follows it; the tree shows its candidates under it.
      if (event.type === 'group_started' && openViewerOnRun()) comparisons.open(event.group_id, { preserveFocus: true });
      tree.refresh();
    }),
  ];
}

/** The workspace folder the user works in: the active editor's, else the first. */
function thisWorkspaceFolder(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) || vscode.workspace.workspaceFolders?.[0];
}

export function deactivate(): void {
  // Everything is in context.subscriptions; running loops end `interrupted` when the registry is disposed.
}
