import path from 'node:path';
import * as vscode from 'vscode';
import { isWithinFolder } from '../files/folderPaths.js';
import { openRepository } from '../git/repository.js';
import { sessionsDir, sidecarDir } from '../sessionFormat/sessionFiles.js';
import { SessionLibrary } from '../sessionView/sessionLibrary.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { DiffOpener } from './diffs/diffOpener.js';
import { SnapshotContentProvider } from './diffs/snapshotContentProvider.js';
import { groupsDir } from '../sessionFormat/candidateGroupFiles.js';
import { applyCandidateSession, undoApplySession, type ApplyDeps } from './candidates/applyCommands.js';
import { CandidateRuns } from './candidates/candidateRuns.js';
import { askForCandidates } from './candidates/candidatesInput.js';
import { GroupStatusItem } from './candidates/groupStatusItem.js';
import { treeGroups } from './candidates/treeGroups.js';
import { COMMANDS, COMPARISON_PANEL_TYPE, URI_SCHEMES, VIEWER_PANEL_TYPE, VIEWS, SETTINGS_SECTION } from './ids.js';
import { HunkLenses, type HunkRef } from './review/hunkLenses.js';
import { commentCommand, rejectHunkCommand, resolveCommand, stageCommand, undoRejectionCommand, type ReviewCommandsDeps } from './review/reviewCommands.js';
import { postSnapshotOf, ReviewThreads } from './review/reviewThreads.js';
import { LoopRegistry } from './runs/loopRegistry.js';
import { ComparisonPanels } from './viewer/comparisonPanels.js';
import { LoopStarter } from './runs/loopStarter.js';
import { askForPrompt, promptFileToRun } from './runs/promptInput.js';
import { bundledCliPath, RunController } from './runs/runController.js';
import { RunStatusItem } from './runs/runStatusItem.js';
import { SessionCommands } from './sessionCommands.js';
import type { GroupNode } from './sessionsTree/candidateNodes.js';
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
  reviewThreads: ReviewThreads;
  hunkLenses: HunkLenses;
  review: ReviewCommandsDeps;
  candidateRuns: CandidateRuns<vscode.WorkspaceFolder>;
  comparisons: ComparisonPanels;
  apply: ApplyDeps;
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
  // Single loops and candidates alike, for the views that follow running sessions.
  const registry = new LoopRegistry<vscode.WorkspaceFolder>({ window: vscodeWindow, commands: vscodeCommands, log });
  const runs = new RunController<vscode.WorkspaceFolder>({
    registry,
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
  const candidateRuns = new CandidateRuns<vscode.WorkspaceFolder>({
    registry,
    cliPath: bundledCliPath(context.extensionPath),
    nodePath: process.execPath,
    log,
    window: vscodeWindow,
    commands: vscodeCommands,
    showStatus: (group) => new GroupStatusItem(group),
    editorSettingsJson,
  });
  const tree = new SessionsTreeProvider(library, registry, log, () => treeGroups(groupsDir(), (message) => log.warn(message)));
  const treeView = vscode.window.createTreeView(VIEWS.sessions, { treeDataProvider: tree, showCollapseAll: true });
  const diffs = new DiffOpener(library, () => registry.anyRunning());
  const snapshots = new SnapshotContentProvider(library);
  const reviewThreads = new ReviewThreads(library);
  const hunkLenses = new HunkLenses(library);
  const viewers = new ViewerPanels(context.extensionUri, library, registry, {
    diffs,
    openLocation: (sessionId, file, line) => openSessionFile(store, sessionId, file, line),
    reviewControl: (sessionId, action) => runs.resumeAfterReview(action, sessionId),
  });
  const comparisons = new ComparisonPanels(context.extensionUri, store, registry, candidateRuns.onGroupEvent);
  const changed = (sessionId: string): void => {
    library.invalidate(sessionId);
    viewers.sessionChanged(sessionId);
    comparisons.refresh();
    hunkLenses.invalidate(sessionId);
    if (reviewThreads.isShown(sessionId)) void reviewThreads.show(sessionId).catch((error: unknown) => log.warn(`review comments: ${String(error)}`));
    tree.refresh();
  };
  const review: ReviewCommandsDeps = { store, window: vscodeWindow, log, changed };
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
    registry,
    window: vscodeWindow,
    log,
    writeClipboard: (text) => vscode.env.clipboard.writeText(text),
    sidecarDirOf: (sessionId) => sidecarDir(sessionId),
    changed,
  });
  const timeTravel: TimeTravelDeps<vscode.WorkspaceFolder> = {
    store,
    runs,
    registry,
    log,
    window: vscodeWindow,
    commands: vscodeCommands,
    folderOf: (filePath) => vscode.workspace.getWorkspaceFolder(vscode.Uri.file(filePath)),
    changed,
  };
  const apply: ApplyDeps = { store, registry, log, window: vscodeWindow, commands: vscodeCommands, changed };
  /** The group of a tree node (a group, or one of its candidates), an id, or the user's pick. */
  const groupIdOf = async (target?: GroupNode | SessionNode | string): Promise<string | undefined> => {
    if (typeof target === 'string') return target;
    if (target?.kind === 'group') return target.id;
    if (target?.kind === 'session') return (await store.startLine(target.id)).candidate_group;
    const groups = await treeGroups(groupsDir(), (message) => log.warn(message));
    if (groups.length === 0) {
      void vscode.window.showInformationMessage('No candidate groups yet: run "Codeloops: Run Prompt with Candidates…" first.');
      return undefined;
    }
    return vscodeWindow.pick(
      groups.map((entry) => ({
        label: entry.group.prompt.split('\n')[0] ?? entry.group.id,
        description: `${entry.group.status} · ${entry.labels.join(', ')}`,
        value: entry.group.id,
      })),
      'Compare the candidates of which group?',
    );
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
    registry,
    tree,
    treeView,
    viewers,
    vscode.workspace.registerTextDocumentContentProvider(URI_SCHEMES.snapshot, snapshots),
    vscode.workspace.registerTextDocumentContentProvider(URI_SCHEMES.recordedDiff, snapshots),
    vscode.window.registerWebviewPanelSerializer(VIEWER_PANEL_TYPE, viewers),
    reviewThreads,
    hunkLenses,
    vscode.languages.registerCodeLensProvider({ scheme: URI_SCHEMES.snapshot }, hunkLenses),
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
    candidateRuns,
    comparisons,
    vscode.window.registerWebviewPanelSerializer(COMPARISON_PANEL_TYPE, comparisons),
    candidateRuns.onGroupEvent(({ event }) => {
      // A group's comparison shows up as it starts, and follows it; the tree shows its candidates under it.
      if (event.type === 'group_started' && openViewerOnRun()) comparisons.open(event.group_id, { preserveFocus: true });
      tree.refresh();
    }),

    command(COMMANDS.runPrompt, () => starter.start(askForPrompt)),
    command(COMMANDS.runPromptFile, () => starter.start(promptFileToRun)),
    command(COMMANDS.interrupt, (target?: vscode.WorkspaceFolder | SessionNode | GroupNode) => registry.interrupt(target)),
    command(COMMANDS.runPromptWithCandidates, async () => {
      const folder = await starter.folderToRunIn();
      if (!folder || !candidateRuns.canStartIn(folder)) return;
      const choice = await askForCandidates();
      const prompt = choice && (await askForPrompt(folder));
      if (!choice || !prompt || !('text' in prompt)) return;
      log.show(true);
      await candidateRuns.start(folder, { prompt: prompt.text, ...choice });
    }),
    command(COMMANDS.compareCandidates, async (target?: GroupNode | SessionNode | string) => {
      const groupId = await groupIdOf(target);
      if (groupId) comparisons.open(groupId);
    }),
    command(COMMANDS.applyCandidate, async (target?: SessionNode | string) => {
      const sessionId = await sessionIdOf(target);
      if (!sessionId || !(await starter.ensureTrusted('apply a candidate'))) return;
      await applyCandidateSession(apply, sessionId);
    }),
    command(COMMANDS.undoApply, async (target?: SessionNode | string) => {
      const sessionId = await sessionIdOf(target);
      if (!sessionId || !(await starter.ensureTrusted('undo an apply'))) return;
      await undoApplySession(apply, sessionId);
    }),
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
    command(COMMANDS.continueLoop, (sessionId?: string) => runs.resumeAfterReview('continue', typeof sessionId === 'string' ? sessionId : undefined)),
    command(COMMANDS.toggleReviewPause, () => toggleReviewPause()),
    command(COMMANDS.rejectHunk, async (ref?: unknown) => {
      // From a lens: the hunk. From the editor's context menu or title: the document's URI, and the hunk is under the cursor.
      const target = isHunkRef(ref) ? ref : await hunkAtCursor(hunkLenses);
      if (!target || !(await starter.ensureTrusted('change files'))) return;
      await rejectHunkCommand(review, target.sessionId, target.iteration, target.hunk);
    }),
    command(COMMANDS.undoRejection, async (target?: SessionNode | string) => {
      const sessionId = await sessionIdOf(target);
      if (sessionId && (await starter.ensureTrusted('change files'))) await undoRejectionCommand(review, sessionId);
    }),
    command(COMMANDS.stageIteration, async (node?: IterationNode) => {
      if (node && (await starter.ensureTrusted('stage changes'))) await stageCommand(review, node.sessionId, node.number);
    }),
    command(COMMANDS.stageSession, async (target?: SessionNode | string) => {
      const sessionId = await sessionIdOf(target);
      if (sessionId && (await starter.ensureTrusted('stage changes'))) await stageCommand(review, sessionId, null);
    }),
    command(COMMANDS.addComment, async (reply: vscode.CommentReply) => {
      const file = postSnapshotOf(reply.thread.uri);
      const range = reply.thread.range;
      if (!file || !range) return;
      const id = await commentCommand(
        review,
        { sessionId: file.session, iteration: file.iteration, file: file.path, line: range.start.line + 1, endLine: range.end.line + 1 },
        reply.text,
      );
      if (!id) return;
      reply.thread.dispose(); // the draft: the recorded comment takes its place
      await reviewThreads.show(file.session);
    }),
    command(COMMANDS.resolveThread, async (thread: vscode.CommentThread) => {
      const item = reviewThreads.itemOf(thread);
      if (item) await resolveCommand(review, item.sessionId, item.id, true);
    }),
    command(COMMANDS.reopenThread, async (thread: vscode.CommentThread) => {
      const item = reviewThreads.itemOf(thread);
      if (item) await resolveCommand(review, item.sessionId, item.id, false);
    }),
  );
  log.debug(`activated in ${(performance.now() - activationStarted).toFixed(1)} ms`);
  return { runs, sessionsTree: tree, viewers, library, timeTravel, reviewThreads, hunkLenses, review, candidateRuns, comparisons, apply };
}

