import type { FileChange } from '../sessionFormat/runEvents.js';

/** One file's part of a unified diff. */
export interface DiffFileSection extends FileChange {
  /** The section's text, from its `diff --git` line to the next one. */
  patch: string;
}

/**
 * Splits a recorded unified diff (`git diff` output) into files, with their status
 * and line counts: how the viewer and the tree show sessions whose snapshots are
 * gone, and sessions written by other tools.
 */
export function splitUnifiedDiff(diff: string): DiffFileSection[] {
  const sections: DiffFileSection[] = [];
  const starts: number[] = [];
  const header = /^diff --git /gm;
  for (let match = header.exec(diff); match; match = header.exec(diff)) starts.push(match.index);
  starts.forEach((start, index) => {
    const patch = diff.slice(start, starts[index + 1] ?? diff.length);
    sections.push(describeSection(patch));
  });
  return sections;
}

function describeSection(patch: string): DiffFileSection {
  const lines = patch.split('\n');
  let oldPath: string | undefined;
  let newPath: string | undefined;
  let status: FileChange['status'] = 'modified';
  let insertions = 0;
  let deletions = 0;
  let binary = false;
  let inHunk = false;
  for (const line of lines) {
    if (inHunk) {
      if (line.startsWith('+')) insertions += 1;
      else if (line.startsWith('-')) deletions += 1;
      continue;
    }
    if (line.startsWith('@@')) inHunk = true;
    else if (line.startsWith('new file mode')) status = 'added';
    else if (line.startsWith('deleted file mode')) status = 'deleted';
    else if (line.startsWith('rename from ')) {
      status = 'renamed';
      oldPath = line.slice('rename from '.length);
    } else if (line.startsWith('rename to ')) newPath = line.slice('rename to '.length);
    else if (line.startsWith('copy from ')) {
      status = 'copied';
      oldPath = line.slice('copy from '.length);
    } else if (line.startsWith('copy to ')) newPath = line.slice('copy to '.length);
    else if (line.startsWith('--- ') && line !== '--- /dev/null') oldPath ??= stripPrefix(line.slice(4), 'a/');
    else if (line.startsWith('+++ ') && line !== '+++ /dev/null') newPath ??= stripPrefix(line.slice(4), 'b/');
    else if (line.startsWith('Binary files ')) binary = true;
  }
  if (!newPath && !oldPath) {
    // No ---/+++ lines (binary, mode-only change): fall back to the header.
    const fromHeader = /^diff --git a\/(.*) b\/(.*)$/.exec(lines[0] ?? '');
    oldPath = fromHeader?.[1];
    newPath = fromHeader?.[2];
  }
  const path = (status === 'deleted' ? oldPath : newPath) ?? oldPath ?? '';
  return {
    path,
    ...(status === 'renamed' || status === 'copied' ? { oldPath } : {}),
    status,
    insertions: binary ? null : insertions,
    deletions: binary ? null : deletions,
    patch,
  };
}

function stripPrefix(value: string, prefix: string): string {
  const unquoted = value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  return unquoted.startsWith(prefix) ? unquoted.slice(prefix.length) : unquoted;
}
