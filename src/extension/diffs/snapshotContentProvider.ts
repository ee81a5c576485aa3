import * as vscode from 'vscode';
import { openRepository } from '../../git/repository.js';
import { readSnapshotFile, snapshotRef } from '../../git/snapshots.js';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { URI_SCHEMES } from '../ids.js';
import { parseRecordedDiffQuery, parseSnapshotQuery, snapshotQuery, type SnapshotFile } from './snapshotUris.js';

export function snapshotUri(file: SnapshotFile): vscode.Uri {
  return vscode.Uri.from({ scheme: URI_SCHEMES.snapshot, path: `/${file.path}`, query: snapshotQuery(file) });
}

export function recordedDiffUri(session: string, iteration: number): vscode.Uri {
  return vscode.Uri.from({ scheme: URI_SCHEMES.recordedDiff, path: `/${session}/iteration-${iteration}.diff`, query: JSON.stringify({ session, iteration }) });
}

/**
 * Read-only documents for diffs: a file as it was in an iteration's pre or post
 * snapshot (`git cat-file` on `refs/codeloops/<session>/<n>/<side>`), and an
 * iteration's recorded diff for sessions whose snapshots are gone.
 */
export class SnapshotContentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly library: SessionLibrary) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    if (uri.scheme === URI_SCHEMES.recordedDiff) {
      const { session, iteration } = parseRecordedDiffQuery(uri.query);
      const detail = await this.library.detail(session, iteration);
      return detail?.diff || '(this iteration changed no files)';
    }
    const file = parseSnapshotQuery(uri.query);
    const bytes = await readSnapshotFile(await this.repositoryOf(file.session), snapshotRef(file.session, file.iteration, file.side), file.path);
    if (bytes === undefined) return '';
    return bytes.includes(0) ? `(binary file, ${bytes.length.toLocaleString('en-US')} bytes)` : bytes.toString('utf8');
  }

  private async repositoryOf(sessionId: string) {
    const summary = await this.library.store.summary(sessionId);
    if (!summary) throw new Error(`No session ${sessionId}.`);
    return openRepository(summary.working_dir);
  }
}
