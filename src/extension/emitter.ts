import type { Disposable, Event } from './editorPorts.js';

/** `vscode.EventEmitter`'s job without `vscode`, so the controllers that fire events run in plain Node too. */
export class Emitter<T> implements Disposable {
  private readonly listeners = new Set<(event: T) => unknown>();

  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(event: T): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  dispose(): void {
    this.listeners.clear();
  }
}
