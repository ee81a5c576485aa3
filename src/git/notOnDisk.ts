import { gitBytes, gitText, SNAPSHOT_IDENTITY } from './gitProcess.js';
import type { Repository } from './repository.js';
import { removeTemporaryIndex, temporaryIndexPath } from './temporaryIndex.js';

/**
 * The files a snapshot holds that were not on disk when it was taken.
 *
 * A sparse checkout leaves the files outside its cone out of the work tree, flagged
 * skip-worktree in the index; a snapshot keeps them as the index has them (they are not
 * deletions), so its tree alone cannot say they were absent. Beside it, then, a record:
 * a tree of just those files, committed, reachable from the snapshot as one more parent
 * and named in its message. A restore to the snapshot removes such a file rather than
 * write it: it gives back what was on disk (an agent that wrote a file outside the cone
 * leaves nothing behind once rolled back). The record is made only where there are such
 * files; git itself may clear a flag later (when the file appears on disk), never the record.
 */

/** The line in a snapshot's message naming its record's commit. */
const TRAILER = 'Codeloops-Not-On-Disk';
const TRAILER_LINE = new RegExp(`^${TRAILER}: ([0-9a-f]{40,64})$`, 'm');

/** An index entry for a file that was not on disk: git's mode and object, and the raw path. */
export interface AbsentFile {
  mode: string;
  object: string;
  rawPath: string;
}

/** What a snapshot's commit gets: a line for its message, and the record's commit as one more parent. */
export interface NotOnDiskRecord {
  trailer: string;
  parent: string;
}

/** Records the files not on disk, for a snapshot with this message; undefined when every file was there. */
export async function recordNotOnDisk(repository: Repository, files: readonly AbsentFile[], message: string): Promise<NotOnDiskRecord | undefined> {
  if (files.length === 0) return undefined;
  const index = temporaryIndexPath(repository, 'not-on-disk');
  try {
    const variables = { GIT_INDEX_FILE: index, ...SNAPSHOT_IDENTITY };
    const entries = files.map((file) => `${file.mode} ${file.object}\t${file.rawPath}\0`).join('');
    await gitBytes(repository.root, ['update-index', '--add', '-z', '--index-info'], { variables, input: Buffer.from(entries, 'latin1') });
    const tree = (await gitText(repository.root, ['write-tree'], { variables })).trim();
    const commit = (await gitText(repository.root, ['commit-tree', tree, '-m', `${message}: the files not on disk`], { variables })).trim();
    return { trailer: `${TRAILER}: ${commit}`, parent: commit };
  } finally {
    removeTemporaryIndex(index);
  }
}

/** The raw paths a snapshot (a commit) recorded as not on disk; none for a snapshot without a record, or a tree. */
export async function pathsNotOnDisk(repository: Repository, snapshot: string): Promise<Set<string>> {
  const body = await gitText(repository.root, ['cat-file', 'commit', snapshot], { mayFindNothing: true }).catch(() => '');
  const record = TRAILER_LINE.exec(body)?.[1];
  if (!record) return new Set();
  const listing = (await gitBytes(repository.root, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', record])).toString('latin1');
  return new Set(listing.split('\0').filter(Boolean));
}
