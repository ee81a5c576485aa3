import type { Disposable, EditorCommands, EditorWindow, FolderRef, PickItem, RunLog } from '../../src/extension/editorPorts.js';
import { CandidateRuns } from '../../src/extension/candidates/candidateRuns.js';
import { LoopRegistry } from '../../src/extension/runs/loopRegistry.js';
import { RunController } from '../../src/extension/runs/runController.js';
import { SessionCommands } from '../../src/extension/sessionCommands.js';
import type { TimeTravelDeps } from '../../src/extension/timeTravel/timeTravelCommands.js';
import type { SessionStore } from '../../src/sessions/sessionStore.js';
import { RunnerClient } from '../../src/extension/runner/runnerClient.js';
import { forecastIn } from '../../src/extension/runner/runnerQueries.js';
import type { Forecast } from '../../src/sessionFormat/forecast.js';
import { sidecarDirOf } from '../../src/sessionFormat/sessionFiles.js';
import { cliPath } from './cliProcess.js';

/** What the user saw: one entry per notification, question or picker, in order. */
export interface Shown {
  kind: 'info' | 'warning' | 'error' | 'confirm' | 'pick' | 'input' | 'openFile' | 'status';
  text: string;
  /** The buttons offered (for a pick: the labels, in order). */
  actions: string[];
  /** The detail of a modal question. */
  detail?: string;
  /** For a box whose prompt line changes while it is open (`ask`): the line it changed to. */
  later?: string;
}

/**
 * The editor's ports (`src/extension/editorPorts.ts`) for tests in plain Node: it
 * records what a controller showed and answers as a user would, by script. An
 * answer is chosen by the text shown (the first rule whose pattern matches);
 * without one, the user dismisses it.
 */
export class FakeEditor {
  readonly shown: Shown[] = [];
  readonly executed: { command: string; args: unknown[] }[] = [];
  readonly context = new Map<string, unknown>();
  readonly logLines: string[] = [];
  private readonly answers: { pattern: RegExp; answer: string | ((labels: string[]) => string | undefined) }[] = [];
  private pending: Promise<unknown>[] = [];
  private shownWaiters: { kind: Shown['kind']; resolve: (entry: Shown) => void }[] = [];

  /** Resolves at the next thing of this kind shown (a box opening, say), as it opens. */
  nextShown(kind: Shown['kind']): Promise<Shown> {
    return new Promise((resolve) => this.shownWaiters.push({ kind, resolve }));
  }

  private show(entry: Shown): void {
    this.shown.push(entry);
    const waiting = this.shownWaiters.filter((waiter) => waiter.kind === entry.kind);
    this.shownWaiters = this.shownWaiters.filter((waiter) => waiter.kind !== entry.kind);
    for (const waiter of waiting) waiter.resolve(entry);
  }

  /** Answers whatever matches `pattern` with `answer` (a button, or for a picker the label to pick). */
  answer(pattern: RegExp, answer: string | ((labels: string[]) => string | undefined)): this {
    this.answers.push({ pattern, answer });
    return this;
  }

