import * as vscode from 'vscode';
import { sessionsDir, sidecarDir } from '../sessionFormat/sessionFiles.js';
import { SessionLibrary } from '../sessionView/sessionLibrary.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { DiffOpener } from './diffs/diffOpener.js';
import { SnapshotContentProvider } from './diffs/snapshotContentProvider.js';
import { COMMANDS, URI_SCHEMES, VIEWER_PANEL_TYPE, VIEWS, CONTEXT_RUNNING } from './ids.js';
import { LoopStarter } from './runs/loopStarter.js';
import { askForPrompt, promptFileToRun } from './runs/promptInput.js';
import { bundledCliPath, RunController } from './runs/runController.js';
import { RunStatusItem } from './runs/runStatusItem.js';
import { SessionCommands } from './sessionCommands.js';
import type { FileNode, IterationNode, SessionNode, TreeNode } from './sessionsTree/sessionsTreeModel.js';
import { SessionsTreeProvider } from './sessionsTree/sessionsTreeProvider.js';
import { editorSettingsJson, openViewerOnRun, showAgentText } from './settings.js';
import { resumeSession, rollBackIteration, undoLastRollback, type TimeTravelDeps } from './timeTravel/timeTravelCommands.js';
import { ViewerPanels } from './viewer/viewerPanels.js';
import { vscodeCommands, vscodeWindow } from './vscodeWindow.js';

/** What `activate` returns: the extension's parts, for the tests that drive them in a real VS Code. */
export interface CodeloopsApi {
  runs: RunController<vscode.WorkspaceFolder>;
  sessionsTree: SessionsTreeProvider;
  viewers: ViewerPanels;
  library: SessionLibrary;
  timeTravel: TimeTravelDeps<vscode.WorkspaceFolder>;
}

/**
 * The composition root: everything the extension is made of is created here, wired
 * here and handed to `context.subscriptions` here. Activation does no I/O that can
 * wait: the sessions folder is read when the view is first shown.
 */
