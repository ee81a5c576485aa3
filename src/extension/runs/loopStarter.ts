import type { Forecast } from '../../sessionFormat/forecast.js';
import type { EditorCommands, EditorWindow, FolderRef, RunLog } from '../editorPorts.js';
import type { RunController } from './runController.js';

export type LoopPrompt = { text: string } | { file: string };

export interface LoopStarterDeps<F extends FolderRef> {
  runs: RunController<F>;
  window: EditorWindow;
  commands: EditorCommands;
  log: RunLog;
  isTrusted: () => boolean;
  folders: () => readonly F[];
  /** What a run in the folder would take (`codeloops forecast`); undefined when it cannot be had. Never waited for before asking. */
  forecast: (folder: F) => Promise<Forecast | undefined>;
}

/** Why no loop runs in an untrusted workspace, wherever a loop is asked for (Run Prompt, the chat, a tool). */
export const UNTRUSTED_LOOPS_TEXT =
  'Codeloops does not run loops in an untrusted workspace: a loop runs agents that edit files and execute commands in this folder. Trust the workspace to run one; sessions can be browsed either way.';

/** Asks for the task to run in a folder, the run's forecast on its way (a box may show it when it comes). */
export type PromptChooser<F> = (folder: F, forecast: Promise<Forecast | undefined>) => Promise<LoopPrompt | undefined>;

/**
 * What happens between "Run Prompt" and a running loop: the workspace must be
 * trusted, a folder chosen, no loop already running there, a prompt given; the run's
 * forecast is asked for as soon as the folder is known.
 */
export class LoopStarter<F extends FolderRef> {
  /** The folder picked last, offered first next time. */
  private lastFolder: string | undefined;

  constructor(private readonly deps: LoopStarterDeps<F>) {}

  async start(choosePrompt: PromptChooser<F>): Promise<void> {
    const { deps } = this;
    const folder = await this.folderToRunIn();
    if (!folder || !deps.runs.canStartIn(folder)) return;
    // Started now, so that it is there (or nearly) when the box opens, and for the status bar's p90 once the loop runs.
    const forecast = deps.forecast(folder);
    const prompt = await choosePrompt(folder, forecast);
    if (!prompt) return;
    deps.log.show(true);
    await deps.runs.start(folder, prompt, { forecast });
  }

  /** The folder to run something in, once the workspace is trusted: the only one, or the user's pick. */
  async folderToRunIn(): Promise<F | undefined> {
    if (!(await this.ensureTrusted())) return undefined;
    return this.pickFolder();
  }

  /**
   * A loop runs agents that edit files and execute commands in the folder: never in a
   * workspace the user has not trusted. Browsing sessions stays available.
   */
  async ensureTrusted(action?: string, why = 'it changes files in this folder'): Promise<boolean> {
    if (this.deps.isTrusted()) return true;
    const manage = 'Manage Workspace Trust';
    const message = action
      ? `Codeloops does not ${action} in an untrusted workspace: ${why}. Trust the workspace first; sessions can be browsed either way.`
      : UNTRUSTED_LOOPS_TEXT;
    const choice = await this.deps.window.showError(message, manage);
    if (choice === manage) await this.deps.commands.execute('workbench.trust.manage');
    return false;
  }

  /** The folder to run in: the only one, or the user's pick (the last one picked offered first). */
  private async pickFolder(): Promise<F | undefined> {
    const folders = this.deps.folders();
    if (folders.length === 0) {
      void this.deps.window.showError('Codeloops runs in a workspace folder: open the folder of a git repository first.');
      return undefined;
    }
    if (folders.length === 1) return folders[0];
    const ordered = [...folders].sort((a, b) => Number(b.uri.toString() === this.lastFolder) - Number(a.uri.toString() === this.lastFolder));
    const picked = await this.deps.window.pick(
      ordered.map((folder) => ({ label: folder.name, description: folder.uri.fsPath, value: folder })),
      'Run the loop in which folder?',
    );
    if (picked) this.lastFolder = picked.uri.toString();
    return picked;
  }
}
