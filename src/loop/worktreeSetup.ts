import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { runCheck, type CheckResult } from '../checks/runCheck.js';
import type { WorktreeSettings } from '../config/runSettings.js';
import { isWithinFolder } from '../files/folderPaths.js';

/** What readying a worktree did: the `[worktree] copy` entries copied or not found, and the setup's run. */
export interface ReadiedWorktree {
  copied: string[];
  notFound: string[];
  /** null: no setup configured, or stopped before it began. */
  setup: CheckResult | null;
}

/**
 * Readies a fresh worktree as `[worktree]` says, for a candidate or an isolated
 * check alike: the `copy` files from the source tree (ignored files such as `.env`
 * are not in a snapshot), then the `setup` command in the worktree's working folder.
 */
export async function readyWorktree(
  where: { sourceRoot: string; worktree: string; workingDir: string },
  settings: WorktreeSettings,
  signal: AbortSignal,
): Promise<ReadiedWorktree> {
  const copied: string[] = [];
  const notFound: string[] = [];
  for (const entry of settings.copy) {
    const from = path.join(where.sourceRoot, entry);
    const to = path.join(where.worktree, entry);
    // The config's paths are checked to stay inside; a resolved path that leaves is refused all the same.
    if (!isInside(where.sourceRoot, from) || !isInside(where.worktree, to) || !fs.existsSync(from)) {
      notFound.push(entry);
      continue;
    }
    fs.mkdirSync(path.dirname(to), { recursive: true });
    await copyTree(from, to, signal);
    copied.push(entry);
  }
  const setup =
    settings.setup && !signal.aborted
      ? await runCheck(
          { name: 'setup', run: settings.setup, timeoutSecs: settings.setupTimeoutSecs, required: true, runner: 'none' },
          { cwd: where.workingDir, signal },
        )
      : null;
  return { copied, notFound, setup };
}

/**
 * Copies a file or folder (a `node_modules` of tens of megabytes) as copy-on-write
 * clones where the filesystem allows (Btrfs, XFS, APFS), a plain copy where not;
 * never hard links, through which a worktree would change the user's own files.
 * Symbolic links are copied as links. On Linux GNU cp does it in a child process
 * (\`--reflink=auto\`): as fast as Node's copy here, and the event loop, which runs
 * the other candidates meanwhile, is not held for seconds. Elsewhere, or without
 * GNU cp, Node's copy with FICLONE (clonefile on macOS).
 */
export async function copyTree(from: string, to: string, signal?: AbortSignal): Promise<void> {
  if (process.platform === 'linux' && (await copiedByCp(from, to, signal))) return;
  await fs.promises.cp(from, to, { recursive: true, force: true, verbatimSymlinks: true, preserveTimestamps: true, mode: fs.constants.COPYFILE_FICLONE });
}

/** False when GNU cp is not there to run; throws when it ran and failed. */
function copiedByCp(from: string, to: string, signal?: AbortSignal): Promise<boolean> {
  const isFolder = fs.lstatSync(from).isDirectory();
  // A folder's contents into the target, which may exist (a tracked file of the same folder): never the folder inside it.
  if (isFolder) fs.mkdirSync(to, { recursive: true });
  const args = ['-a', '--reflink=auto', '--', isFolder ? `${from}${path.sep}.` : from, to];
  return new Promise((resolve, reject) => {
    const child = spawn('cp', args, { stdio: ['ignore', 'ignore', 'pipe'], signal });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? resolve(false) : reject(error)));
    child.on('close', (code) => {
      if (code === 0) resolve(true);
      // BSD cp (no --reflink) says so in its usage: Node's copy then.
      else if (/unrecognized option|illegal option|usage:/i.test(stderr)) resolve(false);
      else reject(new Error(`copying ${from} failed: ${stderr.trim() || `cp exited with ${code ?? 'a signal'}`}`));
    });
  });
}

function isInside(folder: string, target: string): boolean {
  return path.resolve(folder) !== path.resolve(target) && isWithinFolder(folder, target);
}
