import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import { openRepository } from '../../git/repository.js';
import { readSnapshotFile, snapshotRef } from '../../git/snapshots.js';
import { mapWithLimit } from '../../process/concurrency.js';
import type { ReviewItems } from '../../sessionFormat/reviewRecords.js';
import type { SessionLibrary } from '../../sessionView/sessionLibrary.js';
import { URI_SCHEMES } from '../ids.js';
import { commentCommand, resolveCommand, type ReviewCommandsDeps } from './reviewCommands.js';
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

  /** The user's comment from the gutter's "+": recorded for the next actor run, then shown in place of the draft. */
  async addComment(review: ReviewCommandsDeps, reply: vscode.CommentReply): Promise<void> {
    const file = postSnapshotOf(reply.thread.uri);
    const range = reply.thread.range;
    if (!file || !range) return;
    const place = { sessionId: file.session, iteration: file.iteration, file: file.path, line: range.start.line + 1, endLine: range.end.line + 1 };
    if (!(await commentCommand(review, place, reply.text))) return;
    reply.thread.dispose(); // the draft: the recorded comment takes its place
    await this.show(file.session);
  }

  /** Resolves (or reopens) the review item a thread shows. */
  async setResolved(review: ReviewCommandsDeps, thread: vscode.CommentThread, resolved: boolean): Promise<void> {
    const item = this.itemOf(thread);
    if (item) await resolveCommand(review, item.sessionId, item.id, resolved);
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
    const repository = await openRepository(view.start.working_dir).catch(() => undefined);
    const items = threadPlaces(view.review);
    // Each file of an iteration is read once, from the snapshot and from the workspace, a few at a time.
    const files = [...new Set(items.flatMap((item) => (item.iteration === null ? [] : [fileKey(item.iteration, item.file)])))];
    const contents = new Map<string, { snapshot: Buffer; live: string } | undefined>();
    if (repository) {
      await mapWithLimit(files, CONCURRENT_READS, async (key) => {
        const [iteration, file] = splitFileKey(key);
        const snapshot = await readSnapshotFile(repository, snapshotRef(sessionId, iteration, 'post'), file).catch(() => undefined);
        const live = snapshot && (await fs.promises.readFile(path.join(repository.root, file), 'utf8').catch(() => undefined));
        contents.set(key, snapshot && live !== undefined ? { snapshot, live } : undefined);
      });
    }
    const threads: vscode.CommentThread[] = [];
    for (const item of items) {
      if (item.iteration === null) continue;
      threads.push(this.thread(snapshotUri({ session: sessionId, iteration: item.iteration, side: 'post', path: item.file }), item, sessionId));
      // On the workspace file too, while the lines read as they did after the iteration.
      const content = contents.get(fileKey(item.iteration, item.file));
      if (repository && content && sameLines(content.snapshot.toString('utf8'), content.live, item.line, item.endLine)) {
        threads.push(this.thread(vscode.Uri.file(path.join(repository.root, item.file)), item, sessionId));
      }
    }
    for (const old of this.threads.get(sessionId) ?? []) old.dispose();
    this.threads.set(sessionId, threads);
  }

  private thread(uri: vscode.Uri, item: ThreadPlace, sessionId: string): vscode.CommentThread {
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

/** How many files are read at once when a session's threads are shown. */
const CONCURRENT_READS = 4;

const fileKey = (iteration: number, file: string): string => `${iteration}\0${file}`;
const splitFileKey = (key: string): [number, string] => {
  const at = key.indexOf('\0');
  return [Number(key.slice(0, at)), key.slice(at + 1)];
};

/** A finding or comment where it points: a file and lines of an iteration (or of the session). */
interface ThreadPlace {
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
function threadPlaces(review: ReviewItems): ThreadPlace[] {
  const targets: ThreadPlace[] = [];
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
function sameLines(snapshot: string, live: string, line: number, endLine: number): boolean {
  const pick = (text: string) => text.split('\n').slice(line - 1, endLine);
  const expected = pick(snapshot);
  return expected.length === endLine - line + 1 && expected.join('\n') === pick(live).join('\n');
}