function isHunkRef(value: unknown): value is HunkRef {
  const ref = value as Partial<HunkRef> | undefined;
  return typeof ref?.sessionId === 'string' && typeof ref.iteration === 'number' && typeof ref.hunk === 'number';
}

/** The hunk under the cursor of the active editor, when it shows the post side of an iteration's diff. */
async function hunkAtCursor(lenses: HunkLenses): Promise<HunkRef | undefined> {
  const editor = vscode.window.activeTextEditor;
  const ref = editor ? await lenses.hunkAt(editor.document.uri, editor.selection.active.line + 1) : undefined;
  if (!ref) void vscode.window.showInformationMessage("Codeloops: put the cursor in a change on the right side of an iteration's diff, then reject it.");
  return ref;
}

/** Opens a file of a session's repository at a line; a path that would leave the repository is refused. */
async function openSessionFile(store: SessionStore, sessionId: string, file: string, line: number | null): Promise<void> {
  const start = await store.startLine(sessionId);
  const root = (await openRepository(start.working_dir)).root;
  const target = path.resolve(root, file);
  if (!isWithinFolder(root, target)) throw new Error(`${file} is not inside ${root}.`);
  const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
  await vscode.window.showTextDocument(vscode.Uri.file(target), { selection: new vscode.Range(position, position), preview: true });
}

/** Review before continuing, on or off for this workspace. */
async function toggleReviewPause(): Promise<void> {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const next = config.get<string>('review') === 'pause' ? 'off' : 'pause';
  await config.update('review', next, vscode.ConfigurationTarget.Workspace);
  void vscode.window.showInformationMessage(
    next === 'pause' ? 'Codeloops: loops now wait for your review after each iteration that goes on.' : 'Codeloops: loops no longer wait for your review.',
  );
}

export function deactivate(): void {
  // Everything is in context.subscriptions; running loops end `interrupted` when the registry is disposed.
}
