import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { noteMissingDependencies } from '../checks/checkReport.js';
import { checkDirectory, runCheck, type CheckResult, type CheckSpec } from '../checks/runCheck.js';
import type { WorktreeSettings } from '../config/runSettings.js';
import { isWithinFolder } from '../files/folderPaths.js';
import type { GroupRecorder } from '../process/processGroup.js';
import type { Repository } from '../git/repository.js';
import { addWorktree, removeEmptyFolders, removeWorktree } from '../git/worktrees.js';
import { readyWorktree } from './worktreeSetup.js';

/** Where isolated checks make their worktrees, and how each is readied (the candidates' `[worktree]`). */
export interface IsolationSettings {
  /** The worktrees' folder, outside every repository (`worktreesDir()`); isolated checks use its `checks/` folder. */
  directory: string;
  worktree: WorktreeSettings;
}

/** The isolated checks' worktrees that exist right now, for an exit that cannot wait. */
const liveWorktrees = new Map<string, Repository>();

/**
 * Runs a check in a clean worktree of a snapshot (`isolated = true`): what the actor
 * left outside git (an ignored build output, a cache) is not there to make it pass.
 * The worktree is detached at the snapshot, readied as a candidate's is, and removed
 * afterwards whatever happens: the user's tree, index, HEAD and branches are never
 * touched, and no branch is made. Never throws: a worktree that cannot be made or
 * readied is a failed check that says why.
 */
export async function runIsolatedCheck(
  check: CheckSpec,
  at: { repository: Repository; workingDir: string; commit: string; name: string },
  isolation: IsolationSettings,
  options: { signal: AbortSignal; groups?: GroupRecorder; env?: NodeJS.ProcessEnv },
): Promise<CheckResult> {
  const folder = path.join(isolation.directory, 'checks');
  const worktree = path.join(folder, at.name, path.basename(at.repository.root));
  if (isWithinFolder(at.repository.root, worktree))
    return failedToStart(check, `its worktree would go to ${worktree}, inside the repository; set XDG_DATA_HOME to a folder outside it`);
  const workingDir = path.join(worktree, path.relative(at.repository.root, at.workingDir));
  liveWorktrees.set(worktree, at.repository);
  try {
    // A runner killed outright left it: it is ours, and nothing in it is worth keeping.
    if (fs.existsSync(worktree)) await removeWorktree(at.repository, worktree);
    await addWorktree(at.repository, worktree, at.commit);
    const readied = await readyWorktree({ sourceRoot: at.repository.root, worktree, workingDir }, isolation.worktree, options.signal);
    if (readied.setup && !readied.setup.passed) {
      const why = readied.setup.timedOut
        ? `timed out after ${isolation.worktree.setupTimeoutSecs} s`
        : `failed (exit ${readied.setup.exitCode ?? 'by a signal'})`;
      const failed = failedToStart(check, `the worktree setup \`${readied.setup.command}\` ${why}`);
      const output = `${readied.setup.output}\n${failed.output}`;
      return { ...failed, interrupted: readied.setup.interrupted, output, outputChars: output.length };
    }
    const result = await runCheck(check, {
      cwd: checkDirectory(check, { root: worktree, workingDir }),
      signal: options.signal,
      groups: options.groups,
      env: options.env,
    });
    return noteMissingDependencies(result);
  } catch (error) {
    return failedToStart(check, `its clean worktree could not be made: ${(error as Error).message}`);
  } finally {
    await removeWorktree(at.repository, worktree).catch(() => removeNow(worktree, at.repository));
    liveWorktrees.delete(worktree);
    removeEmptyFolders(path.dirname(worktree), isolation.directory);
  }
}

/**
 * Runs a check in the loop's own tree. When that tree is a worktree Codeloops made
 * (a candidate's: under the isolation folder), a command not found there is said to be
 * the worktree's missing dependencies, as in an isolated check's.
 */
export async function runCheckInLoopTree(
  check: CheckSpec,
  tree: { root: string; isolation: IsolationSettings | undefined },
  options: { cwd: string; signal: AbortSignal; groups?: GroupRecorder },
): Promise<CheckResult> {
  const result = await runCheck(check, options);
  return tree.isolation && isWithinFolder(tree.isolation.directory, tree.root) ? noteMissingDependencies(result) : result;
}

/** Removes every isolated check's worktree at once, synchronously: on a second Ctrl+C or a crash, when nothing can be awaited. */
export function removeIsolatedWorktreesNow(): void {
  for (const [worktree, repository] of liveWorktrees) removeNow(worktree, repository);
  liveWorktrees.clear();
}

function removeNow(worktree: string, repository: Repository): void {
  fs.rmSync(worktree, { recursive: true, force: true });
  try {
    execFileSync('git', ['worktree', 'prune'], { cwd: repository.root, stdio: 'ignore' });
  } catch {
    // git forgets a worktree whose folder is gone at its next prune
  }
}

function failedToStart(check: CheckSpec, reason: string): CheckResult {
  const output = `[codeloops: the isolated check could not run: ${reason}]`;
  return {
    name: check.name,
    command: check.run,
    required: check.required,
    hidden: check.hidden === true,
    passed: false,
    exitCode: null,
    durationSecs: 0,
    timedOut: false,
    interrupted: false,
    output,
    outputChars: output.length,
    tests: null,
    report: null,
  };
}
