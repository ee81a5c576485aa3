import path from 'node:path';
import * as vscode from 'vscode';
import { isWithinFolder } from '../../files/folderPaths.js';
import type { FileChange } from '../../sessionFormat/runEvents.js';
import { openRepository } from '../../git/repository.js';
import { readSnapshot, snapshotRef } from '../../git/snapshots.js';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { recordedDiffUri, snapshotUri } from './snapshotContentProvider.js';

/**
 * Opens an iteration's changes in the native diff editors: one file with
 * `vscode.diff`, all of them with `vscode.changes` (the multi-file diff editor).
 * Without focus, so a running loop's editor keeps it. Sessions whose snapshots are
 * gone fall back to the recorded unified diff.
 */
export class DiffOpener {
  constructor(
    private readonly library: SessionLibrary,
    /** While a loop runs, diffs open beside the current editor so it stays in front. */
    private readonly loopRunning: () => boolean,
  ) {}

  private showOptions(): vscode.TextDocumentShowOptions {
    return { preserveFocus: true, preview: true, viewColumn: this.loopRunning() ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active };
  }

  async openFile(sessionId: string, iteration: number, file: FileChange): Promise<void> {
    const context = await this.snapshotsOf(sessionId, iteration);
    if (!context) return this.openRecordedDiff(sessionId, iteration);
    const left = snapshotUri({ session: sessionId, iteration, side: 'pre', path: file.oldPath ?? file.path });
    const right = snapshotUri({ session: sessionId, iteration, side: 'post', path: file.path });
    await vscode.commands.executeCommand('vscode.diff', left, right, `${path.posix.basename(file.path)} (iteration ${iteration})`, this.showOptions());
  }

  /** Opens a file of a session's repository at a line; a path that would leave the repository is refused. */
  async openLocation(sessionId: string, file: string, line: number | null): Promise<void> {
    const start = await this.library.store.startLine(sessionId);
    const root = (await openRepository(start.working_dir)).root;
    const target = path.resolve(root, file);
    if (!isWithinFolder(root, target)) throw new Error(`${file} is not inside ${root}.`);
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    await vscode.window.showTextDocument(vscode.Uri.file(target), { selection: new vscode.Range(position, position), preview: true });
  }

  async openIteration(sessionId: string, iteration: number): Promise<void> {
    const view = await this.library.view(sessionId);
    const entry = view.iterations.find((it) => it.iteration_number === iteration);
    if (!entry) throw new Error(`Session ${sessionId} has no iteration ${iteration}.`);
    if (entry.files.length === 0) {
      void vscode.window.showInformationMessage(`Iteration ${iteration} changed no files.`);
      return;
    }
    const context = await this.snapshotsOf(sessionId, iteration);
    if (!context) return this.openRecordedDiff(sessionId, iteration);
    const resources = entry.files.map((file) => [
      vscode.Uri.file(path.join(context.root, file.path)),
      snapshotUri({ session: sessionId, iteration, side: 'pre', path: file.oldPath ?? file.path }),
      snapshotUri({ session: sessionId, iteration, side: 'post', path: file.path }),
    ]);
    await vscode.commands.executeCommand('vscode.changes', `Codeloops: iteration ${iteration} (${entry.files.length} files)`, resources);
  }

  private async openRecordedDiff(sessionId: string, iteration: number): Promise<void> {
    const document = await vscode.workspace.openTextDocument(recordedDiffUri(sessionId, iteration));
    await vscode.languages.setTextDocumentLanguage(document, 'diff');
    await vscode.window.showTextDocument(document, this.showOptions());
    void vscode.window.showInformationMessage(
      `The snapshots of iteration ${iteration} are gone from the repository: showing the diff recorded in the session.`,
    );
  }

  /** The repository root when both snapshots of the iteration still exist. */
  private async snapshotsOf(sessionId: string, iteration: number): Promise<{ root: string } | undefined> {
    const summary = await this.library.store.summary(sessionId);
    if (!summary) throw new Error(`No session ${sessionId}.`);
    try {
      const repository = await openRepository(summary.working_dir);
      const [pre, post] = await Promise.all(['pre', 'post'].map((side) => readSnapshot(repository, snapshotRef(sessionId, iteration, side as 'pre' | 'post'))));
      return pre && post ? { root: repository.root } : undefined;
    } catch {
      return undefined; // the folder or the repository is gone
    }
  }
}
