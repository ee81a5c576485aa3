import type { ViewerMessage, ViewerState } from '../src/sessionView/viewerProtocol.js';

/**
 * How a page talks to its host: postMessage in the editor's webview, HTTP and
 * Server-Sent Events in the browser. The page itself does not know which. What
 * arrives is `unknown` until `onHostMessage` has checked it against the page's
 * protocol (`viewerProtocol.ts`, `comparisonProtocol.ts`): one check, whatever the host.
 */
export interface PageTransport<Outgoing, State> {
  send(message: Outgoing): void;
  onMessage(listener: (message: unknown) => void): void;
  /** What `saveState` kept, as it came back (from the editor, or the tab's storage). */
  loadState(): unknown;
  saveState(state: State): void;
}

/** The session viewer's transport: the editor's webview, or the browser page over HTTP. */
export type Transport = PageTransport<ViewerMessage, ViewerState>;

/** What checks a host's message: one of the protocol's zod schemas. */
interface MessageSchema<T> {
  safeParse(raw: unknown): { success: true; data: T } | { success: false; error: { issues: readonly unknown[] } };
}

/** Hands the page each message of its host's protocol; any other is dropped, with a warning for whoever debugs the page. */
export function onHostMessage<T>(transport: Pick<PageTransport<unknown, unknown>, 'onMessage'>, schema: MessageSchema<T>, handle: (message: T) => void): void {
  transport.onMessage((raw) => {
    const message = schema.safeParse(raw);
    if (message.success) handle(message.data);
    else console.warn('codeloops: ignored a message that is not one of its host’s', message.error.issues.slice(0, 3));
  });
}
