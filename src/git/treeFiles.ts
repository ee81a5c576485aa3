import { displayPath, gitBytes } from './gitProcess.js';
import type { Repository } from './repository.js';

/** Every file path a tree holds (from the repository's top, as people read them); nested repositories included as their folder. */
export async function treeFilePaths(repository: Repository, tree: string): Promise<string[]> {
  const output = (await gitBytes(repository.root, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', tree])).toString('latin1');
  return output
    .split('\0')
    .filter(Boolean)
    .map((rawPath) => displayPath(rawPath));
}

/**
 * Files' bytes as trees hold them, in one `git cat-file --batch`: undefined for a
 * path the tree does not have as a file. Raw (latin1) paths, as `changedPaths` gives them;
 * a `tree` of '' reads the index (stage 0), as git's `:<path>` names it.
 */
export async function readTreeFiles(repository: Repository, wanted: readonly { tree: string; rawPath: string }[]): Promise<(Buffer | undefined)[]> {
  // A name with a newline cannot be asked for on a line of its own: read as absent.
  const askable = wanted.filter(({ rawPath }) => !rawPath.includes('\n'));
  if (askable.length < wanted.length) {
    const read = await readTreeFiles(repository, askable);
    const byRequest = new Map(askable.map((request, i) => [request, read[i]]));
    return wanted.map((request) => byRequest.get(request));
  }
  if (wanted.length === 0) return [];
  const input = Buffer.from(wanted.map(({ tree, rawPath }) => `${tree}:${rawPath}\n`).join(''), 'latin1');
  const output = await gitBytes(repository.root, ['cat-file', '--batch'], { input });
  const files: (Buffer | undefined)[] = [];
  let at = 0;
  for (let i = 0; i < wanted.length; i++) {
    const end = output.indexOf(0x0a, at);
    if (end < 0) break;
    // `<object> blob <size>` then the bytes and a newline; `<name> missing` (or another type) alone.
    const header = /^[0-9a-f]+ (\w+) (\d+)$/.exec(output.subarray(at, end).toString('latin1'));
    if (!header) {
      files.push(undefined);
      at = end + 1;
      continue;
    }
    const size = Number(header[2]);
    files.push(header[1] === 'blob' ? output.subarray(end + 1, end + 1 + size) : undefined);
    at = end + 1 + size + 1;
  }
  return files;
}