  /** Resolves once every answer given so far, and what it set off, has been handled. */
  async settled(): Promise<void> {
    while (this.pending.length > 0) {
      const pending = this.pending;
      this.pending = [];
      await Promise.all(pending);
      // Let `.then` callbacks of the answers run, and the commands they started.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  texts(kind?: Shown['kind']): string[] {
    return this.shown.filter((entry) => kind === undefined || entry.kind === kind).map((entry) => entry.text);
  }

  private respond(entry: Shown): Promise<string | undefined> {
    this.shown.push(entry);
    const rule = this.answers.find((candidate) => candidate.pattern.test(entry.text));
    const chosen = rule === undefined ? undefined : typeof rule.answer === 'function' ? rule.answer(entry.actions) : rule.answer;
    const reply = Promise.resolve(chosen !== undefined && entry.actions.includes(chosen) ? chosen : undefined);
    this.pending.push(reply);
    return reply;
  }

  readonly window: EditorWindow = {
    showInfo: (text, ...actions) => this.respond({ kind: 'info', text, actions }),
    showWarning: (text, ...actions) => this.respond({ kind: 'warning', text, actions }),
    showError: (text, ...actions) => this.respond({ kind: 'error', text, actions }),
    confirm: (text, detail, action) => this.respond({ kind: 'confirm', text, detail, actions: [action] }),
    pick: async <T>(items: readonly PickItem<T>[], placeholder: string) => {
      const label = await this.respond({ kind: 'pick', text: placeholder, actions: items.map((item) => item.label) });
      return items.find((item) => item.label === label)?.value;
    },
    input: async (prompt) => {
      this.shown.push({ kind: 'input', text: prompt, actions: [] });
      const rule = this.answers.find((candidate) => candidate.pattern.test(prompt));
      return rule === undefined ? undefined : typeof rule.answer === 'function' ? rule.answer([]) : rule.answer;
    },
    // The box records its first prompt line as it opens, and the line it changes to; the user answers once they have read it.
    ask: async (options) => {
      const entry: Shown = { kind: 'input', text: options.prompt, actions: [] };
      this.show(entry);
      const later = await options.promptLater;
      if (later !== undefined) entry.later = later;
      const rule = this.answers.find((candidate) => candidate.pattern.test(options.title) || candidate.pattern.test(options.prompt));
      const answer = rule === undefined ? undefined : typeof rule.answer === 'function' ? rule.answer([]) : rule.answer;
      return answer !== undefined && options.validate(answer) === undefined ? answer : undefined;
    },
    openFile: async (filePath) => {
      this.shown.push({ kind: 'openFile', text: filePath, actions: [] });
    },
    flashStatus: (text) => void this.shown.push({ kind: 'status', text, actions: [] }),
  };

  /** What the editor put on the clipboard, in order. */
  readonly clipboard: string[] = [];

  readonly commands: EditorCommands = {
    execute: async (command, ...args) => {
      this.executed.push({ command, args });
    },
    setContext: (key, value) => void this.context.set(key, value),
  };

  readonly log: RunLog = {
    info: (message) => void this.logLines.push(`info: ${message}`),
    warn: (message) => void this.logLines.push(`warn: ${message}`),
    error: (message) => void this.logLines.push(`error: ${message}`),
    debug: (message) => void this.logLines.push(`debug: ${message}`),
    show: () => void this.logLines.push('(shown)'),
  };

  private loops: LoopRegistry<FolderRef> | undefined;
  /** The window's running loops, as the extension keeps them: one registry per editor window. */
  get registry(): LoopRegistry<FolderRef> {
    this.loops ??= new LoopRegistry<FolderRef>({ window: this.window, commands: this.commands, log: this.log });
    return this.loops;
  }

  /** A status item that records it was shown and taken away. */
  readonly statusItems: { folder: string; disposed: boolean }[] = [];
  showStatus = (loop: { folder: FolderRef }): Disposable => {
    const item = { folder: loop.folder.name, disposed: false };
    this.statusItems.push(item);
    return { dispose: () => (item.disposed = true) };
  };
}

/** A workspace folder as VS Code gives one: a name and a file URI. */
export function folderAt(fsPath: string, name = fsPath.split('/').at(-1) ?? fsPath): FolderRef {
  return { name, uri: { fsPath, toString: () => `file://${fsPath}` } };
}

/**
 * The extension's run controller on the editor's stubbed ports: the real runner
 * (`dist/cli.js`) started as the extension starts it, with this environment.
 */
export function runControllerFor(
  editor: FakeEditor,
  env: Record<string, string | undefined>,
  options: { editorSettings?: string; showAgentText?: boolean; /** Whether VS Code trusts the workspace (default yes). */ trusted?: boolean } = {},
): RunController<FolderRef> {
  return new RunController<FolderRef>({
    ...runnerPortsOf(editor, env, options.trusted ?? true),
    editorSettingsJson: () => options.editorSettings,
    showAgentText: () => options.showAgentText ?? true,
  });
}

/** The runner client as the extension makes it: the built CLI, this environment, the workspace trusted or not (default yes). */
export function runnerClientFor(env: Record<string, string | undefined>, trusted = true): RunnerClient {
  return new RunnerClient({ cliPath: cliPath(), nodePath: process.execPath, env: { ...process.env, ...env }, isTrusted: () => trusted });
}

/** What the controllers that start the runner share: the window's registry and ports, the runner client. */
function runnerPortsOf(editor: FakeEditor, env: Record<string, string | undefined>, trusted = true) {
  const { registry, log, window, commands, showStatus } = editor;
  return { registry, log, window, commands, showStatus, runner: runnerClientFor(env, trusted) };
}

/** The forecast port as the extension wires it: the built CLI's `forecast --json` in the folder, with this environment. */
export function forecastFor(env: Record<string, string | undefined>, editorSettings?: string): (folder: FolderRef) => Promise<Forecast | undefined> {
  return (folder) => forecastIn(runnerClientFor(env), { workingDir: folder.uri.fsPath, editorSettings });
}

/** The extension's candidate groups on the editor's stubbed ports, in the same window (registry) as its single loops. */
export function candidateRunsFor(editor: FakeEditor, env: Record<string, string | undefined>): CandidateRuns<FolderRef> {
  return new CandidateRuns<FolderRef>({ ...runnerPortsOf(editor, env), editorSettingsJson: () => undefined });
}

/** The session commands (copy, delete, pick) as the editor wires them, on the stubbed ports. */
export function sessionCommandsFor(editor: FakeEditor, store: SessionStore, changed: (sessionId: string) => void = () => {}): SessionCommands<FolderRef> {
  const { registry, window, log } = editor;
  return new SessionCommands({
    store,
    registry,
    window,
    log,
    writeClipboard: async (text) => void editor.clipboard.push(text),
    sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
    changed,
  });
}

/** Rollback, its undo and resume as the editor wires them, on the stubbed ports; the sidecars where the environment says. */
export function timeTravelFor(
  editor: FakeEditor,
  runs: RunController<FolderRef>,
  options: Pick<TimeTravelDeps<FolderRef>, 'store' | 'folderOf' | 'changed'>,
): TimeTravelDeps<FolderRef> {
  return {
    ...options,
    runs,
    registry: editor.registry,
    sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
    log: editor.log,
    window: editor.window,
    commands: editor.commands,
  };
}
