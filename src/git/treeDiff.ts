import { displayPath, gitBytes, gitStreamed, gitText } from './gitProcess.js';
import type { FileChange, FileChangeStatus, NestedRepository } from '../sessionFormat/runEvents.js';
import type { Repository } from './repository.js';

export interface DiffSummary {
  /** Unified diff, head and tail kept when it is larger than the limit. */
  diff: string;
  diffTruncated: boolean;
  filesChanged: number;
  insertions: number;
  deletions: number;
  files: FileChange[];
}

/** The unified diff kept in a session line; the snapshots keep everything. */
export const MAX_RECORDED_DIFF_CHARS = 4_000_000;

const STATUS_LETTERS: Readonly<Record<string, FileChangeStatus>> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type_changed',
};

/** What changed between two snapshots (commits or trees), with renames detected. */
export async function diffSnapshots(repository: Repository, from: string, to: string, maxDiffChars: number = MAX_RECORDED_DIFF_CHARS): Promise<DiffSummary> {
  if (from === to) return { diff: '', diffTruncated: false, filesChanged: 0, insertions: 0, deletions: 0, files: [] };
  const common = ['--no-ext-diff', '--no-textconv', '--find-renames', '--no-color'];
  const [nameStatus, numstat, patch] = await Promise.all([
    gitText(repository.root, ['diff', ...common, '--name-status', '-z', from, to]),
    gitText(repository.root, ['diff', ...common, '--numstat', '-z', from, to]),
    gitStreamed(repository.root, ['diff', ...common, from, to], maxDiffChars),
  ]);
  const files = parseNameStatus(nameStatus);
  const counts = parseNumstat(numstat);
  let insertions = 0;
  let deletions = 0;
  for (const file of files) {
    const count = counts.get(file.path);
    if (count) {
      file.insertions = count.insertions;
      file.deletions = count.deletions;
      insertions += count.insertions ?? 0;
      deletions += count.deletions ?? 0;
    }
  }
  return { diff: patch.text, diffTruncated: patch.truncated, filesChanged: files.length, insertions, deletions, files };
}

/** `--name-status -z`: `X\0path\0` or `R100\0old\0new\0`. */
export function parseNameStatus(output: string): FileChange[] {
  const fields = output.split('\0');
  const files: FileChange[] = [];
  for (let i = 0; i < fields.length;) {
    const code = fields[i++];
    if (!code) continue;
    const status = STATUS_LETTERS[code[0]!] ?? 'modified';
    if (status === 'renamed' || status === 'copied') {
      const oldPath = fields[i++] ?? '';
      const newPath = fields[i++] ?? '';
      files.push({ path: newPath, oldPath, status, insertions: null, deletions: null });
    } else {
      files.push({ path: fields[i++] ?? '', status, insertions: null, deletions: null });
    }
  }
  return files;
}

/** `--numstat -z`: `ins\tdel\tpath\0`, or `ins\tdel\t\0old\0new\0` for renames; `-` for binary. */
export function parseNumstat(output: string): Map<string, { insertions: number | null; deletions: number | null }> {
  const fields = output.split('\0');
  const counts = new Map<string, { insertions: number | null; deletions: number | null }>();
  for (let i = 0; i < fields.length;) {
    const record = fields[i++];
    if (!record) continue;
    const [added, removed, ...rest] = record.split('\t');
    let filePath = rest.join('\t');
    if (filePath === '') {
      i++; // old path
      filePath = fields[i++] ?? '';
    }
    counts.set(filePath, {
      insertions: added === '-' ? null : Number(added),
      deletions: removed === '-' ? null : Number(removed),
    });
  }
  return counts;
}

export interface TreeEntryChange {
  /** The path as people read it. */
  path: string;
  /** The path's exact bytes as a latin1 string: what a restore writes and removes. */
  rawPath: string;
  /** What the path is in the target: absent means it must be removed. */
  presentInTarget: boolean;
  /** Whether the source tree has the path (absent: the target adds it). */
  presentInSource: boolean;
  /** The object id the target has at the path (all zeros when absent). */
  targetObject: string;
  /** git's mode of the path in the source and in the target (`000000` when absent, `160000` a nested repository). */
  sourceMode: string;
  targetMode: string;
  /** Git links (nested repositories, submodules) are never touched. */
  isGitLink: boolean;
}

const GIT_LINK = '160000';

/** Path-level changes from `from` to `to`, without rename pairing: what a restore must touch. */
export async function changedPaths(repository: Repository, from: string, to: string): Promise<TreeEntryChange[]> {
  if (from === to) return [];
  const output = (await gitBytes(repository.root, ['diff-tree', '-r', '-z', '--no-renames', from, to])).toString('latin1');
  // Raw format: `:oldmode newmode oldsha newsha X\0path\0`.
  const fields = output.split('\0');
  const changes: TreeEntryChange[] = [];
  for (let i = 0; i < fields.length;) {
    const meta = fields[i++];
    if (!meta || !meta.startsWith(':')) continue;
    const [oldMode, newMode, , newObject, status] = meta.slice(1).split(' ');
    const rawPath = fields[i++] ?? '';
    changes.push({
      path: displayPath(rawPath),
      rawPath,
      presentInTarget: status !== 'D',
      presentInSource: status !== 'A',
      targetObject: newObject ?? '',
      sourceMode: oldMode ?? '',
      targetMode: newMode ?? '',
      isGitLink: oldMode === GIT_LINK || newMode === GIT_LINK,
    });
  }
  return changes;
}

/**
 * The nested repositories a tree has that an earlier one did not, from the changes
 * between the two and the nested repositories without a commit that each snapshot left
 * out: folders whose files no diff will show from then on.
 */
export function appearedRepositories(
  changes: readonly TreeEntryChange[],
  leftOut: { before: readonly string[]; after: readonly string[] },
): NestedRepository[] {
  const recorded = changes
    .filter((change) => change.targetMode === GIT_LINK && change.sourceMode !== GIT_LINK)
    .map((change) => ({ path: change.path, commit: change.targetObject }));
  const uncommitted = leftOut.after.filter((folder) => !leftOut.before.includes(folder)).map((folder) => ({ path: folder, commit: null }));
  return [...recorded, ...uncommitted];
}
