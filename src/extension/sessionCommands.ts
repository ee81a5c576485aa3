import { deleteSession } from '../sessions/deleteSession.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import type { EditorWindow, FolderRef, RunLog } from './editorPorts.js';
import type { LoopRegistry } from './runs/loopRegistry.js';

/** How many sessions the "Which session?" picker offers. */
const MAX_PICKED = 500;

export interface SessionCommandDeps<F extends FolderRef> {
  store: SessionStore;
  /** Which sessions run now: one that runs is not deleted. */
  registry: LoopRegistry<F>;
  window: EditorWindow;
  log: RunLog;
  writeClipboard: (text: string) => Thenable<void>;
  sidecarDirOf: (sessionId: string) => string;
  /** Called after a session changed or went, so the tree and viewers show it. */
  changed: (sessionId: string) => void;
}

/** The session commands of the Sessions view and the Command Palette: what they ask, and what they do. */
export class SessionCommands<F extends FolderRef> {
  constructor(private readonly deps: SessionCommandDeps<F>) {}

  /** A session chosen by the user from the newest ones, when a command was not given one. */
  async pickSession(): Promise<string | undefined> {
    const summaries = await this.deps.store.list();
    if (summaries.length === 0) {
      void this.deps.window.showInfo('No Codeloops sessions yet.');
      return undefined;
    }
    return this.deps.window.pick(
      summaries.slice(0, MAX_PICKED).map((summary) => ({
        label: summary.prompt_preview,
        description: `${summary.project} · ${summary.outcome ?? 'not finished'}`,
        detail: summary.id,
        value: summary.id,
      })),
      'Which session?',
    );
  }

  async copyPrompt(sessionId?: string): Promise<void> {
    const id = sessionId ?? (await this.pickSession());
    if (!id) return;
    const start = await this.deps.store.startLine(id);
    await this.deps.writeClipboard(start.prompt);
    this.deps.window.flashStatus('Codeloops: prompt copied');
  }

  /** Asks first (a modal naming the session), then deletes its file, record and snapshots; never one that runs. */
  async delete(sessionId?: string): Promise<boolean> {
    const { deps } = this;
    const id = sessionId ?? (await this.pickSession());
    if (!id) return false;
    if (deps.registry.refuseRunningSession(id)) return false;
    const summary = await deps.store.summary(id);
    const choice = await deps.window.confirm(
      `Delete the session "${summary?.prompt_preview ?? id}"?`,
      'Its session file, its record and its snapshots in the repository are removed. Your files are not touched.',
      'Delete',
    );
    if (choice !== 'Delete') return false;
    const deleted = await deleteSession(deps.store, id, deps.sidecarDirOf(id));
    deps.log.info(`Deleted session ${id} and ${deleted.snapshot_refs} snapshot refs`);
    for (const warning of deleted.warnings) deps.log.warn(`Deleted session ${id}; ${warning}`);
    deps.changed(id);
    return true;
  }
}
