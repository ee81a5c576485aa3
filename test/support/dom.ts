import { Window } from 'happy-dom';

/**
 * A DOM for the viewer's code in plain Node (happy-dom): the same functions the
 * webview runs, rendering into a document tests can inspect.
 */
export function installDom(): { window: Window; remove(): void } {
  const window = new Window({ url: 'https://viewer.test/' });
  const globals = globalThis as Record<string, unknown>;
  const names = ['window', 'document', 'Node', 'HTMLElement', 'MessageEvent'] as const;
  const previous = Object.fromEntries(names.map((name) => [name, globals[name]]));
  globals.window = window;
  globals.document = window.document;
  globals.Node = window.Node;
  globals.HTMLElement = window.HTMLElement;
  globals.MessageEvent = window.MessageEvent;
  return {
    window,
    remove() {
      for (const name of names) globals[name] = previous[name];
      void window.happyDOM.close();
    },
  };
}
