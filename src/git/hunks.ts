import { displayPath, gitBytes, GitCommandError } from './gitProcess.js';
import type { Repository } from './repository.js';

/**
 * An iteration's change as hunks: what a reviewer accepts or rejects one at a time.
 * The patch comes from git (`git diff` between two snapshots, renames shown as a
 * deletion and an addition, binary files whole) and goes back through git
 * (`git apply`), which checks every hunk against what is there now: a hunk whose
 * lines the user has since edited does not apply, and nothing is changed. Patches
 * are bytes end to end (CRLF, any encoding, binary), never decoded on the way.
 */

export interface FilePatch {
  /** The file's path as people read it (its new path, or its old one for a deletion). */
  path: string;
  status: 'added' | 'deleted' | 'modified';
  binary: boolean;
  /** The file's header (`diff --git …` up to its first hunk): every one-hunk patch starts with it. */
  header: Buffer;
  hunks: Hunk[];
}

export interface Hunk {
  /** Its number among all the hunks of the change, from 1, in the order `git diff` lists them. */
  number: number;
  path: string;
  /** Where it sits in the old and the new file (`@@ -oldStart,oldLines +newStart,newLines @@`); 0 for a whole-file change. */
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** The hunk's own text from its `@@` line (for a binary or a header-only change: the header's summary). */
  text: string;
  /** This hunk alone as a patch `git apply` takes: the file header, then the hunk. */
  patch: Buffer;
}

const DIFF_OPTIONS = ['--no-ext-diff', '--no-textconv', '--no-color', '--no-renames', '--binary', '-U3', '--src-prefix=a/', '--dst-prefix=b/'];

/** The hunks that turn `from` into `to` (two snapshots). */
export async function diffHunks(repository: Repository, from: string, to: string): Promise<FilePatch[]> {
  const change = await diffPatch(repository, from, to);
  return splitPatch(change.patch, change.files);
}

/** The whole patch that turns `from` into `to`, as `git apply` takes it, and its files in the patch's order. */
export async function diffPatch(
  repository: Repository,
  from: string,
  to: string,
): Promise<{ patch: Buffer; files: { path: string; status: FilePatch['status'] }[] }> {
  if (from === to) return { patch: Buffer.alloc(0), files: [] };
  const [patch, statuses] = await Promise.all([
    gitBytes(repository.root, ['diff', ...DIFF_OPTIONS, from, to]),
    gitBytes(repository.root, ['diff', '--no-renames', '--name-status', '-z', from, to]),
  ]);
  return { patch, files: parseStatuses(statuses) };
}

/** `--name-status -z`, in the order the patch lists the files. */
function parseStatuses(output: Buffer): { path: string; status: FilePatch['status'] }[] {
  const fields = output.toString('latin1').split('\0');
  const files: { path: string; status: FilePatch['status'] }[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i]!;
    if (!code) break;
    files.push({ path: displayPath(fields[i + 1]!), status: code.startsWith('A') ? 'added' : code.startsWith('D') ? 'deleted' : 'modified' });
  }
  return files;
}

/** Splits a `git diff` patch into files and hunks. Lines that begin a section never occur inside one: content lines start with ` `, `+`, `-` or `\`. */
export function splitPatch(patch: Buffer, files: readonly { path: string; status: FilePatch['status'] }[]): FilePatch[] {
  const sections = splitAt(patch, 'diff --git ');
  const result: FilePatch[] = [];
  let number = 0;
  sections.forEach((section, index) => {
    const file = files[index];
    if (!file) return;
    const parts = splitAt(section, '@@ ');
    const header = parts[0]!.subarray(0, 11).toString('latin1') === 'diff --git ' ? parts[0]! : Buffer.alloc(0);
    const bodies = header.length > 0 ? parts.slice(1) : parts;
    const binary = bodies.length === 0 && /\nGIT binary patch\n|\nBinary files /.test(header.toString('latin1'));
    const patchFile: FilePatch = { path: file.path, status: file.status, binary, header, hunks: [] };
    if (bodies.length === 0) {
      // A binary file, an empty file added or removed, a mode change: one change, the whole section.
      number += 1;
      patchFile.hunks.push({
        number,
        path: file.path,
        oldStart: 0,
        oldLines: 0,
        newStart: 0,
        newLines: 0,
        text: summarizeHeader(header, binary),
        patch: header,
      });
    } else {
      for (const body of bodies) {
        number += 1;
        const range = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(body.subarray(0, 200).toString('latin1'));
        patchFile.hunks.push({
          number,
          path: file.path,
          oldStart: Number(range?.[1] ?? 0),
          oldLines: range?.[2] === undefined ? 1 : Number(range[2]),
          newStart: Number(range?.[3] ?? 0),
          newLines: range?.[4] === undefined ? 1 : Number(range[4]),
          text: body.toString('utf8'),
          patch: Buffer.concat([header, body]),
        });
      }
    }
    result.push(patchFile);
  });
  return result;
}

/** Pieces of `bytes`, each starting at a line that begins with `marker` (the first piece holds what comes before). */
function splitAt(bytes: Buffer, marker: string): Buffer[] {
  const starts: number[] = [];
  if (bytes.subarray(0, marker.length).toString('latin1') === marker) starts.push(0);
  const needle = Buffer.from(`\n${marker}`, 'latin1');
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) starts.push(at + 1);
  if (starts.length === 0) return bytes.length > 0 ? [bytes] : [];
  const pieces: Buffer[] = [];
  if (starts[0]! > 0) pieces.push(bytes.subarray(0, starts[0]));
  starts.forEach((start, index) => pieces.push(bytes.subarray(start, starts[index + 1] ?? bytes.length)));
  return pieces;
}

function summarizeHeader(header: Buffer, binary: boolean): string {
  const lines = header
    .toString('utf8')
    .split('\n')
    .filter((line) => /^(new file|deleted file|old mode|new mode)/.test(line));
  return [binary ? 'binary file' : '', ...lines].filter(Boolean).join('\n');
}

export type ApplyTarget = 'worktree' | 'index';

/**
 * Applies a patch to the working tree (its files only: never the index or HEAD) or
 * to the index (only: never a file). Checked first as a whole: a patch that does not
 * apply to what is there now changes nothing, and the answer says why.
 */
export async function applyPatch(
  repository: Repository,
  patch: Buffer,
  options: { target: ApplyTarget; reverse?: boolean; /** Once the patch is known to apply, before anything is written. */ beforeWriting?: () => Promise<void> },
): Promise<{ applied: true } | { applied: false; reason: string }> {
  const args = ['apply', '--whitespace=nowarn', ...(options.reverse ? ['--reverse'] : []), ...(options.target === 'index' ? ['--cached'] : [])];
  try {
    await gitBytes(repository.root, [...args, '--check', '-'], { input: patch });
  } catch (error) {
    if (error instanceof GitCommandError) return { applied: false, reason: error.stderr.trim() };
    throw error;
  }
  await options.beforeWriting?.();
  await gitBytes(repository.root, [...args, '-'], { input: patch });
  return { applied: true };
}
