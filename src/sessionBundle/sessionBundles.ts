import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { readGroup } from '../candidates/groupRecord.js';
import { GitCommandError, gitBytes, gitText } from '../git/gitProcess.js';
import { headCommit, openRepository, type Repository } from '../git/repository.js';
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
  type ExportResult,
  type ImportResult,
} from '../sessionFormat/sessionBundle.js';
import { EVENTS_FILE, isSessionId } from '../sessionFormat/sessionFiles.js';
import { sessionStartLineSchema } from '../sessionFormat/sessionLines.js';
import { AppendOnlyFile } from '../sessionWriter/appendOnlyFile.js';
import { isLoopRunning } from '../sessions/runningLoops.js';
import type { SessionStore } from '../sessions/sessionStore.js';

/**
 * Sessions that leave the machine and come back: a run made on a CI runner is
 * exported with its sidecar records, its candidate group's record and its snapshots
 * (as a git bundle), then imported into a clone of the same repository, where it can
 * be viewed, replayed, rolled back and applied. An import checks everything before
 * it writes anything: a damaged bundle, a bundle whose snapshots need commits the
 * repository lacks, or a session already here imports nothing.
 */

export interface BundlePaths {
  store: SessionStore;
  sidecarDirOf: (sessionId: string) => string;
  groupsDirectory: string;
}

