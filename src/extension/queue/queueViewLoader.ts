import path from 'node:path';
import * as vscode from 'vscode';
import type { QueueTask } from '../../sessionFormat/queueRecords.js';
import { QUEUE_DRAG_MIME } from '../ids.js';
import { lazyBundle } from '../lazyBundle.js';
import type * as QueueViewModule from './queueView.js';
import type { QueueView } from './queueView.js';

type Handlers = ReturnType<typeof QueueViewModule.queueCommandHandlers>;

/**
 * The Queue view as the extension's own bundle knows it: a stand-in provider and the
 * commands' entry points, which load the view's bundle (`dist/queueView.js`, built from
 * `queueView.ts`, through `lazyBundle`) the first time the view is shown or a queue
 * command runs.
 */
export class LazyQueueView implements vscode.TreeDataProvider<QueueTask>, vscode.TreeDragAndDropController<QueueTask>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<QueueTask | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  readonly dragMimeTypes = [QUEUE_DRAG_MIME];
  readonly dropMimeTypes = this.dragMimeTypes;
  private loaded: { view: QueueView; handlers: Handlers } | undefined;
  // This bundle is dist/extension.js: the extension's folder is the one above.
  private readonly queueViewModule = lazyBundle<typeof QueueViewModule>(path.dirname(__dirname), 'queueView');

  /** `compose` makes the view from its bundle's module: the composition root says with which parts. */
  constructor(private readonly compose: (module: typeof QueueViewModule) => QueueView) {}

  load(): { view: QueueView; handlers: Handlers } {
    if (this.loaded) return this.loaded;
    const module = this.queueViewModule();
    const view = this.compose(module);
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
