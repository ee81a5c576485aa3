import { LoopChat } from '../../src/extension/chat/loopChat.js';
import type { CancelToken, ChatCommand, ChatStream } from '../../src/extension/chat/chatPorts.js';
import { LoopTools } from '../../src/extension/chat/loopTools.js';
import type { FolderRef } from '../../src/extension/editorPorts.js';
import { LoopStarter } from '../../src/extension/runs/loopStarter.js';
import { planIn } from '../../src/extension/runner/runnerQueries.js';
import { resumeSession } from '../../src/extension/timeTravel/timeTravelCommands.js';
import { sessionsDir } from '../../src/sessionFormat/sessionFiles.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { FakeEditor, folderAt, forecastFor, runControllerFor, runnerClientFor, timeTravelFor } from './fakeEditor.js';

/** What a chat response showed, part by part, in order. */
export type ChatPart =
  { kind: 'markdown'; text: string; commands: readonly string[] } | { kind: 'progress'; text: string } | { kind: 'button'; command: ChatCommand };

/** VS Code's chat response stream for tests in plain Node: it records every part. */
export class FakeChatStream implements ChatStream {
  readonly parts: ChatPart[] = [];
  private waiters: { test: (part: ChatPart) => boolean; resolve: () => void }[] = [];

  markdown(text: string, commands: readonly string[] = []): void {
    this.push({ kind: 'markdown', text, commands });
  }
  progress(text: string): void {
    this.push({ kind: 'progress', text });
  }
  button(command: ChatCommand): void {
    this.push({ kind: 'button', command });
  }

  /** Resolves once a part like this has been shown (at once if one was). */
  shows(test: (part: ChatPart) => boolean): Promise<void> {
    if (this.parts.some(test)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /** All the Markdown, in order, as one text. */
  text(): string {
    return this.parts.flatMap((part) => (part.kind === 'markdown' ? [part.text] : [])).join('');
  }

  buttons(): ChatCommand[] {
    return this.parts.flatMap((part) => (part.kind === 'button' ? [part.command] : []));
  }

  private push(part: ChatPart): void {
    this.parts.push(part);
    const ready = this.waiters.filter((waiter) => waiter.test(part));
    this.waiters = this.waiters.filter((waiter) => !waiter.test(part));
    for (const waiter of ready) waiter.resolve();
  }
}

/** A cancellation token the test cancels, as the chat's stop button does. */
export class FakeCancelToken implements CancelToken {
  isCancellationRequested = false;
  private listeners: (() => unknown)[] = [];
  onCancellationRequested(listener: () => unknown) {
    this.listeners.push(listener);
    return { dispose: () => (this.listeners = this.listeners.filter((other) => other !== listener)) };
  }
  cancel(): void {
    this.isCancellationRequested = true;
    for (const listener of this.listeners) listener();
  }
}

/**
 * The chat participant and the tools as the extension wires them, on the editor's
 * stubbed ports: the real runner (dist/cli.js) in `repo`, the one workspace folder,
 * the sessions where the environment says.
 */
export function chatFor(repo: string, env: Record<string, string>, options: { editorSettings?: string; trusted?: boolean; platformRefusal?: string } = {}) {
  const editor = new FakeEditor();
  const folder = folderAt(repo);
  const isTrusted = () => options.trusted ?? true;
  const runs = runControllerFor(editor, env, { editorSettings: options.editorSettings, trusted: isTrusted(), showAgentText: false });
  const forecast = forecastFor(env, options.editorSettings);
  const starter = new LoopStarter<FolderRef>({
    runs,
    window: editor.window,
    commands: editor.commands,
    log: editor.log,
    isTrusted,
    folders: () => [folder],
    forecast,
  });
  const store = new SessionStore(sessionsDir());
  const folderOf = (filePath: string) => (filePath === repo ? folder : undefined);
  const timeTravel = timeTravelFor(editor, runs, { store, folderOf, changed: () => {} });
  const shared = { runs, isTrusted, store, forecast, platformRefusal: options.platformRefusal ?? null };
  const chat = new LoopChat<FolderRef>({ ...shared, starter, folderOf, resume: (sessionId, overrides) => resumeSession(timeTravel, sessionId, overrides) });
  const tools = new LoopTools<FolderRef>({
    ...shared,
    folders: () => [folder],
    plan: (at, task, overrides) =>
      planIn(runnerClientFor(env, isTrusted()), { workingDir: at.uri.fsPath, editorSettings: options.editorSettings }, task, overrides),
  });
  return { editor, folder, runs, store, chat, tools };
}
