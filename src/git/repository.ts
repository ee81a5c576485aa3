import fs from 'node:fs';
import path from 'node:path';
import { describeNonFile, readRegularFileSync } from '../files/regularFile.js';
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
  constructor(
    readonly directory: string,
    /** What is there instead of a folder, in words ("is a file"); undefined when nothing is. */
    what?: string,
  ) {
    super(
      'directory_missing',
      what === undefined
        ? `The working directory ${directory} does not exist.`
        : `The working directory ${directory} ${what}, not a folder: give the folder of a git repository${what === 'is a file' ? ` (such as ${path.dirname(directory)}, where it is)` : ''}.`,
      { directory },
    );
  }
}

/** A git directory (`.git`, or a bare repository): git's own files, with no working tree for agents to change. */
export class NotAWorkTreeError extends CodeloopsError {
  override name = 'NotAWorkTreeError';
  constructor(
    readonly directory: string,
    details: { git_dir: string; bare: boolean; work_tree: string | null },
  ) {
    super(
      'not_a_work_tree',
      details.bare
        ? `${directory} is a bare git repository: it has no working tree of files for agents to change. ` +
            `Work in a clone of it ("git clone ${directory} <folder>") or in a worktree of it ("git -C ${directory} worktree add <folder>").`
        : `${directory} is ${directory === details.git_dir ? "a repository's git folder" : `inside the git folder ${details.git_dir}`}, not a working tree: ` +
            `git keeps its own files there. ${details.work_tree ? `Work in ${details.work_tree}, the repository's folder.` : "Work in the repository's own folder."}`,
      { directory, ...details },
    );
  }
}

/** A git work tree the runner can snapshot: where it is and where its .git lives. */
export interface Repository {
  /** The top of the work tree. */
  root: string;
  /** The absolute git directory (a worktree has its own). */
  gitDir: string;
  /** The index file the user's git uses (absolute): copied, and written only by `queue merge`, under git's own lock. */
  indexFile: string;
  /** The repository's own attributes file (`info/attributes` in its git folder, shared by its worktrees; absolute). */
  attributesFile: string;
}

export async function openRepository(directory: string): Promise<Repository> {
  const absolute = path.resolve(directory);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new MissingDirectoryError(absolute, 'is a symbolic link that leads round in a loop');
    throw new MissingDirectoryError(absolute);
  }
  if (!stat.isDirectory()) throw new MissingDirectoryError(absolute, stat.isFile() ? 'is a file' : describeNonFile(stat).replace(/, not a file$/, ''));
  let output: string;
  try {
    output = await gitText(absolute, [
      'rev-parse',
      '--is-inside-work-tree',
      '--show-toplevel',
      '--absolute-git-dir',
      '--git-path',
      'index',
      '--git-path',
      'info/attributes',
    ]);
  } catch (error) {
    // git says so on stderr; LC_ALL=C keeps its words in English.
    if (error instanceof GitCommandError && /not a git repository/i.test(error.stderr)) throw new NotAGitRepositoryError(absolute);
    if (error instanceof GitCommandError && /must be run in a work tree/i.test(error.stderr)) throw await notAWorkTree(absolute);
    throw error;
  }
  const [insideWorkTree, root, gitDir, indexFile, attributesFile] = output.split('\n').map((line) => line.trim());
  if (insideWorkTree === 'false') throw await notAWorkTree(absolute);
  if (insideWorkTree !== 'true' || !root || !gitDir || !indexFile || !attributesFile) throw new NotAGitRepositoryError(absolute);
  // `--git-path` answers relative to where git ran, not to the top of the tree.
  return { root, gitDir, indexFile: path.resolve(absolute, indexFile), attributesFile: path.resolve(absolute, attributesFile) };
}

/** Says what a folder git knows but cannot work in is: a bare repository, or a git folder (and where its work tree is). */
async function notAWorkTree(directory: string): Promise<NotAWorkTreeError> {
  const [bare, gitDir] = (await gitText(directory, ['rev-parse', '--is-bare-repository', '--absolute-git-dir'])).split('\n').map((line) => line.trim());
  const git_dir = gitDir || directory;
  // A repository's own `.git` sits in its work tree; a linked worktree's git folder names its `.git` file in `gitdir`.
  let work_tree: string | null = null;
  if (path.basename(git_dir) === '.git') work_tree = path.dirname(git_dir);
  else {
    try {
      const pointer = readRegularFileSync(path.join(git_dir, 'gitdir')).trim();
      if (pointer) work_tree = path.dirname(pointer);
    } catch {
      // not a linked worktree: where its work tree is cannot be told
    }
  }
  return new NotAWorkTreeError(directory, { git_dir, bare: bare === 'true', work_tree });
}

/** HEAD's commit, or null on a branch with no commits yet. */
export async function headCommit(repository: Repository): Promise<string | null> {
  const sha = (await gitText(repository.root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { mayFindNothing: true })).trim();
  return sha.length > 0 ? sha : null;
}

/**
 * Which of these commits the repository does not have (a name that is not a commit's, a
 * blob's say, counts as missing), asked of git once for them all.
 */
export async function missingCommits(repository: Repository, commits: readonly string[]): Promise<string[]> {
  const wanted = [...new Set(commits)];
  if (wanted.length === 0) return [];
  const input = Buffer.from(wanted.map((commit) => `${commit}^{commit}\n`).join(''));
  const found = new Set(
    (await gitText(repository.root, ['cat-file', '--batch-check=%(objectname)'], { input })).split('\n').filter((line) => /^[0-9a-f]+$/.test(line)),
  );
  return wanted.filter((commit) => !found.has(commit));
}
