/**
 * The few things the extension's controllers ask of VS Code, as plain interfaces:
 * `vscodeWindow.ts` implements them with the real API in the composition root, and
 * the controllers' tests stub them in plain Node (no editor needed to test a
 * decision). Types only: nothing here loads `vscode`.
 */

export interface Disposable {
  dispose(): void;
}

/** A listener registration, shaped like `vscode.Event` so VS Code's callers can use it. */
export type Event<T> = (listener: (event: T) => unknown) => Disposable;

/** An item of a quick pick, carrying what picking it means. */
export interface PickItem<T> {
  label: string;
  description?: string;
  detail?: string;
  value: T;
}

/** Messages, questions and pickers: `vscode.window`. */
export interface EditorWindow {
  /** A notification; resolves to the action chosen, if any. */
  showInfo(message: string, ...actions: string[]): Thenable<string | undefined>;
  showWarning(message: string, ...actions: string[]): Thenable<string | undefined>;
  showError(message: string, ...actions: string[]): Thenable<string | undefined>;
  /** A modal question with a detail and one action; resolves to the action if chosen. */
  confirm(question: string, detail: string, action: string): Thenable<string | undefined>;
  pick<T>(items: readonly PickItem<T>[], placeholder: string): Thenable<T | undefined>;
  /** A line of text from the user; undefined when they cancel (an empty answer is ''). */
  input(prompt: string, placeholder: string): Thenable<string | undefined>;
  /** A line of text in a box that opens at once and whose prompt line can change while it is open (`AskOptions.promptLater`). */
  ask(options: AskOptions): Thenable<string | undefined>;
  /** Opens a file in an editor. */
  openFile(filePath: string): Thenable<unknown>;
  /** A short-lived message in the status bar. */
  flashStatus(text: string): void;
}

/** A text box as `EditorWindow.ask` opens it. */
export interface AskOptions {
  title: string;
  prompt: string;
  placeholder: string;
  value: string;
  /** Why the text cannot be taken, or undefined when it can. */
  validate: (value: string) => string | undefined;
  /** A prompt line that replaces `prompt` when it resolves while the box is open (something worked out meanwhile); undefined leaves it. */
  promptLater?: Thenable<string | undefined>;
}

/** Commands and context keys: `vscode.commands`. */
export interface EditorCommands {
  execute(command: string, ...args: unknown[]): Thenable<unknown>;
  setContext(key: string, value: unknown): void;
}

/** The Codeloops output channel (a `vscode.LogOutputChannel` is one). */
export interface RunLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
  show(preserveFocus?: boolean): void;
}

/** A workspace folder as the controllers need it: its name and where it is. */
export interface FolderRef {
  readonly name: string;
  readonly uri: { readonly fsPath: string; toString(): string };
}
