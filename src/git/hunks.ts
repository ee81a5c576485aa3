import fs from 'node:fs';
import { describeNonFile } from '../files/regularFile.js';
import { displayPath, gitBytes, GitCommandError, gitText, onDisk } from './gitProcess.js';
import type { Repository } from './repository.js';
import { removeTemporaryIndex, temporaryIndexPath } from './temporaryIndex.js';
import { readTreeFiles } from './treeFiles.js';
import { parseNameStatus } from './treeDiff.js';

/**
 * An iteration's change as hunks: what a reviewer accepts or rejects one at a time.
 * The patch comes from git (`git diff` between two snapshots, renames shown as a
 * deletion and an addition, binary files whole) and goes back through git
 * (`git apply`). A hunk of lines goes only where it was: `git apply` would search
 * the whole file for its lines and take another place that reads the same (a second
 * copy of a block), so each is placed here first, byte for byte, and handed to git
 * at that line, where it applies before git looks anywhere else; a hunk whose lines
 * are not there as they were does not apply, and nothing is changed. Patches are
 * bytes end to end (CRLF, any encoding, binary), never decoded on the way.
 */

export interface FilePatch {
  /** The file's path as people read it (its new path, or its old one for a deletion). */
  path: string;
  /** The same, as git has its bytes (read as latin1): for the file system and git's stdin, whatever its encoding. */
  rawPath: string;
  status: 'added' | 'deleted' | 'modified';
  binary: boolean;
  /** What the path holds: a file, a symbolic link (its target is its text) or a nested repository's commit (a gitlink, "Subproject commit …"). */
  entry: 'file' | 'symlink' | 'gitlink';
  /** Its blobs before and after (the header's `index` line; all zeros for a side without the file); null for a mode change alone. */
  blobs: { old: string; new: string } | null;
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
  /** Its own bytes from its `@@` line; empty for a binary or a header-only change. */
  body: Buffer;
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
export async function diffPatch(repository: Repository, from: string, to: string): Promise<{ patch: Buffer; files: PatchedFile[] }> {
  if (from === to) return { patch: Buffer.alloc(0), files: [] };
  const [patch, statuses] = await Promise.all([
    gitBytes(repository.root, ['diff', ...DIFF_OPTIONS, from, to]),
    gitBytes(repository.root, ['diff', '--no-renames', '--name-status', '-z', from, to]),
  ]);
  return { patch, files: parseStatuses(statuses) };
}

type PatchedFile = Pick<FilePatch, 'path' | 'rawPath' | 'status'>;

/**
 * `--name-status -z`, one entry per section of the patch, in its order: a file that
 * changed type (a file become a symbolic link) is two sections, its old kind deleted
 * and its new kind added.
 */
function parseStatuses(output: Buffer): PatchedFile[] {
  return parseNameStatus(output.toString('latin1')).flatMap(({ path: rawPath, status }) => {
    const path = displayPath(rawPath);
    return status === 'type_changed'
      ? [
          { path, rawPath, status: 'deleted' as const },
          { path, rawPath, status: 'added' as const },
        ]
      : [{ path, rawPath, status: status === 'added' || status === 'deleted' ? status : ('modified' as const) }];
  });
}

/** Splits a `git diff` patch into files and hunks. Lines that begin a section never occur inside one: content lines start with ` `, `+`, `-` or `\`. */
export function splitPatch(patch: Buffer, files: readonly PatchedFile[]): FilePatch[] {
  const sections = splitAt(patch, 'diff --git ');
  const result: FilePatch[] = [];
  let number = 0;
  sections.forEach((section, index) => {
    const file = files[index];
    if (!file) return;
    const parts = splitAt(section, '@@ ');
    const header = parts[0]!.subarray(0, 11).toString('latin1') === 'diff --git ' ? parts[0]! : Buffer.alloc(0);
    const bodies = header.length > 0 ? parts.slice(1) : parts;
    const headerText = header.toString('latin1');
    const binary = bodies.length === 0 && /\nGIT binary patch\n|\nBinary files /.test(headerText);
    const patchFile: FilePatch = { ...file, binary, entry: entryOf(headerText), blobs: blobsOf(headerText), header, hunks: [] };
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
        body: Buffer.alloc(0),
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
          body,
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

/** The modes a header names (`new file mode 120000`, `index a..b 160000`): a symbolic link's or a gitlink's make the path one. */
function entryOf(headerText: string): FilePatch['entry'] {
  const modes = [...headerText.matchAll(/^(?:old mode|new mode|new file mode|deleted file mode|index \S+) (\d{6})$/gm)].map((match) => match[1]);
  return modes.includes('160000') ? 'gitlink' : modes.includes('120000') ? 'symlink' : 'file';
}

function blobsOf(headerText: string): FilePatch['blobs'] {
  const index = /^index ([0-9a-f]+)\.\.([0-9a-f]+)/m.exec(headerText);
  return index ? { old: index[1]!, new: index[2]! } : null;
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
  options: {
    target: ApplyTarget;
    reverse?: boolean;
    /** Once the patch is known to apply, before anything is written. */
    beforeWriting?: () => Promise<void>;
    /** With `target: 'index'`: another index file than the user's. */
    indexFile?: string;
    /** Only check whether it applies; write nothing. */
    check?: boolean;
  },
): Promise<{ applied: true } | { applied: false; reason: string }> {
  const args = ['apply', '--whitespace=nowarn', ...(options.reverse ? ['--reverse'] : []), ...(options.target === 'index' ? ['--cached'] : [])];
  const variables = options.indexFile ? { GIT_INDEX_FILE: options.indexFile } : undefined;
  try {
    await gitBytes(repository.root, [...args, '--check', '-'], { input: patch, variables });
  } catch (error) {
    if (error instanceof GitCommandError) return { applied: false, reason: error.stderr.trim() };
    throw error;
  }
  if (options.check) return { applied: true };
  await options.beforeWriting?.();
  await gitBytes(repository.root, [...args, '-'], { input: patch, variables });
  return { applied: true };
}

/**
 * Undoes one hunk of a change in the working tree (`reverse`), or puts it back, at its
 * own place only. Its place is counted in the file as the change left it with the
 * hunks in `takenOut` undone (those of the file the user rejected; the hunk itself
 * among them when it is put back); whatever changed in the file since (the user's
 * edits, later iterations) may move it by exactly the lines added or removed before
 * it, but not touch its lines.
 */
export async function applyHunk(
  repository: Repository,
  file: FilePatch,
  hunk: Hunk,
  options: { reverse: boolean; takenOut: readonly Hunk[]; beforeWriting?: () => Promise<void> },
): Promise<{ applied: true } | { applied: false; reason: string }> {
  const apply = (patch: Buffer) => applyPatch(repository, patch, { target: 'worktree', reverse: options.reverse, beforeWriting: options.beforeWriting });
  // A whole file, a binary, a link or a mode has one place only, which git checks whole.
  if (!hasLinesToPlace(file)) return apply(hunk.patch);
  const current = await worktreeContent(repository, file);
  if (typeof current === 'string') return { applied: false, reason: current };
  const recorded = withoutHunks(await readBlob(repository, file.blobs!.new), file, options.takenOut);
  const sides = sidesOf(hunk.body);
  const side = options.reverse ? sides.new : sides.old;
  const at = await placerFor(repository, current)(recorded.content, recorded.placeOf(hunk), side, sides);
  if (at === undefined) return { applied: false, reason: notThere(file, recorded.placeOf(hunk), side.length) };
  return apply(placedPatch(file, [{ hunk, at }], options.reverse));
}

/**
 * The part of a change that the index lacks, as one patch: every hunk whose lines the
 * index has as the change found them, each at its own place, leaving out those it has
 * as the change left them (staged already), so that staging an iteration after part
 * of it was staged stages the rest. The first hunk that is neither (the user changed
 * those lines differently, or the file is unmerged) is a conflict.
 */
export async function missingHunks(
  repository: Repository,
  files: readonly FilePatch[],
): Promise<{ patch: Buffer; files: string[] } | { conflict: string; reason: string; unmerged: boolean }> {
  const unmerged = await unmergedPaths(repository);
  const inConflict = files.find((file) => unmerged.has(file.rawPath));
  if (inConflict) return { conflict: inConflict.path, reason: `${inConflict.path} is unmerged (a merge conflict) in the index.`, unmerged: true };
  const patches: Buffer[] = [];
  const paths: string[] = [];
  for (const file of files) {
    const missing = hasLinesToPlace(file) ? await missingLines(repository, file) : await missingWhole(repository, file);
    if ('conflict' in missing) return { ...missing, unmerged: false };
    if (!missing.patch) continue;
    patches.push(missing.patch);
    paths.push(file.path);
  }
  return { patch: Buffer.concat(patches), files: paths };
}

/** A file's hunks of lines that the index lacks, placed where the index has their lines. */
async function missingLines(repository: Repository, file: FilePatch): Promise<{ patch: Buffer | null } | { conflict: string; reason: string }> {
  const current = await indexContent(repository, file);
  if (!current) return { conflict: file.path, reason: `${file.path} is not in the index.` };
  const [before, after] = await Promise.all([readBlob(repository, file.blobs!.old), readBlob(repository, file.blobs!.new)]);
  const place = placerFor(repository, current);
  const placements: Placement[] = [];
  for (const hunk of file.hunks) {
    const sides = sidesOf(hunk.body);
    const from = sideIndex(hunk.oldStart, hunk.oldLines);
    const at = await place(before, from, sides.old, sides);
    if (at !== undefined) placements.push({ hunk, at });
    else if ((await place(after, sideIndex(hunk.newStart, hunk.newLines), sides.new, sides)) === undefined) {
      return { conflict: file.path, reason: notThere(file, from, sides.old.length) };
    }
  }
  return { patch: placements.length > 0 ? placedPatch(file, placements, false) : null };
}

/** A whole-file change (binary, added, deleted, a link, a mode): git checks it whole, so it can only apply where it belongs. */
async function missingWhole(repository: Repository, file: FilePatch): Promise<{ patch: Buffer | null } | { conflict: string; reason: string }> {
  const missing: Buffer[] = [];
  for (const hunk of file.hunks) {
    const forward = await applyPatch(repository, hunk.patch, { target: 'index', check: true });
    if (forward.applied) missing.push(hunk.body);
    else if (!(await applyPatch(repository, hunk.patch, { target: 'index', reverse: true, check: true })).applied) {
      return { conflict: file.path, reason: forward.reason };
    }
  }
  return { patch: missing.length > 0 ? Buffer.concat([file.header, ...missing]) : null };
}

/**
 * A commit's tree with some of its hunks taken back out: what an iteration left once
 * the user rejected part of it. Built in a temporary index; no file and no ref is
 * touched. The index holds exactly the tree the hunks were made from, so each goes
 * at its own place.
 */
export async function treeWithout(repository: Repository, commit: string, files: readonly FilePatch[], takenOut: readonly Hunk[]): Promise<string> {
  const index = temporaryIndexPath(repository, 'review');
  try {
    await gitBytes(repository.root, ['read-tree', commit], { variables: { GIT_INDEX_FILE: index } });
    for (const file of files) {
      const hunks = file.hunks.filter((hunk) => takenOut.includes(hunk));
      if (hunks.length === 0) continue;
      const placements = hunks.map((hunk) => ({ hunk, at: sideIndex(hunk.newStart, hunk.newLines) }));
      const patches = hasLinesToPlace(file) ? [placedPatch(file, placements, true)] : hunks.map((hunk) => hunk.patch);
      for (const patch of patches) {
        const applied = await applyPatch(repository, patch, { target: 'index', reverse: true, indexFile: index });
        if (!applied.applied) throw new GitCommandError('apply', 1, applied.reason);
      }
    }
    return (await gitBytes(repository.root, ['write-tree'], { variables: { GIT_INDEX_FILE: index } })).toString('utf8').trim();
  } finally {
    removeTemporaryIndex(index);
  }
}

/** A file whose hunks are lines in a file that stays a file: each has one right place among others that may read the same. */
function hasLinesToPlace(file: FilePatch): boolean {
  return file.status === 'modified' && file.entry === 'file' && file.blobs !== null && file.hunks.every((hunk) => hunk.body.length > 0);
}

/** A file's lines, each with its line end (a CRLF's CR is part of the line); a last line without one as it is. */
function splitLines(bytes: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  for (let end = bytes.indexOf(0x0a); end >= 0; end = bytes.indexOf(0x0a, start)) {
    lines.push(bytes.subarray(start, end + 1));
    start = end + 1;
  }
  if (start < bytes.length) lines.push(bytes.subarray(start));
  return lines;
}

interface HunkSides {
  /** The lines the hunk finds (context and removed) and those it leaves (context and added), as the file has them. */
  old: Buffer[];
  new: Buffer[];
  /** Context lines after its last change: none means it ends the file, and git applies it only there. */
  trailing: number;
}

/** A hunk's lines on each side, byte for byte: git's "\ No newline at end of file" takes the line end off the line before it. */
function sidesOf(body: Buffer): HunkSides {
  const sides: HunkSides = { old: [], new: [], trailing: 0 };
  let last: Buffer[][] = [];
  for (const line of splitLines(body).slice(1)) {
    const text = line.subarray(1);
    switch (line[0]) {
      case 0x20: // ' ': context
        sides.old.push(text);
        sides.new.push(text);
        last = [sides.old, sides.new];
        sides.trailing += 1;
        break;
      case 0x2d: // '-'
        sides.old.push(text);
        last = [sides.old];
        sides.trailing = 0;
        break;
      case 0x2b: // '+'
        sides.new.push(text);
        last = [sides.new];
        sides.trailing = 0;
        break;
      case 0x5c: // '\ No newline at end of file': the line before ends without one
        for (const side of last) side[side.length - 1] = side.at(-1)!.subarray(0, -1);
        break;
    }
  }
  return sides;
}

/** Where a side of `count` lines that git numbers `start` begins, from 0 (git numbers an empty side by the line before it). */
function sideIndex(start: number, count: number): number {
  return count === 0 ? start : start - 1;
}

/**
 * A file as a change left it with some of its hunks taken back out, each at exactly
 * its place, and where any of its hunks begins in it (from 0).
 */
function withoutHunks(after: Buffer, file: FilePatch, takenOut: readonly Hunk[]): { content: Buffer; placeOf: (hunk: Hunk) => number } {
  const hunks = file.hunks.filter((hunk) => takenOut.includes(hunk));
  const lines = splitLines(after);
  // Last first, so that each one's place is still as git numbered it.
  for (const hunk of [...hunks].reverse()) {
    const sides = sidesOf(hunk.body);
    lines.splice(sideIndex(hunk.newStart, hunk.newLines), sides.new.length, ...sides.old);
  }
  return {
    content: Buffer.concat(lines),
    placeOf: (hunk) =>
      sideIndex(hunk.newStart, hunk.newLines) +
      hunks.filter((before) => before.number < hunk.number).reduce((shift, before) => shift + before.oldLines - before.newLines, 0),
  };
}

interface LineChange {
  /** The first line replaced (from 0); with no lines replaced, the line the new ones go before. */
  start: number;
  oldCount: number;
  newCount: number;
}

/**
 * Where a hunk's lines are in one version of a file: given the side it needs and where
 * that side is (from 0) in the file as recorded, the same place when the file is still
 * that, else that place moved by exactly the lines added and removed before it (git's
 * line diff between the two); undefined when a change since touches its lines, or they
 * are not there byte for byte. A hunk that ends the file must still end it (git applies
 * one without lines after it only there).
 */
function placerFor(
  repository: Repository,
  current: Buffer,
): (recorded: Buffer, at: number, side: readonly Buffer[], sides: HunkSides) => Promise<number | undefined> {
  const lines = splitLines(current);
  const changes = new Map<Buffer, Promise<LineChange[]>>();
  return async (recorded, at, side, sides) => {
    // An empty side is an empty file: with three lines of context, nothing else has none.
    if (side.length === 0) return current.length === 0 ? 0 : undefined;
    let place: number | undefined = at;
    if (!recorded.equals(current)) {
      if (!changes.has(recorded)) changes.set(recorded, lineChanges(repository, recorded, current));
      place = movedPlace(await changes.get(recorded)!, at, side.length);
    }
    if (place === undefined || !side.every((line, index) => lines[place + index]?.equals(line))) return undefined;
    if (sides.trailing === 0 && place + side.length !== lines.length) return undefined;
    return place;
  };
}

function movedPlace(changes: readonly LineChange[], at: number, length: number): number | undefined {
  let shift = 0;
  for (const change of changes) {
    if (change.start + change.oldCount <= at) shift += change.newCount - change.oldCount;
    else if (change.start < at + length) return undefined; // it touches the hunk's lines
  }
  return at + shift;
}

/** The lines that differ between two versions of a file, as git's line diff finds them (no context). */
async function lineChanges(repository: Repository, from: Buffer, to: Buffer): Promise<LineChange[]> {
  const [fromBlob, toBlob] = await Promise.all([writeBlob(repository, from), writeBlob(repository, to)]);
  const diff = await gitBytes(repository.root, [
    'diff',
    '--no-ext-diff',
    '--no-textconv',
    '--no-color',
    '--text',
    '-U0',
    '--inter-hunk-context=0',
    fromBlob,
    toBlob,
  ]);
  return [...diff.toString('latin1').matchAll(/^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@/gm)].map((match) => {
    const oldCount = match[2] === undefined ? 1 : Number(match[2]);
    return { start: sideIndex(Number(match[1]), oldCount), oldCount, newCount: match[3] === undefined ? 1 : Number(match[3]) };
  });
}

interface Placement {
  hunk: Hunk;
  /** Where the side it finds begins (from 0) in the file it applies to. */
  at: number;
}

/**
 * A file's hunks as one patch whose `@@` lines give the places found for them: `git
 * apply` tries a hunk first at the line its header gives, counted in the file as the
 * hunks before it left it, and finds it there, so it looks nowhere else.
 */
function placedPatch(file: FilePatch, placements: readonly Placement[], reverse: boolean): Buffer {
  let shift = 0;
  const parts = [file.header];
  for (const { hunk, at } of placements) {
    const found = { start: at, count: reverse ? hunk.newLines : hunk.oldLines };
    const left = { start: at + shift, count: reverse ? hunk.oldLines : hunk.newLines };
    const [oldSide, newSide] = reverse ? [left, found] : [found, left];
    const range = (side: { start: number; count: number }) => `${side.count === 0 ? side.start : side.start + 1},${side.count}`;
    const heading = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(hunk.body.subarray(0, 200).toString('latin1'))![0];
    parts.push(Buffer.from(`@@ -${range(oldSide)} +${range(newSide)} @@`, 'latin1'), hunk.body.subarray(heading.length));
    shift += left.count - found.count;
  }
  return Buffer.concat(parts);
}

function notThere(file: FilePatch, at: number, count: number): string {
  const lines = count === 1 ? `line ${at + 1}` : `lines ${at + 1}–${at + count}`;
  return `${file.path}: ${lines} as the hunk has them ${count === 1 ? 'is' : 'are'} not there as ${count === 1 ? 'it was' : 'they were'} (edited since).`;
}

/**
 * A file as git reads it from the working tree (through its clean filter and line-end
 * rules: what snapshots hold and hunks are made of), or why there is none to read.
 */
async function worktreeContent(repository: Repository, file: FilePatch): Promise<Buffer | string> {
  let stats: fs.Stats | undefined;
  try {
    stats = fs.lstatSync(onDisk(repository.root, file.rawPath), { throwIfNoEntry: false });
  } catch {
    stats = undefined; // under something that is not a folder
  }
  if (!stats) return `${file.path} is not there any more.`;
  if (!stats.isFile()) return `${file.path} ${describeNonFile(stats)}.`;
  const blob = (await gitText(repository.root, ['hash-object', '-w', '--stdin-paths'], { input: Buffer.from(`${file.rawPath}\n`, 'latin1') })).trim();
  return readBlob(repository, blob);
}

/** A file as the index has it (stage 0), or undefined when it has none. */
async function indexContent(repository: Repository, file: FilePatch): Promise<Buffer | undefined> {
  // `:<path>` names the index's stage 0: the same batch read as a tree's files.
  return (await readTreeFiles(repository, [{ tree: '', rawPath: file.rawPath }]))[0];
}

/** The index's unmerged paths (raw), those a merge left in conflict. */
async function unmergedPaths(repository: Repository): Promise<Set<string>> {
  const output = (await gitBytes(repository.root, ['ls-files', '--unmerged', '-z'])).toString('latin1');
  return new Set(
    output
      .split('\0')
      .filter(Boolean)
      .map((entry) => entry.slice(entry.indexOf('\t') + 1)),
  );
}

function readBlob(repository: Repository, blob: string): Promise<Buffer> {
  return gitBytes(repository.root, ['cat-file', 'blob', blob]);
}

async function writeBlob(repository: Repository, content: Buffer): Promise<string> {
  return (await gitText(repository.root, ['hash-object', '-w', '--stdin'], { input: content })).trim();
}
