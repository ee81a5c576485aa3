import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isWithinFolder } from '../files/folderPaths.js';
import { NotARegularFileError, describeNonFile, openRegularFileSync } from '../files/regularFile.js';
import { GitCommandError, gitBytes, gitText } from '../git/gitProcess.js';
import { missingCommits, openRepository, type Repository } from '../git/repository.js';
import { SNAPSHOT_REF_ROOT } from '../git/snapshots.js';
import { groupRecordLineSchema, isGroupId } from '../sessionFormat/candidateGroups.js';
import { GROUP_RECORD_FILE } from '../sessionFormat/candidateGroupFiles.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { stampEvent } from '../sessionFormat/runEvents.js';
import {
  BUNDLE_MANIFEST,
  BUNDLE_ROOT,
  BUNDLE_SNAPSHOTS,
  bundleManifestSchema,
  type BundleManifest,
  type ImportResult,
} from '../sessionFormat/sessionBundle.js';
import { EVENTS_FILE, REVIEW_FILE, isSessionId } from '../sessionFormat/sessionFiles.js';
import { sessionStartLineSchema } from '../sessionFormat/sessionLines.js';
import { AppendOnlyFile } from '../sessionWriter/appendOnlyFile.js';
import { unpackArchive, writeWhole, type Invalid } from './bundleArchive.js';
import { readFirstLine } from '../sessions/lineReader.js';
import type { SessionStore } from '../sessions/sessionStore.js';

/**
 * Sessions that leave the machine and come back: a run made on a CI runner is
 * exported with its sidecar records, its candidate group's record and its snapshots
 * (as a git bundle), then imported into a clone of the same repository, where it can
 * be viewed, replayed, rolled back and applied. An import checks everything before
 * it writes anything: a damaged bundle, one too big unpacked, one whose snapshots need
 * commits the repository lacks or name refs that are not its own, or an id already
 * used here (by a session, a group or their refs) imports nothing. It creates each
 * thing exclusively and, if it fails, removes only what it created.
 */

export interface BundlePaths {
  store: SessionStore;
  sidecarDirOf: (sessionId: string) => string;
  groupsDirectory: string;
}

export class BundleInvalidError extends CodeloopsError {
  override name = 'BundleInvalidError';
  constructor(file: string, reason: string, details: Record<string, unknown> = {}) {
    super('bundle_invalid', `${file} cannot be imported: ${reason}. Nothing was imported.`, { file, ...details });
  }
}

/** What an import unpacks at most unless told otherwise (the CLI's --max-unpacked-mb says 2048 too): the whole archive, and so any one file of it. */
const DEFAULT_MAX_UNPACKED_BYTES = 2048 * 1024 * 1024;

/** A record the import holds whole in memory (the manifest, a group's record, a session's first line) is refused past this. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

export interface ImportRequest extends BundlePaths {
  bundleFile: string;
  /** A working tree of the repository the sessions ran in (another clone of it). */
  targetDir: string;
  /** An archive that unpacks to more than this is refused (default DEFAULT_MAX_UNPACKED_BYTES). */
  maxUnpackedBytes?: number;
}

