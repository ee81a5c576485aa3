import fs from 'node:fs';
import path from 'node:path';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { GitCommandError, gitBytes, gitText, nulSeparated, SNAPSHOT_IDENTITY, type GitVariable } from './gitProcess.js';
import { lineEndingConversion, lineEndingSettings, recordExactBytes } from './exactBytes.js';
import { recordNotOnDisk, type AbsentFile } from './notOnDisk.js';
import { removeTemporaryIndex, temporaryIndexPath } from './temporaryIndex.js';
import { headCommit, type Repository } from './repository.js';

/**
 * Snapshots of the whole working tree as commits under private refs, made with a
 * temporary index. They capture untracked files, edits made through a shell and the
 * agent's own commits, and never touch the user's index, HEAD, branch or stash.
 */

export interface Snapshot {
  commit: string;
  tree: string;
}

export const SNAPSHOT_REF_ROOT = 'refs/codeloops';

export type SnapshotLabel = 'pre' | 'post' | 'critic' | 'checks';

/** `refs/codeloops/<session>/<iteration>/<label>`. */
export function snapshotRef(sessionId: string, iteration: number, label: SnapshotLabel): string {
  return `${SNAPSHOT_REF_ROOT}/${sessionId}/${iteration}/${label}`;
}

/**
 * `refs/codeloops/<session>/head`: the last tree codeloops left for this session
 * (the latest loop snapshot, or the tree after a rollback or its undo). Rollback and
 * resume compare the work tree with it to find what the user changed since.
 */
export function sessionHeadRef(sessionId: string): string {
  return `${SNAPSHOT_REF_ROOT}/${sessionId}/head`;
}

export type RollbackLabel = 'before' | 'after' | 'undone' | 'replaced';

/** `refs/codeloops/<session>/review/<id>/<label>`: the trees around a rejected hunk (`R<iteration>.<n>`), and after its undo. */
export function reviewRef(sessionId: string, rejection: string, label: RollbackLabel): string {
  return `${SNAPSHOT_REF_ROOT}/${sessionId}/review/${rejection}/${label}`;
}

/**
 * The numbered moves of a session's files in a working tree: its rollbacks
 * (`codeloops rollback`) and the applies of its changes (`codeloops apply`).
 */
export type TreeMoveKind = 'rollback' | 'apply';

/** `refs/codeloops/<session>/<rollback|apply>/<n>/<label>`: the trees around the n-th move of a kind, and after its undo. */
export function moveRef(sessionId: string, kind: TreeMoveKind, move: number, label: RollbackLabel): string {
  return `${SNAPSHOT_REF_ROOT}/${sessionId}/${kind}/${move}/${label}`;
}