export function activate(context: vscode.ExtensionContext): CodeloopsApi {
  const activationStarted = performance.now();
  const log = vscode.window.createOutputChannel('Codeloops', { log: true });
  const store = new SessionStore(sessionsDir(), (message) => log.warn(message));
  const library = new SessionLibrary(store, (sessionId) => sidecarDir(sessionId));
  const runs = new RunController<vscode.WorkspaceFolder>({
    cliPath: bundledCliPath(context.extensionPath),
    nodePath: process.execPath,
    log,
    window: vscodeWindow,
    commands: vscodeCommands,
    showStatus: (loop) => new RunStatusItem(loop),
    editorSettingsJson,
    isTrusted: () => vscode.workspace.isTrusted,
    showAgentText,
  });
  const tree = new SessionsTreeProvider(library, runs, log);
  const treeView = vscode.window.createTreeView(VIEWS.sessions, { treeDataProvider: tree, showCollapseAll: true });
  const diffs = new DiffOpener(library, () => runs.runningLoops().length > 0);
  const snapshots = new SnapshotContentProvider(library);
  const viewers = new ViewerPanels(context.extensionUri, library, runs, diffs);
  const changed = (sessionId: string): void => {
    library.invalidate(sessionId);
    viewers.sessionChanged(sessionId);
    tree.refresh();
  };
  const starter = new LoopStarter<vscode.WorkspaceFolder>({
    runs,
    window: vscodeWindow,
    commands: vscodeCommands,
    log,
    isTrusted: () => vscode.workspace.isTrusted,
    folders: () => vscode.workspace.workspaceFolders ?? [],
  });
  const sessionCommands = new SessionCommands({
    store,
    runs,
    window: vscodeWindow,
    log,
    writeClipboard: (text) => vscode.env.clipboard.writeText(text),
    sidecarDirOf: (sessionId) => sidecarDir(sessionId),
    changed,
  });
  const timeTravel: TimeTravelDeps<vscode.WorkspaceFolder> = {
    store,
    runs,
    log,
    window: vscodeWindow,
    commands: vscodeCommands,
    folderOf: (filePath) => vscode.workspace.getWorkspaceFolder(vscode.Uri.file(filePath)),
    changed,
  };
  const sessionIdOf = async (target?: SessionNode | TreeNode | string): Promise<string | undefined> =>
    typeof target === 'string' ? target : target?.kind === 'session' ? target.id : sessionCommands.pickSession();

  const command = (id: string, handler: (...args: never[]) => unknown) =>
    vscode.commands.registerCommand(id, async (...args: never[]) => {
      try {
        await handler(...args);
      } catch (error) {
        log.error(`${id}: ${(error as Error).stack ?? String(error)}`);
        void vscode.window.showErrorMessage(`Codeloops: ${(error as Error).message}`);
      }
    });

  context.subscriptions.push(
    log,
    runs,
    tree,
    treeView,
    viewers,
    vscode.workspace.registerTextDocumentContentProvider(URI_SCHEMES.snapshot, snapshots),
    vscode.workspace.registerTextDocumentContentProvider(URI_SCHEMES.recordedDiff, snapshots),
    vscode.window.registerWebviewPanelSerializer(VIEWER_PANEL_TYPE, viewers),
    runs.onEvent(({ event }) => {
      // The viewer of a session a loop just started shows up at once, without taking focus.
      if (event.type === 'run_started' && openViewerOnRun()) viewers.open(event.session_id, { preserveFocus: true });
    }),

    command(COMMANDS.runPrompt, () => starter.start(askForPrompt)),
    command(COMMANDS.runPromptFile, () => starter.start(promptFileToRun)),
    command(COMMANDS.interrupt, (folder?: vscode.WorkspaceFolder) => runs.interrupt(folder)),
    command(COMMANDS.showOutput, () => log.show()),
    command(COMMANDS.refreshSessions, () => tree.refresh()),
    command(COMMANDS.showMoreSessions, () => tree.showMore()),
    command(COMMANDS.openViewer, async (target?: SessionNode | string) => {
      const sessionId = await sessionIdOf(target);
      if (sessionId) viewers.open(sessionId);
    }),
    command(COMMANDS.showFileDiff, (node: FileNode) => diffs.openFile(node.sessionId, node.iteration, node.file)),
    command(COMMANDS.showIterationChanges, (node: IterationNode) => diffs.openIteration(node.sessionId, node.number)),
    command(COMMANDS.copyPrompt, async (node?: SessionNode) => sessionCommands.copyPrompt(node?.id)),
    command(COMMANDS.revealSessionFile, async (node?: SessionNode) => {
      const sessionId = await sessionIdOf(node);
      if (!sessionId) return;
      const uri = vscode.Uri.file(store.filePathOf(sessionId));
      // On a remote (code-server, SSH) the OS file manager is not the user's: open the file instead.
      if (vscode.env.remoteName) await vscode.window.showTextDocument(uri, { preview: true });
      else await vscode.commands.executeCommand('revealFileInOS', uri);
    }),
    command(COMMANDS.rollbackIteration, async (node?: IterationNode) => {
      if (!node || !(await starter.ensureTrusted('roll back files'))) return;
      await rollBackIteration(timeTravel, node.sessionId, node.number);
    }),
    command(COMMANDS.undoRollback, async (target?: SessionNode | string) => {
      const sessionId = await sessionIdOf(target);
      if (!sessionId || !(await starter.ensureTrusted('undo a rollback'))) return;
      await undoLastRollback(timeTravel, sessionId);
    }),
    command(COMMANDS.resumeSession, async (target?: SessionNode | string) => {
      if (!(await starter.ensureTrusted())) return;
      const sessionId = await sessionIdOf(target);
      if (sessionId) await resumeSession(timeTravel, sessionId);
    }),
    command(COMMANDS.deleteSession, async (node?: TreeNode) => sessionCommands.delete(node?.kind === 'session' ? node.id : undefined)),
  );
  vscodeCommands.setContext(CONTEXT_RUNNING, false);
  log.debug(`activated in ${(performance.now() - activationStarted).toFixed(1)} ms`);
  return { runs, sessionsTree: tree, viewers, library, timeTravel };
}

export function deactivate(): void {
  // Everything is in context.subscriptions; running loops end `interrupted` when the controller is disposed.
}
