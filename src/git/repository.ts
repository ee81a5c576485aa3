import fs from 'node:fs';
import path from 'node:path';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { GitCommandError, gitText } from './gitProcess.js';

export class NotAGitRepositoryError extends CodeloopsError {
  override name = 'NotAGitRepositoryError';
  constructor(readonly directory: string) {
    super(
      'not_a_repository',
      `${directory} is not inside a git repository. Codeloops uses git to snapshot the tree before and after each ` +
        `iteration (it never commits to your branch). Run "git init" in that folder (no commit is needed), or work in a folder inside a repository.`,
      { directory },
    );
  }
}

export class MissingDirectoryError extends CodeloopsError {
  override name = 'MissingDirectoryError';
  constructor(readonly directory: string) {
    super('directory_missing', `The working directory ${directory} does not exist or is not a folder.`, { directory });
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
    output = await gitText(absolute, ['rev-parse', '--is-inside-work-tree', '--show-toplevel', '--absolute-git-dir', '--git-path', 'index']);
  } catch (error) {
    // git says so on stderr; LC_ALL=C keeps its words in English.
    if (error instanceof GitCommandError && /not a git repository/i.test(error.stderr)) throw new NotAGitRepositoryError(absolute);
    throw error;
  }
  const [insideWorkTree, root, gitDir, indexFile] = output.split('\n').map((line) => line.trim());
  if (insideWorkTree !== 'true' || !root || !gitDir || !indexFile) throw new NotAGitRepositoryError(absolute);
  // `--git-path` answers relative to where git ran, not to the top of the tree.
  return { root, gitDir, indexFile: path.resolve(absolute, indexFile) };
}

/** HEAD's commit, or null on a branch with no commits yet. */
export async function headCommit(repository: Repository): Promise<string | null> {
  const sha = (await gitText(repository.root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { mayFindNothing: true })).trim();
  return sha.length > 0 ? sha : null;
}
