import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { openRepository } from '../../git/repository.js';
import { readSnapshotFile, snapshotRef } from '../../git/snapshots.js';
import type { ReviewItems } from '../../sessionFormat/reviewRecords.js';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { URI_SCHEMES } from '../ids.js';
import { snapshotUri } from '../diffs/snapshotContentProvider.js';
import { parseSnapshotQuery, type SnapshotFile } from '../diffs/snapshotUris.js';

/** The review item a thread shows, for the resolve and reopen commands. */
export interface ThreadItem {
  sessionId: string;
  id: string;
}

/**
 * The critic's findings and the user's comments as review comments where the code
 * is: on the iteration's diff (its post side) and on the file in the workspace while
 * the lines still read as they did. Not the Problems panel: they are a review, not
 * diagnostics. The user comments on any line of an iteration's diff (the gutter's
 * "+"), and resolves or reopens threads from their title.
 */
export class ReviewThreads implements vscode.Disposable {
  readonly controller = vscode.comments.createCommentController('codeloops.review', 'Codeloops review');
  private readonly threads = new Map<string, vscode.CommentThread[]>();
  private readonly items = new WeakMap<vscode.CommentThread, ThreadItem>();

  constructor(private readonly library: SessionLibrary) {
    this.controller.options = { prompt: 'Comment for the next actor run…', placeHolder: 'What should the agent change here?' };
    // Comments go on an iteration's code as the actor left it: the post side of its diff.
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document) => (postSnapshotOf(document.uri) ? [new vscode.Range(0, 0, Math.max(0, document.lineCount - 1), 0)] : []),
    };
  }

  itemOf(thread: vscode.CommentThread): ThreadItem | undefined {
    return this.items.get(thread);
  }

  /** The threads shown for a session (for tests and the curious). */
  threadsOf(sessionId: string): readonly vscode.CommentThread[] {
    return this.threads.get(sessionId) ?? [];
  }

  /** Whether the session's threads are shown (they are refreshed when it changes). */
  isShown(sessionId: string): boolean {
    return this.threads.has(sessionId);
  }

  /** Shows (again) a session's findings and comments where the code is. */
  async show(sessionId: string): Promise<void> {
    const view = await this.library.view(sessionId);
    const root = await openRepository(view.start.working_dir)
      .then((repository) => repository)
      .catch(() => undefined);
    const threads: vscode.CommentThread[] = [];
    for (const item of reviewTargets(view.review)) {
      const post = item.iteration === null ? undefined : snapshotUri({ session: sessionId, iteration: item.iteration, side: 'post', path: item.file });
      if (post) threads.push(this.thread(post, item, sessionId));
      // On the workspace file too, while the lines read as they did after the iteration.
      if (root && item.iteration !== null) {
        const snapshot = await readSnapshotFile(root, snapshotRef(sessionId, item.iteration, 'post'), item.file).catch(() => undefined);
        const live = path.join(root.root, item.file);
        if (snapshot && sameLines(snapshot, live, item.line, item.endLine)) threads.push(this.thread(vscode.Uri.file(live), item, sessionId));
      }
    }
    for (const old of this.threads.get(sessionId) ?? []) old.dispose();
    this.threads.set(sessionId, threads);
  }

  private thread(uri: vscode.Uri, item: ReviewTarget, sessionId: string): vscode.CommentThread {
    const range = new vscode.Range(item.line - 1, 0, item.endLine - 1, 0);
    const comment: vscode.Comment = {
      // Plain text: a critic's words are never rendered as Markdown that could carry links or HTML.
      body: item.text,
      mode: vscode.CommentMode.Preview,
      author: { name: item.author },
      label: item.open ? (item.claimed ? 'open · the actor says addressed' : 'open') : 'resolved',
    };
    const thread = this.controller.createCommentThread(uri, range, [comment]);
    thread.label = item.label;
    thread.canReply = false;
    thread.contextValue = item.open ? 'codeloops.open' : 'codeloops.resolved';
    thread.state = item.open ? vscode.CommentThreadState.Unresolved : vscode.CommentThreadState.Resolved;
    thread.collapsibleState = item.open ? vscode.CommentThreadCollapsibleState.Expanded : vscode.CommentThreadCollapsibleState.Collapsed;
    this.items.set(thread, { sessionId, id: item.id });
    return thread;
  }

  dispose(): void {
    for (const threads of this.threads.values()) for (const thread of threads) thread.dispose();
    this.threads.clear();
    this.controller.dispose();
  }
}

interface ReviewTarget {
  id: string;
  iteration: number | null;
  file: string;
  line: number;
  endLine: number;
  text: string;
  author: string;
  label: string;
  open: boolean;
  claimed: boolean;
}

/** The findings and comments that point at a file and lines. */
function reviewTargets(review: ReviewItems): ReviewTarget[] {
  const targets: ReviewTarget[] = [];
  for (const finding of review.findings) {
    if (!finding.anchored || finding.file === null || finding.line === null) continue;
    targets.push({
      id: finding.id,
      iteration: finding.iteration,
      file: finding.file,
      line: finding.line,
      endLine: finding.end_line ?? finding.line,
      text: finding.message,
      author: 'Codeloops critic',
      label: `${finding.id} · ${finding.severity}`,
      open: finding.open,
      claimed: finding.claimed,
    });
  }
  for (const comment of review.comments) {
    if (comment.file === null || comment.line === null) continue;
    targets.push({
      id: comment.id,
      iteration: comment.iteration,
      file: comment.file,
      line: comment.line,
      endLine: comment.end_line ?? comment.line,
      text: comment.text,
      author: 'You',
      label: `${comment.id} · your comment`,
      open: comment.open,
      claimed: comment.claimed,
    });
  }
  return targets;
}

/** The iteration and file a post-side snapshot document shows, or undefined for any other document. */
export function postSnapshotOf(uri: vscode.Uri): SnapshotFile | undefined {
  if (uri.scheme !== URI_SCHEMES.snapshot) return undefined;
  try {
    const file = parseSnapshotQuery(uri.query);
    return file.side === 'post' ? file : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a workspace file's lines `line`–`endLine` are those of the snapshot. */
function sameLines(snapshot: Buffer, file: string, line: number, endLine: number): boolean {
  let live: string;
  try {
    live = fs.readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const pick = (text: string) => text.split('\n').slice(line - 1, endLine);
  const expected = pick(snapshot.toString('utf8'));
  return expected.length === endLine - line + 1 && expected.join('\n') === pick(live).join('\n');
}
