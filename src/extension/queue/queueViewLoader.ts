import path from 'node:path';
import * as vscode from 'vscode';
import type { QueueTask } from '../../sessionFormat/queueRecords.js';
import type * as QueueViewModule from './queueView.js';
import type { QueueView, QueueViewParts } from './queueView.js';

type Handlers = ReturnType<typeof QueueViewModule.queueCommandHandlers>;

/**
 * The Queue view as the extension's own bundle knows it: a stand-in provider and the
 * commands' entry points, which load the view's bundle (`dist/queueView.js`, built from
 * `queueView.ts`) the first time the view is shown or a queue command runs. The bundle
 * only names the file, at run time, so the bundler leaves the queue's code out of it.
 */
export class LazyQueueView implements vscode.TreeDataProvider<QueueTask>, vscode.TreeDragAndDropController<QueueTask>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<QueueTask | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly dragMimeTypes = ['application/vnd.code.tree.codeloops.queue'];
  readonly dropMimeTypes = this.dragMimeTypes;
  private loaded: { view: QueueView; handlers: Handlers } | undefined;

  constructor(private readonly parts: QueueViewParts) {}

  load(): { view: QueueView; handlers: Handlers } {
    if (this.loaded) return this.loaded;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file beside this bundle, loaded when the queue is first used
    const module = require(path.join(__dirname, 'queueView.js')) as typeof QueueViewModule;
    const view = new module.QueueView(this.parts);
    view.onDidChangeTreeData((task) => this.changed.fire(task));
    this.loaded = { view, handlers: module.queueCommandHandlers(view) };
    return this.loaded;
  }

  getChildren(parent?: QueueTask): Promise<QueueTask[]> {
    return this.load().view.getChildren(parent);
  }

  getTreeItem(task: QueueTask): Promise<vscode.TreeItem> {
    return this.load().view.getTreeItem(task);
  }

  handleDrag(tasks: readonly QueueTask[], transfer: vscode.DataTransfer): void {
    this.load().view.handleDrag(tasks, transfer);
  }

  handleDrop(target: QueueTask | undefined, transfer: vscode.DataTransfer): Promise<void> {
    return this.load().view.handleDrop(target, transfer);
  }

  /** A command of the view: `name` names its handler. */
  command<K extends keyof Handlers>(name: K): (...args: Parameters<Handlers[K]>) => unknown {
    return (...args) => (this.load().handlers[name] as (...all: unknown[]) => unknown)(...args);
  }

  /** Looks at the queue again, if the view has been shown. */
  refreshIfLoaded(): void {
    this.loaded?.view.refreshSoon();
  }

  /** The view's controller once loaded: for the tests that drive the real VS Code. */
  get view(): QueueView {
    return this.load().view;
  }

  dispose(): void {
    this.loaded?.view.dispose();
    this.changed.dispose();
  }
}
