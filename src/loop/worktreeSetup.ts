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
    fs.cpSync(from, to, { recursive: true, force: true, verbatimSymlinks: true });
    copied.push(entry);
  }
  const setup =
    settings.setup && !signal.aborted
      ? await runCheck({ name: 'setup', run: settings.setup, timeoutSecs: settings.setupTimeoutSecs, required: true }, { cwd: where.workingDir, signal })
      : null;
  return { copied, notFound, setup };
}

function isInside(folder: string, target: string): boolean {
  return path.resolve(folder) !== path.resolve(target) && isWithinFolder(folder, target);
}
