import type { Disposable } from '../editorPorts.js';

/**
 * What the chat participant and the language model tools ask of VS Code's chat, as
 * plain interfaces: `chatRegistration.ts` adapts the real `ChatResponseStream` and
 * cancellation token, and the controllers' tests record what a response showed.
 * Types only: nothing here loads `vscode`.
 */

/** A button in a response: a command of ours, with JSON arguments (they cross to the chat view and back). */
export interface ChatCommand {
  command: string;
  title: string;
  arguments?: unknown[];
}

/** A chat response as it streams: `vscode.ChatResponseStream`. */
export interface ChatStream {
  /** Markdown text; `commands` names the commands its `command:` links may run (none: links to commands stay inert). */
  markdown(text: string, commands?: readonly string[]): void;
  /** A transient line that says what happens now (replaced by the next). */
  progress(text: string): void;
  button(command: ChatCommand): void;
}

/** `vscode.CancellationToken`: the user stopped the request. */
export interface CancelToken {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => unknown): Disposable;
}

/** A request to `@codeloops`: the slash command chosen (`run`, `status`…), and the text after it. */
export interface ChatAsk {
  command?: string;
  prompt: string;
}

/** What a response leaves for its follow-ups (`vscode.ChatResult.metadata`): JSON only. */
export interface ChatOutcomeMetadata {
  command: string;
  /** The session the response ran or showed. */
  sessionId?: string;
  /** How the loop ended, when it ran to its end here. */
  status?: string;
  /** What was asked without a command: offered back as a `/run`. */
  task?: string;
}

/** A follow-up suggestion: a message the user can send with one click (`vscode.ChatFollowup`). */
export interface ChatFollowupSuggestion {
  label: string;
  prompt: string;
  command?: string;
}
