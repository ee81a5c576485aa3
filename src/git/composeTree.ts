import { gitBytes, gitText, nulSeparated } from './gitProcess.js';
import type { Repository } from './repository.js';
import { removeTemporaryIndex, temporaryIndexPath } from './temporaryIndex.js';

const NO_OBJECT = '0'.repeat(40);

/** Who made a composed commit: it is Codeloops', never the user's. */
const COMPOSER_IDENTITY = {
  GIT_AUTHOR_NAME: 'codeloops',
  GIT_AUTHOR_EMAIL: 'codeloops@localhost',
  GIT_COMMITTER_NAME: 'codeloops',
  GIT_COMMITTER_EMAIL: 'codeloops@localhost',
};

/** What goes into a composed tree besides `base`'s files. */
export interface TreeComposition {
  /** Paths (raw, from the top) as `source` has them: written where it has them, removed where it does not. */
  taken: { source: string; rawPaths: readonly string[] };
  /** Files given new contents (a `package.json` with some keys put back), with the mode they had. */
  written: readonly { rawPath: string; content: Buffer; mode: string }[];
}

/**
 * A commit whose tree is `base`'s with some paths as another commit has them and some
 * files rewritten: made in git's object store through a temporary index, never on disk
 * or in the user's index. The oracle's tree (the final code with the start's tests) is
 * one, so that it can be checked out, recorded and diffed like a snapshot.
 */
export async function composeCommit(
  repository: Repository,
  base: string,
  composition: TreeComposition,
  message: string,
): Promise<{ commit: string; tree: string }> {
  const index = temporaryIndexPath(repository, 'compose');
  const variables = { GIT_INDEX_FILE: index, ...COMPOSER_IDENTITY };
  try {
    await gitBytes(repository.root, ['read-tree', base], { variables });
    const entries = [...(await sourceEntries(repository, composition.taken)), ...(await writtenEntries(repository, composition.written))];
    if (entries.length > 0) await gitBytes(repository.root, ['update-index', '-z', '--index-info'], { variables, input: nulSeparated(entries) });
    const tree = (await gitText(repository.root, ['write-tree'], { variables })).trim();
    const commit = (await gitText(repository.root, ['commit-tree', tree, '-p', base, '-m', message], { variables })).trim();
    return { commit, tree };
  } finally {
    removeTemporaryIndex(index);
  }
}

/** `mode sha\tpath` for each taken path `source` has, and a removal (mode 0) for each it does not. */
async function sourceEntries(repository: Repository, taken: TreeComposition['taken']): Promise<string[]> {
  if (taken.rawPaths.length === 0) return [];
  // The whole tree, once: ls-tree's paths are patterns, not literal names.
  const wanted = new Set(taken.rawPaths);
  const listing = await gitBytes(repository.root, ['ls-tree', '-r', '-z', '--full-tree', taken.source]);
  const present = new Map<string, string>();
  for (const entry of listing.toString('latin1').split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const rawPath = entry.slice(tab + 1);
    const [mode, , sha] = entry.slice(0, tab).split(' ');
    if (wanted.has(rawPath)) present.set(rawPath, `${mode} ${sha}`);
  }
  return taken.rawPaths.map((raw) => `${present.get(raw) ?? `0 ${NO_OBJECT}`}\t${raw}`);
}

async function writtenEntries(repository: Repository, written: TreeComposition['written']): Promise<string[]> {
  const entries: string[] = [];
  for (const file of written) {
    const sha = (await gitText(repository.root, ['hash-object', '-w', '--stdin'], { input: file.content })).trim();
    entries.push(`${file.mode} ${sha}\t${file.rawPath}`);
  }
  return entries;
}
