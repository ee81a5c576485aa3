import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { gitBytes } from '../../git/gitProcess.js';
import { taskStateText, taskTitle, type QueueTask } from '../../sessionFormat/queueRecords.js';
import * as z from '../../sessionFormat/zod.js';
import { COMMANDS, CONTEXT_QUEUE_RUNNING, QUEUE_DRAG_MIME, URI_SCHEMES } from '../ids.js';
import type { QueueController, QueueListing } from './queueController.js';

// The view's bundle (`dist/queueView.js`) carries its controller: the composition root makes one from it.
export { QueueController } from './queueController.js';

/**
 * The Queue view (beside Sessions): the first workspace folder's queue of tasks, each
 * with its state as the queue's file says it, live; what its buttons do is
 * `QueueController`. A bundle of its own (`dist/queueView.js`), loaded when the view is
 * first shown or a queue command first runs, so the extension's own bundle stays small.
 */

/** The file is rewritten at every step of a run: looks are gathered. */
const REFRESH_DELAY_MS = 150;

/** What the view reads besides its controller. */
export interface QueueViewParts {
  log: vscode.LogOutputChannel;
  /** How many iterations a running task's session has had. */
  iterationsOf(sessionId: string): Promise<number | undefined>;
}

type Folder = vscode.WorkspaceFolder;

export class QueueView implements vscode.TreeDataProvider<QueueTask>, vscode.TreeDragAndDropController<QueueTask>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<QueueTask | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly dragMimeTypes = [QUEUE_DRAG_MIME];
  readonly dropMimeTypes = [QUEUE_DRAG_MIME];
  private listing: QueueListing | undefined;
  private watcher: fs.FSWatcher | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly controller: QueueController<Folder>,
    private readonly parts: QueueViewParts,
  ) {
    this.disposables.push(this.controller.onDidChange(() => this.refreshSoon()));
  }

  /** The folder whose queue the view shows: the active editor's, else the first. */
  folder(): Folder | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    return (active && vscode.workspace.getWorkspaceFolder(active)) || vscode.workspace.workspaceFolders?.[0];
  }

  refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.changed.fire(undefined), REFRESH_DELAY_MS);
  }

  async getChildren(parent?: QueueTask): Promise<QueueTask[]> {
    const folder = this.folder();
    if (parent || !folder) return [];
    this.listing = await this.controller.list(folder);
    this.watch(this.listing?.file);
    void vscode.commands.executeCommand('setContext', CONTEXT_QUEUE_RUNNING, this.controller.isRunning(folder));
    return this.listing?.tasks ?? [];
  }

  /** Follows the queue's folder: a run in a terminal or in this window rewrites the file at every step. */
  private watch(file: string | undefined): void {
    if (this.watcher || !file) return;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      this.watcher = fs.watch(path.dirname(file), (_event, name) => {
        if (name === path.basename(file)) this.refreshSoon();
      });
    } catch (error) {
      this.parts.log.warn(`Cannot watch the queue's file ${file}: ${(error as Error).message}`);
    }
  }

  async getTreeItem(task: QueueTask): Promise<vscode.TreeItem> {
    const item = new vscode.TreeItem(`${task.id}. ${taskTitle(task)}`);
    const iterations = task.state === 'running' && task.session_ids.length > 0 ? await this.parts.iterationsOf(task.session_ids.at(-1)!) : undefined;
    item.description = task.state === 'running' && iterations !== undefined ? `running, iteration ${iterations + 1}` : taskStateText(task);
    item.id = `queue-task-${task.id}`;
    // Read out as shown (VS Code would read the tooltip, the whole prompt).
    item.accessibilityInformation = { label: `${String(item.label)}, ${String(item.description)}` };
    item.iconPath = new vscode.ThemeIcon(ICONS[task.state === 'finished' ? (task.outcome === 'success' ? 'success' : 'unsuccessful') : task.state]);
    const tooltip = [task.prompt, `Branch: ${task.branch}`];
    if (task.question && task.state === 'needs_input') tooltip.push(`Asks: ${task.question}`);
    if (task.result?.error) tooltip.push(`Error: ${task.result.error}`);
    item.tooltip = tooltip.join('\n\n');
    // The manifest's menus match these: `queueTask.<state>`, and `.success` for a branch to diff and merge.
    item.contextValue = `queueTask.${task.state}${task.outcome === 'success' ? '.success' : ''}`;
    if (task.state === 'needs_input') item.command = { command: COMMANDS.queueAnswer, title: 'Answer', arguments: [task] };
    return item;
  }

  handleDrag(tasks: readonly QueueTask[], transfer: vscode.DataTransfer): void {
    transfer.set(QUEUE_DRAG_MIME, new vscode.DataTransferItem(tasks.map((task) => task.id)));
  }

  /** Dropped on a task: the dragged one takes its place; dropped below the last: it goes last. */
  async handleDrop(target: QueueTask | undefined, transfer: vscode.DataTransfer): Promise<void> {
    const ids = transfer.get(QUEUE_DRAG_MIME)?.value as number[] | undefined;
    const folder = this.folder();
    const tasks = this.listing?.tasks ?? [];
    const dragged = tasks.find((task) => task.id === ids?.[0]);
    if (!folder || !dragged) return;
    const position = target ? tasks.findIndex((task) => task.id === target.id) + 1 : tasks.length;
    await this.controller.move(folder, dragged, { position });
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
    this.controller.dispose();
    this.changed.dispose();
    for (const disposable of this.disposables) disposable.dispose();
  }
}

