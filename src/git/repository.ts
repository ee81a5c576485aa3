import fs from 'node:fs';
import path from 'node:path';
import { gitClient } from './gitProcess.js';

export class NotAGitRepositoryError extends Error {
  override name = 'NotAGitRepositoryError';
  constructor(readonly directory: string) {
    super(
      `${directory} is not inside a git repository. Codeloops uses git to snapshot the tree before and after each ` +
        `iteration (it never commits to your branch). Run "git init" in that folder (no commit is needed), ` +
        `or pass -d with a folder inside a repository.`,
    );
  }
}

export class MissingDirectoryError extends Error {
  override name = 'MissingDirectoryError';
  constructor(readonly directory: string) {
    super(`The working directory ${directory} does not exist. Pass -d with an existing folder.`);
  }
}

export class GitNotInstalledError extends Error {
  override name = 'GitNotInstalledError';
  constructor() {
    super('git was not found on PATH. Codeloops needs git to snapshot the working tree: install git and try again.');
  }
}

/** A git work tree the runner can snapshot: where it is and where its .git lives. */
export interface Repository {
  /** The top of the work tree. */
  root: string;
  /** The absolute git directory (a worktree has its own). */
  gitDir: string;
  /** The index file the user's git uses (absolute); copied, never written. */
  indexFile: string;
}

export async function openRepository(directory: string): Promise<Repository> {
  const absolute = path.resolve(directory);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(absolute);
  } catch {
    throw new MissingDirectoryError(absolute);
  }
  if (!stat.isDirectory()) throw new MissingDirectoryError(absolute);
  let output: string;
  try {
    output = await gitClient(absolute).raw(['rev-parse', '--is-inside-work-tree', '--show-toplevel', '--absolute-git-dir', '--git-path', 'index']);
  } catch (error) {
    const message = (error as Error).message;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || /spawn git ENOENT/.test(message)) throw new GitNotInstalledError();
    if (/not a git repository/i.test(message)) throw new NotAGitRepositoryError(absolute);
    throw error;
  }
  const [insideWorkTree, root, gitDir, indexFile] = output.split('\n').map((line) => line.trim());
  if (insideWorkTree !== 'true' || !root || !gitDir || !indexFile) throw new NotAGitRepositoryError(absolute);
  // `--git-path` answers relative to where git ran, not to the top of the tree.
  return { root, gitDir, indexFile: path.resolve(absolute, indexFile) };
}

/** HEAD's commit, or null on a branch with no commits yet. */
export async function headCommit(repository: Repository): Promise<string | null> {
  const sha = (await gitClient(repository.root).raw(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'])).trim();
  return sha.length > 0 ? sha : null;
}
