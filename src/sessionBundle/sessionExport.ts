import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as tar from 'tar';
import { readGroup } from '../candidates/groupRecord.js';
import { GitCommandError, gitBytes, gitText } from '../git/gitProcess.js';
import { headCommit, openRepository, type Repository } from '../git/repository.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { BUNDLE_MANIFEST, BUNDLE_ROOT, BUNDLE_SNAPSHOTS, type BundleManifest, type ExportResult } from '../sessionFormat/sessionBundle.js';
import { isLoopRunning } from '../sessions/loopLiveness.js';
import type { BundlePaths } from './sessionBundles.js';

/**
 * A bundle written (`codeloops sessions export`, an eval shard's `--export`): the
 * sessions' files and sidecar records, their candidate groups' records, their
 * snapshot refs as a git bundle, and what the caller adds (an eval's record). See
 * `sessionBundles.ts` for how it is read back.
 */

/** What a bundle carries beside its sessions: a section of its manifest, and files put into it by their path there (forward slashes). */
export interface BundleExtra {
  manifest?: Pick<BundleManifest, 'eval' | 'queue'>;
  files?: ReadonlyArray<{ name: string; source: string }>;
  /** The repository the sessions ran in, at its top, when their working folders are gone (an eval run's worktree): their snapshots are there. */
  repository?: string;
}

