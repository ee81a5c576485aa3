import * as vscode from 'vscode';
import type { Hunk } from '../../git/hunks.js';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { COMMANDS } from '../ids.js';
import type { HunkReview } from './reviewCommands.js';
import { postSnapshotOf } from './reviewThreads.js';

/** What "reject this hunk" needs: the session, the iteration, the hunk's number. */
export interface HunkRef {
  sessionId: string;
  iteration: number;
  hunk: number;
}

/**
 * The hunks of an iteration where its diff is shown: a "Reject This Change" lens on
 * each hunk of the post side (VS Code shows lenses in diff editors when the user
 * turns `diffEditor.codeLens` on, and always in the snapshot opened alone), and the
 * hunk under the cursor for the editor's context menu.
 */
export class HunkLenses implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly cache = new Map<string, Promise<Hunk[]>>();
  private readonly changes = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changes.event;

  constructor(
    private readonly library: SessionLibrary,
    private readonly sidecarDirOf: (sessionId: string) => string,
    private readonly review: Pick<HunkReview, 'iterationHunks'>,
  ) {}

  /** Forgets a session's hunks (its files or review changed). */
  invalidate(sessionId: string): void {
    for (const key of this.cache.keys()) if (key.startsWith(`${sessionId}/`)) this.cache.delete(key);
    this.changes.fire();
  }

  async provideCodeLenses(document: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const file = postSnapshotOf(document.uri);
    if (!file) return [];
    const hunks = (await this.hunks(file.session, file.iteration)).filter((hunk) => hunk.path === file.path);
    return hunks.map((hunk) => {
      const line = Math.max(0, Math.min(document.lineCount - 1, hunk.newStart - 1));
      const ref: HunkRef = { sessionId: file.session, iteration: file.iteration, hunk: hunk.number };
      return new vscode.CodeLens(new vscode.Range(line, 0, line, 0), {
        title: `$(discard) Reject This Change (hunk ${hunk.number})`,
        tooltip: 'Undo this hunk in your files and tell the next actor run why',
        command: COMMANDS.rejectHunk,
        arguments: [ref],
      });
    });
  }

  /**
   * The hunk "Reject This Change" means: from a lens, the one it names; from the editor's
   * context menu or title, the one under the cursor (the user is told when there is none).
   */
  async hunkOf(ref: unknown): Promise<HunkRef | undefined> {
    if (isHunkRef(ref)) return ref;
    const editor = vscode.window.activeTextEditor;
    const found = editor ? await this.hunkAt(editor.document.uri, editor.selection.active.line + 1) : undefined;
    if (!found) void vscode.window.showInformationMessage("Codeloops: put the cursor in a change on the right side of an iteration's diff, then reject it.");
    return found;
  }

  /** The hunk at a line (1-based) of a post-side snapshot document, if the line is in one. */
  async hunkAt(uri: vscode.Uri, line: number): Promise<HunkRef | undefined> {
    const file = postSnapshotOf(uri);
    if (!file) return undefined;
    const hunks = (await this.hunks(file.session, file.iteration)).filter((hunk) => hunk.path === file.path);
    // A hunk covers its new lines; one that only deletes sits at the line after which it deleted.
    const hunk =
      hunks.find((candidate) => line >= candidate.newStart && line < candidate.newStart + Math.max(candidate.newLines, 1)) ??
      (hunks.length === 1 && hunks[0]!.newStart === 0 ? hunks[0] : undefined);
    return hunk ? { sessionId: file.session, iteration: file.iteration, hunk: hunk.number } : undefined;
  }

  private hunks(sessionId: string, iteration: number): Promise<Hunk[]> {
    const key = `${sessionId}/${iteration}`;
    let found = this.cache.get(key);
    if (!found) {
      found = (async () => {
        const view = await this.library.view(sessionId);
        const files = await this.review.iterationHunks({ sessionId, workingDir: view.start.working_dir, sidecarDir: this.sidecarDirOf(sessionId) }, iteration);
        return (files ?? []).flatMap((patch) => patch.hunks);
      })().catch(() => []);
      this.cache.set(key, found);
    }
    return found;
  }

  dispose(): void {
    this.changes.dispose();
  }
}

function isHunkRef(value: unknown): value is HunkRef {
  const ref = value as Partial<HunkRef> | undefined;
  return typeof ref?.sessionId === 'string' && typeof ref.iteration === 'number' && typeof ref.hunk === 'number';
}
