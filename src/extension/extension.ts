import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { openRepository } from '../git/repository.js';
import { deleteSessionRefs } from '../git/snapshots.js';
import { sessionsDir, sidecarDir } from '../sessionFormat/sessionFiles.js';
import { SessionLibrary } from '../sessionView/sessionLibrary.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { DiffOpener } from './diffs/diffOpener.js';
import { SnapshotContentProvider } from './diffs/snapshotContentProvider.js';
import { COMMANDS, CONTEXT_RUNNING, URI_SCHEMES, VIEWER_PANEL_TYPE, VIEWS } from './ids.js';
import { askForPrompt, ensureTrusted, pickFolder, promptFileToRun, type LoopPrompt } from './runs/promptInput.js';
import { openViewerOnRun } from './settings.js';
import { bundledCliPath, RunController } from './runs/runController.js';
import type { FileNode, IterationNode, SessionNode, TreeNode } from './sessionsTree/sessionsTreeModel.js';
import { SessionsTreeProvider } from './sessionsTree/sessionsTreeProvider.js';
import { resumeSession, rollBackIteration, undoLastRollback, type TimeTravelDeps } from './timeTravel/timeTravelCommands.js';
import { ViewerPanels } from './viewer/viewerPanels.js';

/**
 * The composition root: everything the extension is made of is created here, wired
 * here and handed to `context.subscriptions` here. Activation does no I/O that can
 * wait: the sessions folder is read when the view is first shown.
 */
/** What `activate` returns: the extension's parts, for the tests that drive them in a real VS Code. */
export interface CodeloopsApi {
  runs: RunController;
  sessionsTree: SessionsTreeProvider;
  viewers: ViewerPanels;
  library: SessionLibrary;
  timeTravel: TimeTravelDeps;
}