export async function exportSessions(sessionIds: readonly string[], output: string, paths: BundlePaths): Promise<ExportResult> {
  const warnings: string[] = [];
  const manifest: BundleManifest = { format: 'codeloops-sessions', version: 1, created_at: new Date().toISOString(), sessions: [], groups: [] };
  const repositories = new Map<string, Repository>();
  const sessionRepository = new Map<string, Repository>();
  const groupIds = new Set<string>();
  for (const id of new Set(sessionIds)) {
    const session = await paths.store.load(id);
    if (!session.end && isLoopRunning(session.start)) {
      throw new CodeloopsError('loop_running', `Session ${id} is running: export it once it has ended.`, { session_id: id });
    }
    const { start } = session;
    let relative = '';
    let repositoryDir: string | null = start.working_dir;
    if (start.candidate_group) {
      groupIds.add(start.candidate_group);
      const group = await readGroup(paths.groupsDirectory, start.candidate_group).catch(() => null);
      const candidate = group?.started.candidates.find((entry) => entry.label === start.candidate);
      if (group && candidate) {
        relative = path.relative(candidate.worktree, start.working_dir);
        repositoryDir = group.started.working_dir;
      }
    }
    const repository = repositoryDir ? await openRepository(repositoryDir).catch(() => null) : null;
    if (repository) {
      if (!start.candidate_group) relative = path.relative(repository.root, start.working_dir);
      repositories.set(repository.root, repository);
      sessionRepository.set(id, repository);
    } else warnings.push(`session ${id}: its repository ${repositoryDir} cannot be read, so its snapshots are not in the bundle`);
    manifest.sessions.push({ id, working_dir: start.working_dir, relative_dir: toPosix(relative), snapshot_refs: 0 });
  }
  if (repositories.size > 1) {
    throw new CodeloopsError(
      'usage',
      `These sessions come from ${repositories.size} repositories (${[...repositories.keys()].join(', ')}): export the sessions of one repository at a time.`,
    );
  }
  const repository = [...repositories.values()][0];

  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-export-'));
  try {
    const root = path.join(staging, BUNDLE_ROOT);
    fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
    for (const entry of manifest.sessions) {
      fs.copyFileSync(paths.store.filePathOf(entry.id), path.join(root, 'sessions', `${entry.id}.jsonl`));
      const sidecar = paths.sidecarDirOf(entry.id);
      if (fs.existsSync(sidecar)) fs.cpSync(sidecar, path.join(root, 'sidecars', entry.id), { recursive: true });
    }
    for (const groupId of groupIds) {
      const group = await readGroup(paths.groupsDirectory, groupId).catch(() => null);
      if (!group) {
        warnings.push(`candidate group ${groupId}: its record is gone; its sessions are exported without it`);
        continue;
      }
      fs.cpSync(group.directory, path.join(root, 'groups', groupId), { recursive: true });
      manifest.groups.push({
        id: groupId,
        working_dir: group.started.working_dir,
        relative_dir: toPosix(path.relative(group.started.repository, group.started.working_dir)),
      });
    }
    let snapshotRefs = 0;
    if (repository) {
      const refs: string[] = [];
      for (const entry of manifest.sessions) {
        const own = await refsUnder(repository, entry.id);
        entry.snapshot_refs = own.length;
        refs.push(...own);
      }
      for (const group of manifest.groups) refs.push(...(await refsUnder(repository, group.id)));
      snapshotRefs = refs.length;
      if (refs.length > 0) {
        // What the repository's own history holds stays out: the clone that imports has it.
        const exclude = ['--not', '--branches', '--tags', '--remotes', ...((await headCommit(repository)) ? ['HEAD'] : [])];
        await gitBytes(repository.root, ['bundle', 'create', '--quiet', path.join(root, BUNDLE_SNAPSHOTS), ...refs, ...exclude]);
      }
    }
    fs.writeFileSync(path.join(root, BUNDLE_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    const file = path.resolve(output);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await tar.c({ gzip: true, file, cwd: staging, portable: true }, [BUNDLE_ROOT]);
    return {
      file,
      sessions: manifest.sessions.map((entry) => entry.id),
      groups: manifest.groups.map((group) => group.id),
      snapshot_refs: snapshotRefs,
      bytes: fs.statSync(file).size,
      warnings,
    };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

async function refsUnder(repository: Repository, id: string): Promise<string[]> {
  const output = await gitText(repository.root, ['for-each-ref', '--format=%(refname)', `refs/codeloops/${id}/`]);
  return output.split('\n').filter(Boolean);
}

function toPosix(relative: string): string {
  return relative.split(path.sep).join('/');
}

export class BundleInvalidError extends CodeloopsError {
  override name = 'BundleInvalidError';
  constructor(file: string, reason: string, details: Record<string, unknown> = {}) {
    super('bundle_invalid', `${file} cannot be imported: ${reason}. Nothing was imported.`, { file, ...details });
  }
}

export interface ImportRequest extends BundlePaths {
  bundleFile: string;
  /** A working tree of the repository the sessions ran in (another clone of it). */
  targetDir: string;
}

export async function importBundle(request: ImportRequest): Promise<ImportResult> {
  const bundleFile = path.resolve(request.bundleFile);
  const invalid = (reason: string, details?: Record<string, unknown>) => new BundleInvalidError(bundleFile, reason, details);
  if (!fs.statSync(bundleFile, { throwIfNoEntry: false })?.isFile()) throw invalid('there is no such file');
  const repository = await openRepository(request.targetDir);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-import-'));
  const fetched: string[] = [];
  const written: string[] = [];
  try {
    try {
      // Only files and folders, only inside the staging folder (tar's own checks refuse absolute paths and "..").
      await tar.x({
        file: bundleFile,
        cwd: staging,
        strict: true,
        filter: (_entry, stat) => 'type' in stat && (stat.type === 'File' || stat.type === 'Directory'),
      });
    } catch (error) {
      throw invalid(`it is not a gzipped tar file (${(error as Error).message})`);
    }
    const root = path.join(staging, BUNDLE_ROOT);
    const manifest = readManifest(path.join(root, BUNDLE_MANIFEST), invalid);

    // Everything is checked before anything is written.
    const sessions = manifest.sessions.map((entry) => {
      if (!isSessionId(entry.id)) throw invalid(`"${entry.id}" is not a session id`);
      const text = readBundled(path.join(root, 'sessions', `${entry.id}.jsonl`), invalid);
      const newline = text.indexOf('\n');
      const start = sessionStartLineSchema.safeParse(parseJson(newline < 0 ? text : text.slice(0, newline)));
      if (!start.success) throw invalid(`sessions/${entry.id}.jsonl does not start with a session_start line`);
      return { entry, text, newline, start: start.data };
    });
    const groups = manifest.groups.map((entry) => {
      if (!isGroupId(entry.id)) throw invalid(`"${entry.id}" is not a candidate group id`);
      const text = readBundled(path.join(root, 'groups', entry.id, GROUP_RECORD_FILE), invalid);
      const lines = text.split('\n').filter(Boolean);
      const first = groupRecordLineSchema.safeParse(parseJson(lines[0] ?? ''));
      if (!first.success || first.data.type !== 'group_started') throw invalid(`the record of candidate group ${entry.id} does not start with group_started`);
      return { entry, lines, first: first.data, ended: lines.some((line) => /"type"\s*:\s*"group_finished"/.test(line)) };
    });
    const existing = [
      ...sessions
        .filter(({ entry }) => fs.existsSync(request.store.filePathOf(entry.id)) || fs.existsSync(request.sidecarDirOf(entry.id)))
        .map(({ entry }) => entry.id),
      ...groups.filter(({ entry }) => fs.existsSync(path.join(request.groupsDirectory, entry.id))).map(({ entry }) => entry.id),
    ];
    if (existing.length > 0) {
      throw new CodeloopsError('session_exists', `${existing.join(', ')} ${existing.length === 1 ? 'is' : 'are'} already here. Nothing was imported.`, {
        ids: existing,
      });
    }
    const ids = new Set([...sessions.map(({ entry }) => entry.id), ...groups.map(({ entry }) => entry.id)]);
    const snapshots = path.join(root, BUNDLE_SNAPSHOTS);
    const refs = fs.existsSync(snapshots) ? await bundleRefs(repository, snapshots, ids, invalid) : [];

    // Then written: the snapshots first (refs that were not here), then the records.
    if (refs.length > 0) {
      fetched.push(...refs);
      await gitBytes(repository.root, [
        'fetch',
        '--quiet',
        '--no-tags',
        '--no-write-fetch-head',
        '--no-recurse-submodules',
        snapshots,
        ...refs.map((ref) => `${ref}:${ref}`),
      ]);
    }
    const rehome = (relative: string) => path.join(repository.root, ...relative.split('/').filter(Boolean));
    const imported = stampEvent({ type: 'imported', from_working_dir: '', bundle: path.basename(bundleFile) });
    fs.mkdirSync(request.store.directory, { recursive: true, mode: 0o700 });
    for (const { entry, text, newline, start } of sessions) {
      const target = request.store.filePathOf(entry.id);
      const line = JSON.stringify({ ...start, working_dir: rehome(entry.relative_dir) });
      written.push(target);
      fs.writeFileSync(target, newline < 0 ? `${line}\n` : line + text.slice(newline), { flag: 'wx', mode: 0o600 });
      const sidecar = request.sidecarDirOf(entry.id);
      written.push(sidecar);
      const bundled = path.join(root, 'sidecars', entry.id);
      if (fs.existsSync(bundled)) fs.cpSync(bundled, sidecar, { recursive: true, errorOnExist: true, force: false });
      else fs.mkdirSync(sidecar, { recursive: true, mode: 0o700 });
      const events = AppendOnlyFile.openForAppend(path.join(sidecar, EVENTS_FILE));
      try {
        events.appendLine({ ...imported, from_working_dir: entry.working_dir });
      } finally {
        events.close();
      }
    }
    for (const { entry, lines, first, ended } of groups) {
      const folder = path.join(request.groupsDirectory, entry.id);
      written.push(folder);
      fs.cpSync(path.join(root, 'groups', entry.id), folder, { recursive: true, errorOnExist: true, force: false });
      const rehomed = [JSON.stringify({ ...first, working_dir: rehome(entry.relative_dir), repository: repository.root }), ...lines.slice(1)];
      // A group whose record never ended was left by a runner that stopped: here nothing runs it.
      if (!ended)
        rehomed.push(JSON.stringify({ type: 'group_finished', timestamp: new Date().toISOString(), group_id: entry.id, status: 'crashed', ranking: [] }));
      // Its worktrees stayed on the machine that ran it: none of them is here.
      const labels = first.candidates.map((candidate) => candidate.label);
      rehomed.push(JSON.stringify({ type: 'worktrees_removed', timestamp: new Date().toISOString(), group_id: entry.id, removed: labels, kept: [] }));
      fs.writeFileSync(path.join(folder, GROUP_RECORD_FILE), rehomed.join('\n') + '\n', { mode: 0o600 });
    }
    return {
      sessions: sessions.map(({ entry }) => entry.id),
      groups: groups.map(({ entry }) => entry.id),
      repository: repository.root,
      snapshot_refs: refs.length,
      warnings: [],
    };
  } catch (error) {
    // Whatever got written goes again: an import is all or nothing.
    for (const file of written) fs.rmSync(file, { recursive: true, force: true });
    if (fetched.length > 0) {
      await gitBytes(repository.root, ['update-ref', '--stdin'], { input: Buffer.from(fetched.map((ref) => `delete ${ref}\n`).join('')) }).catch(
        () => undefined,
      );
    }
    throw error;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function readManifest(file: string, invalid: (reason: string) => Error): BundleManifest {
  const text = readBundled(file, invalid);
  const parsed = bundleManifestSchema.safeParse(parseJson(text));
  if (!parsed.success) throw invalid(`its ${BUNDLE_MANIFEST} is not a codeloops sessions manifest`);
  return parsed.data;
}

function readBundled(file: string, invalid: (reason: string) => Error): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    throw invalid(
      `it has no ${path
        .relative(path.dirname(path.dirname(file)), file)
        .split(path.sep)
        .join('/')}`,
    );
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The refs a git bundle would bring, once git has checked it against the repository:
 * every one must belong to a session or group of the bundle (a bundle never writes a
 * branch), and the commits it builds on must be here.
 */
async function bundleRefs(
  repository: Repository,
  file: string,
  ids: ReadonlySet<string>,
  invalid: (reason: string, details?: Record<string, unknown>) => Error,
): Promise<string[]> {
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
  const heads = (await gitText(repository.root, ['bundle', 'list-heads', file])).split('\n').filter(Boolean);
  const refs = heads.map((line) => line.slice(line.indexOf(' ') + 1));
  for (const ref of refs) {
    const owner = /^refs\/codeloops\/([^/]+)\//.exec(ref)?.[1];
    if (!owner || !ids.has(owner) || ref.split('/').includes('..')) throw invalid(`its snapshots name a ref that is not one of its sessions': ${ref}`);
  }
  return refs;
}