const ICONS: Record<Exclude<QueueTask['state'], 'finished'> | 'success' | 'unsuccessful', string> = {
  queued: 'circle-large-outline',
  running: 'sync~spin',
  needs_input: 'question',
  answered: 'debug-continue',
  success: 'pass',
  unsuccessful: 'error',
};

/** The active Markdown file, or one the user picks. */
export async function pickChecklist(): Promise<string | undefined> {
  const active = vscode.window.activeTextEditor?.document;
  if (active?.languageId === 'markdown' && active.uri.scheme === 'file') return active.uri.fsPath;
  const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { Markdown: ['md', 'markdown'] }, openLabel: 'Add Its Unchecked Items' });
  return picked?.[0]?.fsPath;
}

/**
 * A file as a commit has it, for a task's branch diff: `git cat-file` on `<commit>:<path>`.
 * The repository named in the address must be one of the workspace's folders' (an address
 * can come from anywhere); a side without the file (null commit) is empty.
 */
const gitBlobSchema = z.object({ root: z.string(), commit: z.nullable(z.string().check(z.regex(/^[0-9a-f]{40,64}$/))) });

export function gitBlobUri(root: string, commit: string | null, filePath: string): vscode.Uri {
  return vscode.Uri.from({ scheme: URI_SCHEMES.gitBlob, path: `/${filePath}`, query: JSON.stringify({ root, commit }) });
}

export class GitBlobProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const { root, commit } = gitBlobSchema.parse(JSON.parse(uri.query));
    const filePath = uri.path.slice(1);
    if (commit === null) return '';
    if (filePath.split('/').includes('..') || !(vscode.workspace.workspaceFolders ?? []).some((folder) => isInside(folder.uri.fsPath, root)))
      throw new Error('not a Codeloops file address');
    const bytes = await gitBytes(root, ['cat-file', 'blob', `${commit}:${filePath}`]);
    return bytes.includes(0) ? `(binary file, ${bytes.length.toLocaleString('en-US')} bytes)` : bytes.toString('utf8');
  }
}

function isInside(folder: string, root: string): boolean {
  const relative = path.relative(root, folder);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** What the view's commands do with a task (given by its item) or the view's folder. */
export function queueCommandHandlers(view: QueueView) {
  const withFolder =
    <A extends unknown[]>(handler: (folder: Folder, ...args: A) => unknown) =>
    async (...args: A): Promise<void> => {
      const folder = view.folder();
      if (!folder) return void vscode.window.showInformationMessage('Open a folder (a git repository) to queue tasks for it.');
      await handler(folder, ...args);
    };
  /** A task's command, from its item in the view (the palette has none to give). */
  const withTask = (handler: (folder: Folder, task: QueueTask) => unknown) =>
    withFolder(async (folder, task?: QueueTask) => {
      if (!task) return void vscode.window.showInformationMessage('Use it on a task of the Queue view (its buttons or its context menu).');
      await handler(folder, task);
    });
  const { controller } = view;
  return {
    add: withFolder((folder) => controller.addPrompt(folder)),
    addSelection: withFolder(async (folder) => {
      const editor = vscode.window.activeTextEditor;
      const text = editor?.document.getText(editor.selection).trim();
      if (!text) return void vscode.window.showInformationMessage('Select the text of a task in an editor first.');
      await controller.addPrompt(folder, text);
    }),
    addChecklist: withFolder((folder, uri?: vscode.Uri) => controller.addChecklist(folder, uri?.fsPath)),
    run: withFolder((folder) => controller.run(folder)),
    interrupt: withFolder((folder) => controller.interrupt(folder)),
    refresh: () => view.refreshSoon(),
    moveUp: withTask((folder, task) => controller.move(folder, task, { by: -1 })),
    moveDown: withTask((folder, task) => controller.move(folder, task, { by: 1 })),
    remove: withTask((folder, task) => controller.remove(folder, task)),
    answer: withTask((folder, task) => controller.answer(folder, task)),
    openDiff: withTask((folder, task) => controller.openDiff(folder, task)),
    merge: withTask((folder, task) => controller.merge(folder, task)),
  };
}