export function activate(context: vscode.ExtensionContext): CodeloopsApi {
  const activationStarted = performance.now();
  const log = vscode.window.createOutputChannel('Codeloops', { log: true });
  const store = new SessionStore(sessionsDir(), (message) => log.warn(message));
  const library = new SessionLibrary(store, (sessionId) => sidecarDir(sessionId));
  const runs = new RunController(bundledCliPath(context.extensionPath), log);
  const tree = new SessionsTreeProvider(library, runs, log);
  const treeView = vscode.window.createTreeView(VIEWS.sessions, { treeDataProvider: tree, showCollapseAll: true });
  const diffs = new DiffOpener(library, () => runs.runningLoops().length > 0);
  const snapshots = new SnapshotContentProvider(library);
  const viewers = new ViewerPanels(context.extensionUri, library, runs, diffs);

  const startLoop = async (choosePrompt: (folder: vscode.WorkspaceFolder) => Promise<LoopPrompt | undefined>): Promise<void> => {
    if (!(await ensureTrusted())) return;
    const folder = await pickFolder();
    if (!folder) return;
    if (runs.isRunning(folder)) {
      void vscode.window.showWarningMessage(`A Codeloops loop is already running in ${folder.name}. Interrupt it first, or wait for it to finish.`);
      return;
    }
    const prompt = await choosePrompt(folder);
    if (!prompt) return;
    log.show(true);
    await runs.start(folder, prompt);
  };

  const timeTravel: TimeTravelDeps = {
    store,
    runs,
    log,
    changed: (sessionId) => {
      library.invalidate(sessionId);
      viewers.sessionChanged(sessionId);
      tree.refresh();
    },
  };

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

    command(COMMANDS.runPrompt, () => startLoop(askForPrompt)),
    command(COMMANDS.runPromptFile, () => startLoop(promptFileToRun)),
    command(COMMANDS.interrupt, (folder?: vscode.WorkspaceFolder) => runs.interrupt(folder)),
    command(COMMANDS.showOutput, () => log.show()),
    command(COMMANDS.refreshSessions, () => tree.refresh()),
    command(COMMANDS.showMoreSessions, () => tree.showMore()),
    command(COMMANDS.openViewer, async (target?: SessionNode | string) => {
      const sessionId = typeof target === 'string' ? target : (target?.id ?? (await pickSession(store)));
      if (sessionId) viewers.open(sessionId);
    }),
    command(COMMANDS.showFileDiff, (node: FileNode) => diffs.openFile(node.sessionId, node.iteration, node.file)),
    command(COMMANDS.showIterationChanges, (node: IterationNode) => diffs.openIteration(node.sessionId, node.number)),
    command(COMMANDS.copyPrompt, async (node?: SessionNode) => {
      const sessionId = node?.id ?? (await pickSession(store));
      if (!sessionId) return;
      const session = await store.load(sessionId);
      await vscode.env.clipboard.writeText(session.start.prompt);
      void vscode.window.setStatusBarMessage('Codeloops: prompt copied', 3000);
    }),
    command(COMMANDS.revealSessionFile, async (node?: SessionNode) => {
      const sessionId = node?.id ?? (await pickSession(store));
      if (!sessionId) return;
      const uri = vscode.Uri.file(store.filePathOf(sessionId));
      // On a remote (code-server, SSH) the OS file manager is not the user's: open the file instead.
      if (vscode.env.remoteName) await vscode.window.showTextDocument(uri, { preview: true });
      else await vscode.commands.executeCommand('revealFileInOS', uri);
    }),
    command(COMMANDS.rollbackIteration, async (node?: IterationNode) => {
      if (!node || !(await ensureTrusted('roll back files'))) return;
      await rollBackIteration(timeTravel, node.sessionId, node.number);
    }),
    command(COMMANDS.undoRollback, async (target?: SessionNode | string) => {
      const sessionId = typeof target === 'string' ? target : (target?.id ?? (await pickSession(store)));
      if (!sessionId || !(await ensureTrusted('undo a rollback'))) return;
      await undoLastRollback(timeTravel, sessionId);
    }),
    command(COMMANDS.resumeSession, async (target?: SessionNode | string) => {
      if (!(await ensureTrusted())) return;
      const sessionId = typeof target === 'string' ? target : (target?.id ?? (await pickSession(store)));
      if (sessionId) await resumeSession(timeTravel, sessionId);
    }),
    command(COMMANDS.deleteSession, async (node?: TreeNode) => {
      const sessionId = node?.kind === 'session' ? node.id : await pickSession(store);
      if (!sessionId) return;
      if (runs.runningSessionIds().has(sessionId)) {
        void vscode.window.showWarningMessage('This session is still running: interrupt it before deleting it.');
        return;
      }
      const summary = await store.summary(sessionId);
      const choice = await vscode.window.showWarningMessage(
        `Delete the session "${summary?.prompt_preview ?? sessionId}"?`,
        { modal: true, detail: 'Its session file, its record and its snapshots in the repository are removed. Your files are not touched.' },
        'Delete',
      );
      if (choice !== 'Delete') return;
      await deleteSession(store, sessionId, summary?.working_dir, log);
      library.invalidate(sessionId);
      tree.refresh();
    }),
  );
  void vscode.commands.executeCommand('setContext', CONTEXT_RUNNING, false);
  log.debug(`activated in ${(performance.now() - activationStarted).toFixed(1)} ms`);
  return { runs, sessionsTree: tree, viewers, library, timeTravel };
}

export function deactivate(): void {
  // Everything is in context.subscriptions; running loops end `interrupted` when the controller is disposed.
}

async function pickSession(store: SessionStore): Promise<string | undefined> {
  const summaries = await store.list();
  if (summaries.length === 0) {
    void vscode.window.showInformationMessage('No Codeloops sessions yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    summaries.slice(0, 500).map((summary) => ({ label: summary.prompt_preview, description: `${summary.project} · ${summary.outcome ?? 'not finished'}`, detail: summary.id, id: summary.id })),
    { placeHolder: 'Which session?', matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.id;
}

async function deleteSession(store: SessionStore, sessionId: string, workingDir: string | undefined, log: vscode.LogOutputChannel): Promise<void> {
  fs.rmSync(store.filePathOf(sessionId), { force: true });
  fs.rmSync(sidecarDir(sessionId), { recursive: true, force: true });
  if (!workingDir || !fs.existsSync(workingDir)) return;
  try {
    const removed = await deleteSessionRefs(await openRepository(workingDir), sessionId);
    log.info(`Deleted session ${sessionId} and ${removed} snapshot refs in ${path.basename(workingDir)}`);
  } catch (error) {
    log.warn(`Deleted session ${sessionId}; its snapshots could not be removed: ${(error as Error).message}`);
  }
}