export async function exportSessions(sessionIds: readonly string[], output: string, paths: BundlePaths, extra: BundleExtra = {}): Promise<ExportResult> {
  const file = path.resolve(output);
  // Where the bundle goes is checked first: nothing is exported to a place it cannot be written.
  const cannotWrite = (error: unknown) =>
    new CodeloopsError('usage', `${file} cannot be written: ${path.dirname(file)} cannot be a folder (${(error as Error).message}).`, { file });
  let existing: fs.Stats | undefined;
  try {
    existing = fs.statSync(file, { throwIfNoEntry: false });
  } catch (error) {
    throw cannotWrite(error);
  }
  if (existing?.isDirectory()) {
    throw new CodeloopsError('usage', `${file} is a folder: a bundle is written to a file (such as ${path.join(file, 'bundle.tar.gz')}).`, { file });
  }
  const warnings: string[] = [];
  const plan = await planExport(sessionIds, paths, warnings, extra.repository);
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-export-'));
  // Written beside it, then renamed over it: a reader (an upload, an import) never sees a bundle half-written, and a shard rewriting its own keeps the last whole one.
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
  try {
    const root = path.join(staging, BUNDLE_ROOT);
    await stageRecords(root, plan, paths, warnings);
    const snapshotRefs = plan.repository ? await stageSnapshots(root, plan.repository, plan.manifest) : 0;
    Object.assign(plan.manifest, extra.manifest);
    for (const { name, source } of extra.files ?? []) {
      fs.mkdirSync(path.dirname(path.join(root, ...name.split('/'))), { recursive: true });
      fs.copyFileSync(source, path.join(root, ...name.split('/')));
    }
    fs.writeFileSync(path.join(root, BUNDLE_MANIFEST), JSON.stringify(plan.manifest, null, 2) + '\n');
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
    } catch (error) {
      throw cannotWrite(error);
    }
    await tar.c({ gzip: true, file: temporary, cwd: staging, portable: true }, [BUNDLE_ROOT]);
    fs.renameSync(temporary, file);
    return {
      file,
      sessions: plan.manifest.sessions.map((entry) => entry.id),
      groups: plan.manifest.groups.map((group) => group.id),
      snapshot_refs: snapshotRefs,
      bytes: fs.statSync(file).size,
      warnings,
    };
  } finally {
    fs.rmSync(temporary, { force: true });
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

interface ExportPlan {
  /** Its groups are filled in as their records are staged. */
  manifest: BundleManifest;
  groupIds: Set<string>;
  /** The one repository the sessions ran in, when it can be read: where their snapshots are. */
  repository: Repository | undefined;
}

/** The sessions to export, where each ran in its repository, and their candidate groups; sessions of two repositories are refused. */
async function planExport(sessionIds: readonly string[], paths: BundlePaths, warnings: string[], ranIn?: string): Promise<ExportPlan> {
  const manifest: BundleManifest = { format: 'codeloops-sessions', version: 1, created_at: new Date().toISOString(), sessions: [], groups: [] };
  const repositories = new Map<string, Repository>();
  const groupIds = new Set<string>();
  for (const id of new Set(sessionIds)) {
    const session = await paths.store.load(id);
    if (!session.end && isLoopRunning(session.start)) {
      throw new CodeloopsError('loop_running', `Session ${id} is running: export it once it has ended.`, { session_id: id });
    }
    const { start } = session;
    let relative = '';
    let repositoryDir: string | null = ranIn ?? start.working_dir;
    if (ranIn === undefined && start.candidate_group) {
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
      if (ranIn === undefined && !start.candidate_group) relative = path.relative(repository.root, start.working_dir);
      repositories.set(repository.root, repository);
    } else warnings.push(`session ${id}: its repository ${repositoryDir} cannot be read, so its snapshots are not in the bundle`);
    manifest.sessions.push({ id, working_dir: start.working_dir, relative_dir: toPosix(relative), snapshot_refs: 0 });
  }
  if (repositories.size > 1) {
    throw new CodeloopsError(
      'usage',
      `These sessions come from ${repositories.size} repositories (${[...repositories.keys()].join(', ')}): export the sessions of one repository at a time.`,
    );
  }
  return { manifest, groupIds, repository: [...repositories.values()][0] };
}

/** The sessions' files and sidecar records, and their groups' records (each group into the manifest), copied into the bundle's folder. */
async function stageRecords(root: string, plan: ExportPlan, paths: BundlePaths, warnings: string[]): Promise<void> {
  fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
  for (const entry of plan.manifest.sessions) {
    fs.copyFileSync(paths.store.filePathOf(entry.id), path.join(root, 'sessions', `${entry.id}.jsonl`));
    const sidecar = paths.sidecarDirOf(entry.id);
    if (fs.existsSync(sidecar)) fs.cpSync(sidecar, path.join(root, 'sidecars', entry.id), { recursive: true });
  }
  for (const groupId of plan.groupIds) {
    const group = await readGroup(paths.groupsDirectory, groupId).catch(() => null);
    if (!group) {
      warnings.push(`candidate group ${groupId}: its record is gone; its sessions are exported without it`);
      continue;
    }
    fs.cpSync(group.directory, path.join(root, 'groups', groupId), { recursive: true });
    plan.manifest.groups.push({
      id: groupId,
      working_dir: group.started.working_dir,
      relative_dir: toPosix(path.relative(group.started.repository, group.started.working_dir)),
    });
  }
}

/** The sessions' and groups' snapshot refs as a git bundle in the bundle's folder (each session's count into the manifest); how many refs. */
async function stageSnapshots(root: string, repository: Repository, manifest: BundleManifest): Promise<number> {
  const refs: string[] = [];
  for (const entry of manifest.sessions) {
    const own = await refsUnder(repository, entry.id);
    entry.snapshot_refs = own.length;
    refs.push(...own);
  }
  for (const group of manifest.groups) refs.push(...(await refsUnder(repository, group.id)));
  if (refs.length > 0) {
    // What the repository's own history holds stays out: the clone that imports has it.
    const exclude = ['--not', '--branches', '--tags', '--remotes', ...((await headCommit(repository)) ? ['HEAD'] : [])];
    const file = path.join(root, BUNDLE_SNAPSHOTS);
    try {
      await gitBytes(repository.root, ['bundle', 'create', '--quiet', file, ...refs, ...exclude]);
    } catch (error) {
      // Every ref's commit is in that history: git makes no bundle, and the refs are listed instead.
      if (!(error instanceof GitCommandError && /empty bundle/i.test(error.stderr))) throw error;
    }
    const bundled = fs.existsSync(file)
      ? new Set((await gitText(repository.root, ['bundle', 'list-heads', file])).split('\n').map((line) => line.slice(line.indexOf(' ') + 1)))
      : new Set();
    // A ref git left out because that history reaches its commit would be lost without a word: the manifest lists it.
    const left = refs.filter((ref) => !bundled.has(ref));
    if (left.length > 0) {
      const named = await gitText(repository.root, ['for-each-ref', '--format=%(objectname) %(refname)', ...left]);
      manifest.history_refs = named
        .split('\n')
        .filter(Boolean)
        .map((line) => ({ oid: line.slice(0, line.indexOf(' ')), ref: line.slice(line.indexOf(' ') + 1) }));
    }
  }
  return refs.length;
}

async function refsUnder(repository: Repository, id: string): Promise<string[]> {
  const output = await gitText(repository.root, ['for-each-ref', '--format=%(refname)', `refs/codeloops/${id}/`]);
  return output.split('\n').filter(Boolean);
}

function toPosix(relative: string): string {
  return relative.split(path.sep).join('/');
}