/** The number of the session's latest move of a kind among its refs; 0 when there is none. */
export function lastMoveNumber(refs: ReadonlyMap<string, string>, sessionId: string, kind: TreeMoveKind): number {
  const prefix = `${SNAPSHOT_REF_ROOT}/${sessionId}/${kind}/`;
  let highest = 0;
  for (const ref of refs.keys()) {
    const match = ref.startsWith(prefix) ? /^(\d+)\//.exec(ref.slice(prefix.length)) : null;
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest;
}

export interface SnapshotResult extends Snapshot {
  /** Nested repositories without a commit: git cannot record them, so they are left out. */
  leftOut: string[];
}

/**
 * Commits the current state of the work tree and points the given refs at it (in one
 * transaction). The temporary index starts as a copy of the user's, so `git add -A`
 * reuses its stat cache instead of hashing every file again.
 */
export async function takeSnapshot(repository: Repository, message: string, refs: string | readonly string[] = []): Promise<SnapshotResult> {
  const temporaryIndex = temporaryIndexPath(repository, 'snapshot');
  try {
    try {
      fs.copyFileSync(repository.indexFile, temporaryIndex);
      // The copy keeps the index's time: git's "racily clean" check compares each file's
      // time with it, and a newer copy would make git trust the stat of a file rewritten
      // with the same size in the same second, and miss the change.
      const { atime, mtime } = fs.statSync(repository.indexFile);
      fs.utimesSync(temporaryIndex, atime, mtime);
    } catch (error) {
      // No index yet (fresh `git init`): git builds one from scratch.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const variables = { GIT_INDEX_FILE: temporaryIndex, ...SNAPSHOT_IDENTITY };
    const settings = lineEndingSettings(repository);
    settings.catch(() => {}); // awaited below; a failure meanwhile is not unhandled
    const { attributes: trackedAttributes, absent } = await seeEveryFile(repository, temporaryIndex);
    const { leftOut, addedAttributes } = await addAll(repository, variables);
    const [tree, parent] = await Promise.all([gitText(repository.root, ['write-tree'], { variables }).then((output) => output.trim()), headCommit(repository)]);
    const conversion = lineEndingConversion(repository, await settings, [...trackedAttributes, ...addedAttributes]);
    // Where git converts line endings, the bytes on disk are recorded beside the blobs (last: it changes the index).
    const offDisk = new Set(absent.map((file) => file.rawPath));
    const exact = conversion ? await recordExactBytes(repository, variables, conversion, message, offDisk) : undefined;
    const notOnDisk = await recordNotOnDisk(repository, absent, message);
    const parents = [parent, exact?.parent, notOnDisk?.parent].flatMap((commit) => (commit ? ['-p', commit] : []));
    const messages = ['-m', message, ...[exact?.trailer, notOnDisk?.trailer].flatMap((trailer) => (trailer ? ['-m', trailer] : []))];
    const commit = (await gitText(repository.root, ['commit-tree', tree, ...parents, ...messages], { variables })).trim();
    await pointRefs(repository, typeof refs === 'string' ? [refs] : refs, commit, message);
    return { commit, tree, leftOut };
  } finally {
    removeTemporaryIndex(temporaryIndex);
  }
}

/**
 * The copied index keeps the user's assume-unchanged and skip-worktree flags, and
 * `git add` believes them: an agent's edit to such a file would go unseen. The
 * flags are cleared in the copy (skip-worktree only for files that are on disk:
 * a sparse checkout's absent files are not deletions). Gives the `.gitattributes`
 * files the index has, read from the same listing, and the files it has that are not
 * on disk (for the snapshot's record of them, `notOnDisk.ts`).
 */
async function seeEveryFile(repository: Repository, temporaryIndex: string): Promise<{ attributes: string[]; absent: AbsentFile[] }> {
  const variables = { GIT_INDEX_FILE: temporaryIndex };
  const listing = (await gitBytes(repository.root, ['ls-files', '-v', '-s', '-z'], { variables })).toString('latin1');
  const assumed: string[] = [];
  const skipped: string[] = [];
  const attributes: string[] = [];
  const absent: AbsentFile[] = [];
  for (const entry of listing.split('\0')) {
    // `<tag> <mode> <object> <stage>\t<path>`
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const tag = entry[0]!;
    const [mode, object] = entry.slice(2, tab).split(' ');
    const rawPath = entry.slice(tab + 1);
    if (isAttributesFile(rawPath)) attributes.push(rawPath);
    if (tag >= 'a' && tag <= 'z') assumed.push(rawPath);
    else if (tag !== 'S') continue;
    else if (fs.existsSync(Buffer.concat([Buffer.from(repository.root + path.sep), Buffer.from(rawPath, 'latin1')]))) skipped.push(rawPath);
    else absent.push({ mode: mode!, object: object!, rawPath });
  }
  // One flag per call: update-index applies only the last of several to --stdin paths.
  if (assumed.length > 0)
    await gitBytes(repository.root, ['update-index', '--no-assume-unchanged', '-z', '--stdin'], { variables, input: nulSeparated(assumed) });
  if (skipped.length > 0) await gitBytes(repository.root, ['update-index', '--no-skip-worktree', '-z', '--stdin'], { variables, input: nulSeparated(skipped) });
  return { attributes, absent };
}

function isAttributesFile(rawPath: string): boolean {
  return rawPath === '.gitattributes' || rawPath.endsWith('/.gitattributes');
}

/** Nested repositories without a commit are reported one at a time; past this many, something else is wrong. */
const MAX_LEFT_OUT = 100;

/**
 * `git add --all`, leaving out nested repositories that have no commit yet (git refuses
 * them). Also says which `.gitattributes` files it added (new or changed), from the paths
 * it names as it adds them.
 */
async function addAll(repository: Repository, variables: Partial<Record<GitVariable, string>>): Promise<{ leftOut: string[]; addedAttributes: string[] }> {
  const leftOut: string[] = [];
  for (;;) {
    const exclusions = leftOut.map((folder) => `:(top,exclude,literal)${folder}`);
    try {
      // Ignored files stay out, as in any commit; nested repositories are recorded as links.
      const added = await gitBytes(repository.root, ['-c', 'advice.addEmbeddedRepo=false', 'add', '--all', '--verbose', '--', ':/', ...exclusions], {
        variables,
      });
      // `add '<path>'` a line (LC_ALL=C).
      const addedAttributes = added
        .toString('latin1')
        .split('\n')
        .flatMap((line) => (line.startsWith("add '") && line.endsWith("'") && isAttributesFile(line.slice(5, -1)) ? [line.slice(5, -1)] : []));
      return { leftOut, addedAttributes };
    } catch (error) {
      // git names the nested repository on stderr (in English: LC_ALL=C); there is no code for it.
      const unborn = error instanceof GitCommandError ? /'(.+?)\/?' does not have a commit checked out/.exec(error.stderr)?.[1] : undefined;
      if (!unborn || leftOut.includes(unborn) || leftOut.length >= MAX_LEFT_OUT) throw error;
      leftOut.push(unborn);
    }
  }
}

/** The snapshot a ref points at, or undefined when the ref is gone (pruned, another clone). */
export async function readSnapshot(repository: Repository, ref: string): Promise<Snapshot | undefined> {
  const commit = (await gitText(repository.root, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { mayFindNothing: true })).trim();
  if (!commit) return undefined;
  const tree = (await gitText(repository.root, ['rev-parse', '--verify', '--quiet', `${commit}^{tree}`], { mayFindNothing: true })).trim();
  return tree ? { commit, tree } : undefined;
}

export class SnapshotMissingError extends CodeloopsError {
  override name = 'SnapshotMissingError';
  constructor(readonly ref: string) {
    super('snapshot_missing', `The snapshot ${ref} is gone from this repository (deleted, or the repository was cloned afresh).`, { ref });
  }
}

/**
 * A file as it was in a snapshot: its bytes, or undefined when the snapshot does
 * not have it (added or deleted on the other side). A missing snapshot is an error.
 */
export async function readSnapshotFile(repository: Repository, ref: string, filePath: string): Promise<Buffer | undefined> {
  const snapshot = await readSnapshot(repository, ref);
  if (!snapshot) throw new SnapshotMissingError(ref);
  return readFileAt(repository, snapshot.commit, filePath);
}

/** A file as a commit has it, or undefined when it has no such file. */
export async function readFileAt(repository: Repository, commit: string, filePath: string): Promise<Buffer | undefined> {
  // `:` after the commit, then the path from the top of the tree.
  const object = `${commit}:${filePath.replace(/^\/+/, '')}`;
  // `cat-file -e` fails quietly when the snapshot has no such path.
  const type = (await gitText(repository.root, ['cat-file', '-t', object], { mayFindNothing: true }).catch(() => '')).trim();
  if (type !== 'blob') return undefined;
  return gitBytes(repository.root, ['cat-file', 'blob', object]);
}

export async function pointRef(repository: Repository, ref: string, commit: string, message: string): Promise<void> {
  await pointRefs(repository, [ref], commit, message);
}

/** Points every ref at the commit, all or none (`update-ref --stdin` is one transaction). */
export async function pointRefs(repository: Repository, refs: readonly string[], commit: string, message: string): Promise<void> {
  if (refs.length === 0) return;
  if (refs.length === 1) {
    await gitBytes(repository.root, ['update-ref', '-m', message, refs[0]!, commit]);
    return;
  }
  const input = refs.map((ref) => `update ${ref} ${commit}\n`).join('');
  await gitBytes(repository.root, ['update-ref', '-m', message, '--stdin'], { input: Buffer.from(input) });
}

/** Every snapshot ref of a session, by name. */
export async function listSessionRefs(repository: Repository, sessionId: string): Promise<Map<string, string>> {
  const output = await gitText(repository.root, ['for-each-ref', '--format=%(objectname) %(refname)', `${SNAPSHOT_REF_ROOT}/${sessionId}/`]);
  const refs = new Map<string, string>();
  for (const line of output.split('\n')) {
    const space = line.indexOf(' ');
    if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
  }
  return refs;
}

export async function deleteSessionRefs(repository: Repository, sessionId: string): Promise<number> {
  const refs = await listSessionRefs(repository, sessionId);
  if (refs.size === 0) return 0;
  // One transaction: all of the session's refs go, or none.
  const input = [...refs.keys()].map((ref) => `delete ${ref}\n`).join('');
  await gitBytes(repository.root, ['update-ref', '--stdin'], { input: Buffer.from(input) });
  return refs.size;
}

/**
 * The tree codeloops last left for a session: its `head` ref, or for sessions
 * recorded before that ref existed, the latest iteration's post (or pre) snapshot.
 */
export async function lastTree(repository: Repository, sessionId: string, refs?: Map<string, string>, iterations?: number[]): Promise<Snapshot | undefined> {
  refs ??= await listSessionRefs(repository, sessionId);
  if (refs.has(sessionHeadRef(sessionId))) return readSnapshot(repository, sessionHeadRef(sessionId));
  const last = (iterations ?? snapshotIterations(refs, sessionId)).at(-1);
  if (last === undefined) return undefined;
  for (const label of ['post', 'pre'] as const) {
    if (refs.has(snapshotRef(sessionId, last, label))) return readSnapshot(repository, snapshotRef(sessionId, last, label));
  }
  return undefined;
}

/** Iterations that have a `pre` snapshot, ascending. */
export function snapshotIterations(refs: ReadonlyMap<string, string>, sessionId: string): number[] {
  const prefix = `${SNAPSHOT_REF_ROOT}/${sessionId}/`;
  const numbers: number[] = [];
  for (const ref of refs.keys()) {
    const match = /^(\d+)\/pre$/.exec(ref.slice(prefix.length));
    if (ref.startsWith(prefix) && match) numbers.push(Number(match[1]));
  }
  return numbers.sort((a, b) => a - b);
}

/**
 * The two trees a session's whole change goes between: before its first iteration
 * (for a resumed session, the first it recorded), and the last tree it left.
 * Undefined when either snapshot is gone.
 */
export async function sessionChangeEnds(repository: Repository, sessionId: string): Promise<{ start: Snapshot; end: Snapshot } | undefined> {
  const refs = await listSessionRefs(repository, sessionId);
  const first = snapshotIterations(refs, sessionId)[0];
  if (first === undefined) return undefined;
  const [start, end] = await Promise.all([readSnapshot(repository, snapshotRef(sessionId, first, 'pre')), lastTree(repository, sessionId, refs)]);
  return start && end ? { start, end } : undefined;
}