export async function importBundle(request: ImportRequest): Promise<ImportResult> {
  const bundleFile = path.resolve(request.bundleFile);
  if (!fs.statSync(bundleFile, { throwIfNoEntry: false })?.isFile()) throw new BundleInvalidError(bundleFile, 'there is no such file');
  await openRepository(request.targetDir);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-import-'));
  try {
    const bundle = await stageBundle(bundleFile, staging, request.maxUnpackedBytes);
    return await importStaged(request, [{ bundle }]);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** A bundle unpacked into a staging folder, its manifest read: nothing of it is imported yet. */
export interface StagedBundle {
  /** The archive, as an absolute path. */
  file: string;
  /** Its `codeloops-bundle/` folder, unpacked. */
  root: string;
  manifest: BundleManifest;
  /** The refusal of this bundle, saying why (`bundle_invalid`, naming its file). */
  invalid: Invalid;
}

/**
 * Unpacks a bundle into a new folder of `staging` (see `unpackArchive`) and reads its
 * manifest; a file that is not a bundle is `bundle_invalid`. What else it holds
 * beside the sessions (an eval's record, a queue's) is the caller's to read from `root`.
 */
export async function stageBundle(bundleFile: string, staging: string, maxUnpackedBytes = DEFAULT_MAX_UNPACKED_BYTES): Promise<StagedBundle> {
  const file = path.resolve(bundleFile);
  const invalid: Invalid = (reason, details) => new BundleInvalidError(file, reason, details);
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw invalid('there is no such file');
  const folder = fs.mkdtempSync(path.join(staging, 'bundle-'));
  await unpackArchive(file, folder, maxUnpackedBytes, invalid);
  const root = path.join(folder, BUNDLE_ROOT);
  return { file, root, manifest: readManifest(path.join(root, BUNDLE_MANIFEST), invalid), invalid };
}

/** A staged bundle to import, and which of its sessions (all of them, and its groups, when not said). */
export interface BundleSelection {
  bundle: StagedBundle;
  sessions?: ReadonlySet<string>;
  /**
   * Sessions imported under another id (their file, records and snapshot refs): two
   * machines that started the same prompt in the same second named their sessions alike.
   */
  rename?: ReadonlyMap<string, string>;
}

/**
 * Imports staged bundles into the clone at `request.targetDir`, all of them or nothing:
 * every bundle's records and snapshots are checked, and every id against what is here,
 * before anything is written; then the snapshots' objects, their refs in one
 * transaction, the sessions and the groups. A failure midway removes what this import
 * created, and only that.
 */
export async function importStaged(request: BundlePaths & { targetDir: string }, selections: readonly BundleSelection[]): Promise<ImportResult> {
  const repository = await openRepository(request.targetDir);
  // What this import created, and only that: a ref, a file or a folder counts once this import created it, exclusively.
  const created: Created = { refs: new Map(), paths: [] };
  try {
    // Everything is checked before anything is written.
    const checked = [];
    const owners = new Map<string, string>();
    for (const { bundle, sessions: chosen, rename = new Map<string, string>() } of selections) {
      const records = checkBundledRecords(bundle.root, bundle.manifest, repository, bundle.invalid);
      const sessions = (chosen ? records.sessions.filter(({ entry }) => chosen.has(entry.id)) : records.sessions).map((session) => ({
        ...session,
        id: rename.get(session.entry.id) ?? session.entry.id,
      }));
      const groups = chosen ? [] : records.groups;
      for (const id of [...sessions.map((session) => session.id), ...groups.map(({ entry }) => entry.id)]) {
        const other = owners.get(id);
        if (other !== undefined) throw bundle.invalid(`${id} is also in ${other}`, { ids: [id] });
        owners.set(id, bundle.file);
      }
      const snapshots = path.join(bundle.root, BUNDLE_SNAPSHOTS);
      const bundled = new Map([
        ...(fs.existsSync(snapshots) ? await bundleRefs(repository, snapshots, records.ids, bundle.invalid) : []),
        ...(await historyRefs(repository, bundle.manifest, records.ids, bundle.invalid)),
      ]);
      const wanted = new Set([...sessions.map((session) => session.entry.id), ...groups.map(({ entry }) => entry.id)]);
      const refs = new Map(
        [...bundled].flatMap(([ref, oid]): Array<[string, string]> => {
          const owner = ref.split('/')[2]!;
          if (!wanted.has(owner)) return [];
          const renamed = rename.get(owner);
          return [[renamed ? `${SNAPSHOT_REF_ROOT}/${renamed}/${ref.split('/').slice(3).join('/')}` : ref, oid]];
        }),
      );
      checked.push({ bundle, sessions, groups, snapshots, refs });
    }
    await refuseWhatIsHere(request, repository, new Set(owners.keys()));

    // Then written: the snapshots first (refs that were not here), then the records.
    const refs = new Map<string, string>();
    for (const { bundle, snapshots, refs: own } of checked) {
      if (own.size === 0) continue;
      if (fs.existsSync(snapshots)) await unbundleObjects(repository, snapshots, bundle.invalid);
      for (const [ref, oid] of own) refs.set(ref, oid);
    }
    if (refs.size > 0) {
      await createRefs(repository, refs);
      for (const [ref, oid] of refs) created.refs.set(ref, oid);
    }
    for (const { bundle, sessions, groups } of checked) {
      writeSessions(request, sessions, path.basename(bundle.file), created);
      writeGroups(request, bundle.root, groups, repository, created);
    }
    return {
      sessions: checked.flatMap(({ sessions }) => sessions.map(({ id }) => id)),
      groups: checked.flatMap(({ groups }) => groups.map(({ entry }) => entry.id)),
      repository: repository.root,
      snapshot_refs: refs.size,
      warnings: [],
    };
  } catch (error) {
    // An import is all or nothing: what it created goes again; what was here before it (or what another import made meanwhile) stays.
    for (const file of created.paths) fs.rmSync(file, { recursive: true, force: true });
    if (created.refs.size > 0) {
      // Each only while it still points where this import put it.
      const input = [...created.refs].map(([ref, oid]) => `delete ${ref} ${oid}\n`).join('');
      await gitBytes(repository.root, ['update-ref', '--stdin'], { input: Buffer.from(input) }).catch(() => undefined);
    }
    throw error;
  }
}

/** What an import created (refs with where it pointed them, files and folders), for taking it back if it fails. */
interface Created {
  refs: Map<string, string>;
  paths: string[];
}

type BundledRecords = ReturnType<typeof checkBundledRecords>;

/** The bundle's sessions and groups, each read and checked, and where each goes in this clone (never outside it). */
function checkBundledRecords(root: string, manifest: BundleManifest, repository: Repository, invalid: Invalid) {
  const ids = new Set<string>();
  const listOnce = (id: string) => {
    if (ids.has(id)) throw invalid(`its manifest lists ${id} twice`);
    ids.add(id);
  };
  const rehome = (entry: { id: string; relative_dir: string }) => {
    // The same place in this clone, never outside it.
    const workingDir = path.join(repository.root, ...entry.relative_dir.split('/'));
    if (entry.relative_dir.startsWith('/') || !isWithinFolder(repository.root, workingDir)) {
      throw invalid(`its manifest places ${entry.id} at "${entry.relative_dir}", outside the repository`);
    }
    return workingDir;
  };
  const sessions = manifest.sessions.map((entry) => {
    if (!isSessionId(entry.id)) throw invalid(`"${entry.id}" is not a session id`);
    listOnce(entry.id);
    const file = path.join(root, 'sessions', `${entry.id}.jsonl`);
    const first = readBundledFirstLine(file, invalid);
    const start = sessionStartLineSchema.safeParse(parseJson(first.text));
    if (!start.success) throw invalid(`sessions/${entry.id}.jsonl does not start with a session_start line`);
    const sidecar = path.join(root, 'sidecars', entry.id);
    checkBundledSidecar(sidecar, invalid);
    return { entry, file, first, start: start.data, sidecar, workingDir: rehome(entry) };
  });
  const groups = manifest.groups.map((entry) => {
    if (!isGroupId(entry.id)) throw invalid(`"${entry.id}" is not a candidate group id`);
    listOnce(entry.id);
    const lines = readBundledText(path.join(root, 'groups', entry.id, GROUP_RECORD_FILE), invalid)
      .split('\n')
      .filter(Boolean);
    const first = groupRecordLineSchema.safeParse(parseJson(lines[0] ?? ''));
    if (!first.success || first.data.type !== 'group_started') throw invalid(`the record of candidate group ${entry.id} does not start with group_started`);
    const ended = lines.some((line) => /"type"\s*:\s*"group_finished"/.test(line));
    return { entry, lines, first: first.data, ended, workingDir: rehome(entry) };
  });
  return { ids, sessions, groups };
}

/** The snapshots' objects only: their refs are created next, each only where there is none. */
async function unbundleObjects(repository: Repository, snapshots: string, invalid: Invalid): Promise<void> {
  try {
    await gitBytes(repository.root, ['bundle', 'unbundle', snapshots]);
  } catch (error) {
    throw invalid(`git cannot read its snapshots (${error instanceof GitCommandError ? error.stderr.trim() : String(error)})`);
  }
}

/** Each session's file (its start line re-homed) and sidecar record, created exclusively, the record saying where it came from. */
function writeSessions(
  request: BundlePaths,
  sessions: ReadonlyArray<BundledRecords['sessions'][number] & { id: string }>,
  bundleName: string,
  created: Created,
): void {
  const imported = stampEvent({ type: 'imported', from_working_dir: '', bundle: bundleName });
  fs.mkdirSync(request.store.directory, { recursive: true, mode: 0o700 });
  for (const { id, entry, file, first, start, sidecar: bundledSidecar, workingDir } of sessions) {
    const target = request.store.filePathOf(id);
    const fd = createExclusively(id, target, () => fs.openSync(target, 'wx', 0o600));
    created.paths.push(target);
    try {
      writeWhole(fd, Buffer.from(JSON.stringify({ ...start, working_dir: workingDir }) + '\n'));
      if (first.terminated) appendFileFrom(fd, file, first.end + 1);
    } finally {
      fs.closeSync(fd);
    }
    const sidecar = request.sidecarDirOf(id);
    fs.mkdirSync(path.dirname(sidecar), { recursive: true, mode: 0o700 });
    createExclusively(id, sidecar, () => fs.mkdirSync(sidecar, { mode: 0o700 }));
    created.paths.push(sidecar);
    // Staged private (folders 0700, files 0600), as local records are: the copy keeps those modes.
    if (fs.existsSync(bundledSidecar)) fs.cpSync(bundledSidecar, sidecar, { recursive: true, errorOnExist: true, force: false });
    const events = AppendOnlyFile.openForAppend(path.join(sidecar, EVENTS_FILE));
    try {
      events.appendLine({ ...imported, from_working_dir: entry.working_dir });
    } finally {
      events.close();
    }
  }
}

/** Each group's record, re-homed to this clone, ended if its runner never ended it, its worktrees said to be gone. */
function writeGroups(request: BundlePaths, root: string, groups: BundledRecords['groups'], repository: Repository, created: Created): void {
  for (const { entry, lines, first, ended, workingDir } of groups) {
    const folder = path.join(request.groupsDirectory, entry.id);
    fs.mkdirSync(request.groupsDirectory, { recursive: true, mode: 0o700 });
    createExclusively(entry.id, folder, () => fs.mkdirSync(folder, { mode: 0o700 }));
    created.paths.push(folder);
    fs.cpSync(path.join(root, 'groups', entry.id), folder, { recursive: true, errorOnExist: true, force: false });
    const rehomed = [JSON.stringify({ ...first, working_dir: workingDir, repository: repository.root }), ...lines.slice(1)];
    // A group whose record never ended was left by a runner that stopped: here nothing runs it.
    if (!ended)
      rehomed.push(JSON.stringify({ type: 'group_finished', timestamp: new Date().toISOString(), group_id: entry.id, status: 'crashed', ranking: [] }));
    // Its worktrees stayed on the machine that ran it: none of them is here.
    const labels = first.candidates.map((candidate) => candidate.label);
    rehomed.push(JSON.stringify({ type: 'worktrees_removed', timestamp: new Date().toISOString(), group_id: entry.id, removed: labels, kept: [] }));
    fs.writeFileSync(path.join(folder, GROUP_RECORD_FILE), rehomed.join('\n') + '\n', { mode: 0o600 });
  }
}

/** Appends `file` from byte `start` on, a megabyte at a time. */
function appendFileFrom(fd: number, file: string, start: number): void {
  const input = fs.openSync(file, 'r');
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  try {
    for (let position = start; ;) {
      const read = fs.readSync(input, buffer, 0, buffer.length, position);
      if (read === 0) return;
      writeWhole(fd, buffer.subarray(0, read));
      position += read;
    }
  } finally {
    fs.closeSync(input);
  }
}

/** A file or folder another import (or run) made between the checks and now is theirs: this import stops, owning none of it. */
function createExclusively<T>(id: string, target: string, create: () => T): T {
  try {
    return create();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    throw new CodeloopsError('session_exists', `${id} is already here (${target} was made meanwhile). Nothing was imported.`, { ids: [id] });
  }
}

function readManifest(file: string, invalid: Invalid): BundleManifest {
  const parsed = bundleManifestSchema.safeParse(parseJson(readBundledText(file, invalid)));
  if (!parsed.success) throw invalid(`its ${BUNDLE_MANIFEST} is not a codeloops sessions manifest`);
  return parsed.data;
}

/** A bundled file's name as the archive has it (`sessions/<id>.jsonl`). */
function bundledName(file: string): string {
  return file
    .slice(file.lastIndexOf(`${BUNDLE_ROOT}${path.sep}`) + BUNDLE_ROOT.length + 1)
    .split(path.sep)
    .join('/');
}

/** Opens a staged file that must be a regular file, or refuses the bundle saying what is there instead. */
function openBundled(file: string, invalid: Invalid): { fd: number; size: number } {
  try {
    const fd = openRegularFileSync(file);
    return { fd, size: fs.fstatSync(fd).size };
  } catch (error) {
    throw invalid(error instanceof NotARegularFileError ? `its ${bundledName(file)} ${error.reason}` : `it has no ${bundledName(file)}`);
  }
}

/** A small bundled file, whole: a regular file of at most MAX_RECORD_BYTES, or the bundle is refused. */
export function readBundledText(file: string, invalid: Invalid): string {
  const { fd, size } = openBundled(file, invalid);
  try {
    if (size > MAX_RECORD_BYTES) throw invalid(`its ${bundledName(file)} is larger than ${MAX_RECORD_BYTES / 1024 / 1024} MB`);
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** A bundled session's first line (empty for an empty file), read no further than a record may be long. */
function readBundledFirstLine(file: string, invalid: Invalid): { text: string; end: number; terminated: boolean } {
  const { fd, size } = openBundled(file, invalid);
  try {
    const first = readFirstLine(fd, Math.min(size, MAX_RECORD_BYTES + 1));
    if (first && !first.terminated && size > MAX_RECORD_BYTES)
      throw invalid(`the first line of its ${bundledName(file)} is longer than ${MAX_RECORD_BYTES / 1024 / 1024} MB`);
    return first ? { text: first.text, end: first.end, terminated: first.terminated } : { text: '', end: 0, terminated: false };
  } finally {
    fs.closeSync(fd);
  }
}

/** A session's bundled sidecar, when there is one: a folder whose records are regular files (they are appended to here). */
function checkBundledSidecar(folder: string, invalid: Invalid): void {
  const stats = fs.lstatSync(folder, { throwIfNoEntry: false });
  if (!stats) return;
  if (!stats.isDirectory()) throw invalid(`its ${bundledName(folder)} is not a folder`);
  for (const name of [EVENTS_FILE, REVIEW_FILE]) {
    const record = fs.lstatSync(path.join(folder, name), { throwIfNoEntry: false });
    if (record && !record.isFile()) throw invalid(`its ${bundledName(path.join(folder, name))} ${describeNonFile(record)}`);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Every id something here has: a session file or sidecar record, a candidate group, snapshot refs in the repository. */
export async function idsInUse(paths: BundlePaths, repositoryDir: string): Promise<Set<string>> {
  const names = (folder: string) => {
    try {
      return fs.readdirSync(folder);
    } catch {
      return [];
    }
  };
  const used = new Set<string>([
    ...names(paths.store.directory).map((name) => name.replace(/\.jsonl$/, '')),
    ...names(path.dirname(paths.sidecarDirOf('x'))),
    ...names(paths.groupsDirectory),
  ]);
  for (const ref of (await gitText(repositoryDir, ['for-each-ref', '--format=%(refname)', `${SNAPSHOT_REF_ROOT}/`])).split('\n')) {
    const owner = ref.slice(SNAPSHOT_REF_ROOT.length + 1).split('/')[0];
    if (owner) used.add(owner);
  }
  return used;
}

/**
 * Refuses ids that something here already has: a session file or sidecar record, a
 * candidate group, or snapshot refs under `refs/codeloops/<id>` in the repository
 * (a session of another data folder, a group's saved trees). Whatever owns refs
 * there would lose them with the imported session, or the import would move them.
 */
async function refuseWhatIsHere(paths: BundlePaths, repository: Repository, ids: ReadonlySet<string>): Promise<void> {
  const refsHere = new Map<string, number>();
  for (const ref of (await gitText(repository.root, ['for-each-ref', '--format=%(refname)', `${SNAPSHOT_REF_ROOT}/`])).split('\n')) {
    const owner = ref.slice(SNAPSHOT_REF_ROOT.length + 1).split('/')[0];
    if (owner && ids.has(owner)) refsHere.set(owner, (refsHere.get(owner) ?? 0) + 1);
  }
  const collisions = [...ids].flatMap((id) => {
    const what = [
      fs.lstatSync(paths.store.filePathOf(id), { throwIfNoEntry: false }) && `its session file ${paths.store.filePathOf(id)}`,
      fs.lstatSync(paths.sidecarDirOf(id), { throwIfNoEntry: false }) && `its records ${paths.sidecarDirOf(id)}`,
      fs.lstatSync(path.join(paths.groupsDirectory, id), { throwIfNoEntry: false }) && `a candidate group's record ${path.join(paths.groupsDirectory, id)}`,
      refsHere.has(id) && `${refsHere.get(id)} snapshot ref${refsHere.get(id) === 1 ? '' : 's'} under ${SNAPSHOT_REF_ROOT}/${id}/ in ${repository.root}`,
    ].filter((found): found is string => typeof found === 'string');
    return what.length > 0 ? [{ id, what }] : [];
  });
  if (collisions.length === 0) return;
  throw new CodeloopsError(
    'session_exists',
    `${collisions.map(({ id, what }) => `${id} is already here (${what.join(', ')})`).join('; ')}. Nothing was imported.`,
    { ids: collisions.map(({ id }) => id), collisions },
  );
}

/**
 * Creates the bundle's refs in one transaction, each only where there is none: if
 * one has appeared since the checks (another import of the same bundle), none is
 * created and nothing that was here moves.
 */
async function createRefs(repository: Repository, refs: ReadonlyMap<string, string>): Promise<void> {
  try {
    await gitBytes(repository.root, ['update-ref', '--stdin'], { input: Buffer.from([...refs].map(([ref, oid]) => `create ${ref} ${oid}\n`).join('')) });
  } catch (error) {
    const reason = error instanceof GitCommandError ? error.stderr.trim() : '';
    // A lock file in the way is not a session already here (GitLockedError, `git_locked`): it goes on as it is.
    if (!/reference already exists|exists; cannot create/.test(reason)) throw error;
    const ids = [...new Set([...refs.keys()].map((ref) => ref.split('/')[2]!))];
    throw new CodeloopsError(
      'session_exists',
      `${ids.join(', ')} ${ids.length === 1 ? 'is' : 'are'} already here: their snapshot refs were made meanwhile in ${repository.root} (${reason}). Nothing was imported.`,
      { ids },
    );
  }
}

/** The snapshot refs a manifest lists because this repository's history has their commits (`history_refs`): each its bundle's own, each commit here. */
async function historyRefs(repository: Repository, manifest: BundleManifest, ids: ReadonlySet<string>, invalid: Invalid): Promise<Map<string, string>> {
  const refs = new Map<string, string>();
  for (const { ref, oid } of manifest.history_refs ?? []) {
    const owner = /^refs\/codeloops\/([^/]+)\//.exec(ref)?.[1];
    if (!owner || !ids.has(owner) || ref.split('/').includes('..') || !/^[0-9a-f]{40,64}$/.test(oid) || refs.has(ref))
      throw invalid(`its manifest lists a ref that is not one of its sessions': ${ref}`);
    refs.set(ref, oid);
  }
  if (refs.size === 0) return refs;
  const missing = await missingCommits(repository, [...refs.values()]);
  if (missing.length > 0)
    throw invalid(`its snapshots are commits ${repository.root} does not have (${missing.slice(0, 3).join(', ')}): fetch them (git fetch) and import again`, {
      missing_commits: missing,
    });
  return refs;
}

/**
 * The refs a git bundle would bring, once git has checked it against the repository:
 * every one must belong to a session or group of the bundle (a bundle never writes a
 * branch), and the commits it builds on must be here. By name, with the commit each names.
 */
async function bundleRefs(repository: Repository, file: string, ids: ReadonlySet<string>, invalid: Invalid): Promise<Map<string, string>> {
  try {
    // Not --quiet: it keeps the missing commits out of stderr too.
    await gitBytes(repository.root, ['bundle', 'verify', file]);
  } catch (error) {
    const stderr = error instanceof GitCommandError ? error.stderr : String(error);
    const missing = [...stderr.matchAll(/\b([0-9a-f]{40})\b/g)].map((match) => match[1]!);
    if (/lacks these prerequisite commits|requires this ref|prerequisite/i.test(stderr)) {
      throw invalid(
        `its snapshots build on commits ${repository.root} does not have (${missing.slice(0, 3).join(', ') || 'see git bundle verify'}): fetch them (git fetch) and import again`,
        { missing_commits: missing },
      );
    }
    throw invalid(`its snapshots are not a readable git bundle (${stderr.trim().split('\n')[0] ?? 'git bundle verify failed'})`);
  }
  const refs = new Map<string, string>();
  for (const line of (await gitText(repository.root, ['bundle', 'list-heads', file])).split('\n').filter(Boolean)) {
    const [oid = '', ref = ''] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
    const owner = /^refs\/codeloops\/([^/]+)\//.exec(ref)?.[1];
    if (!owner || !ids.has(owner) || ref.split('/').includes('..')) throw invalid(`its snapshots name a ref that is not one of its sessions': ${ref}`);
    if (refs.has(ref)) throw invalid(`its snapshots name ${ref} twice`);
    refs.set(ref, oid);
  }
  return refs;
}
