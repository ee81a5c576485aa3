import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gitBytes, gitEach, gitText, nulSeparated, onDisk, type GitVariable } from './gitProcess.js';
import type { Repository } from './repository.js';

/**
 * The bytes a file had on disk, where git's blob of it is not enough to give them back.
 *
 * git keeps text files with LF line endings (`core.autocrlf`, the `text` and `eol`
 * attributes) and converts them again when it writes them out; that is not always what
 * was on disk: with `core.autocrlf=true` an LF file comes back CRLF, with `input` a CRLF
 * file comes back LF. Snapshots keep the normalised blobs (staging, diffs and worktrees
 * rely on them) and, in a repository where git may convert line endings, a record of the
 * bytes on disk: a tree of the files as they were, blob for blob without any conversion,
 * reachable from the snapshot as its last parent and named in its message. A restore
 * writes those bytes as they are. Files that a filter, `ident` or a working-tree encoding
 * converts are left to git both ways (a Git LFS file is its pointer in git, not its
 * content), as are symbolic links and nested repositories.
 */

/** The line in a snapshot's message naming its record: `tree` (its own tree is the record) or the record's commit. */
const TRAILER = 'Codeloops-Exact-Bytes';
const TRAILER_LINE = new RegExp(`^${TRAILER}: (tree|[0-9a-f]{40,64})$`, 'm');

/** What a snapshot's commit gets: a line for its message, and the record's commit as one more parent (none when its own tree is the record). */
export interface ExactBytesRecord {
  trailer: string;
  parent: string | null;
}

/**
 * Records the bytes on disk of the files in a snapshot's temporary index, once its tree is
 * written, in a repository where git may convert line endings; undefined when a file went
 * away meanwhile (a restore then writes as git does). The temporary index is changed.
 */
export async function recordExactBytes(
  repository: Repository,
  variables: Partial<Record<GitVariable, string>>,
  conversion: LineEndingConversion,
  message: string,
  /** Files the index has that are not on disk (a sparse checkout's): they have no bytes on disk to record. */
  notOnDisk: ReadonlySet<string> = new Set(),
): Promise<ExactBytesRecord | undefined> {
  const listing = (await gitBytes(repository.root, ['ls-files', '-s', '-z'], { variables })).toString('latin1');
  const files: { mode: string; object: string; rawPath: string }[] = [];
  for (const entry of listing.split('\0')) {
    // `<mode> <object> <stage>\t<path>`
    const tab = entry.indexOf('\t');
    const [mode, object] = entry.slice(0, tab).split(' ');
    if (tab > 0 && (mode === '100644' || mode === '100755') && !notOnDisk.has(entry.slice(tab + 1)))
      files.push({ mode, object: object!, rawPath: entry.slice(tab + 1) });
  }
  const leftToGit = conversion.otherConversions ? await convertedOtherwise(repository, files) : new Set<string>();
  const recorded = files.filter((file) => !leftToGit.has(file.rawPath));
  let asOnDisk: string[];
  try {
    asOnDisk = await rawObjects(repository, recorded);
  } catch {
    return undefined; // a file went away since `git add`: no record, rather than a wrong one
  }
  // The files whose bytes on disk are not their blob: the record has those bytes instead.
  const entries = recorded.map((file, index) => (asOnDisk[index] === file.object ? '' : `${file.mode} ${asOnDisk[index]}\t${file.rawPath}\0`)).join('');
  if (entries === '' && leftToGit.size === 0) return { trailer: `${TRAILER}: tree`, parent: null };
  if (entries) await gitBytes(repository.root, ['update-index', '-z', '--index-info'], { variables, input: Buffer.from(entries, 'latin1') });
  if (leftToGit.size > 0)
    await gitBytes(repository.root, ['update-index', '--force-remove', '-z', '--stdin'], { variables, input: nulSeparated([...leftToGit]) });
  const tree = (await gitText(repository.root, ['write-tree'], { variables })).trim();
  const commit = (await gitText(repository.root, ['commit-tree', tree, '-m', `${message}: the bytes on disk`], { variables })).trim();
  return { trailer: `${TRAILER}: ${commit}`, parent: commit };
}

/** The files a filter, `ident` or a working-tree encoding converts: git gives them back itself. */
async function convertedOtherwise(repository: Repository, files: readonly { rawPath: string }[]): Promise<Set<string>> {
  const input = nulSeparated(files.map((file) => file.rawPath));
  const output = (await gitBytes(repository.root, ['check-attr', '-z', '--stdin', 'filter', 'ident', 'working-tree-encoding'], { input })).toString('latin1');
  // `-z`: `<path>\0<attribute>\0<value>\0`, three fields an answer.
  const fields = output.split('\0');
  const converted = new Set<string>();
  for (let i = 0; i + 2 < fields.length; i += 3) {
    if (fields[i + 2] !== 'unspecified' && fields[i + 2] !== 'unset') converted.add(fields[i]!);
  }
  return converted;
}

/** Each file's object id as its bytes on disk are, no conversion, written to the object store; in the order given. */
async function rawObjects(repository: Repository, files: readonly { rawPath: string }[]): Promise<string[]> {
  if (files.length === 0) return [];
  const input = Buffer.from(files.map((file) => `${quotedForStdin(file.rawPath)}\n`).join(''), 'latin1');
  const ids = (await gitText(repository.root, ['hash-object', '-w', '--no-filters', '--stdin-paths'], { input })).split('\n').filter(Boolean);
  if (ids.length !== files.length) throw new Error(`git hash-object answered ${ids.length} of ${files.length} files`);
  return ids;
}

/** A path as `--stdin-paths` reads it: one a line, C-quoted when it holds a newline, a quote or a backslash. */
function quotedForStdin(rawPath: string): string {
  if (!/["\\\n]/.test(rawPath)) return rawPath;
  return `"${rawPath.replace(/["\\]/g, '\\$&').replace(/\n/g, '\\n')}"`;
}

/** Whether git may convert the line endings of files here, and whether anything else converts some. */
export interface LineEndingConversion {
  /** Some files have a filter, `ident` or a working-tree encoding: those are found and left to git. */
  otherConversions: boolean;
}

/** The settings that say whether and where git converts line endings: read while a snapshot adds the files (one quick git call). */
export async function lineEndingSettings(repository: Repository): Promise<ReadonlyMap<string, string>> {
  const config = await gitText(repository.root, ['config', '-z', '--get-regexp', '^core\\.(autocrlf|attributesfile)$'], { mayFindNothing: true });
  const settings = new Map<string, string>();
  for (const entry of config.split('\0')) {
    const newline = entry.indexOf('\n');
    if (newline > 0) settings.set(entry.slice(0, newline).toLowerCase(), entry.slice(newline + 1));
  }
  return settings;
}

/**
 * Whether git may convert line endings in this repository: `core.autocrlf`, or a `text`,
 * `eol` or `crlf` attribute in any attributes file git reads (the tree's `.gitattributes`,
 * the repository's own, the user's and the system's; those in the tree are given, as the
 * snapshot found them). Cheap: reading a few small files.
 */
export function lineEndingConversion(
  repository: Repository,
  settings: ReadonlyMap<string, string>,
  attributesInTree: readonly string[],
): LineEndingConversion | undefined {
  const autocrlf = /^(true|yes|on|1|input)$/i.test(settings.get('core.autocrlf') ?? '');
  const attributeFiles = [
    ...attributesInTree.map((rawPath) => onDisk(repository.root, rawPath)),
    repository.attributesFile,
    userAttributesFile(settings.get('core.attributesfile')),
    '/etc/gitattributes',
  ];
  let lineEndings = autocrlf;
  let otherConversions = false;
  for (const file of attributeFiles) {
    const said = conversionsIn(readIfThere(file));
    lineEndings ||= said.lineEndings;
    otherConversions ||= said.other;
  }
  return lineEndings ? { otherConversions } : undefined;
}

/** `core.attributesFile`, or where git looks without it. */
function userAttributesFile(configured: string | undefined): string {
  if (configured) return configured.startsWith('~/') ? path.join(os.homedir(), configured.slice(2)) : configured;
  return path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'git', 'attributes');
}

function readIfThere(file: string | Buffer): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Which conversions an attributes file sets for some files (a setting that unsets one, `-text` or `binary`, converts nothing). */
function conversionsIn(text: string): { lineEndings: boolean; other: boolean } {
  let lineEndings = false;
  let other = false;
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    for (const token of line.trim().split(/\s+/).slice(1)) {
      if (/^(text|eol|crlf)(=|$)/.test(token)) lineEndings = true;
      else if (/^(filter|ident|working-tree-encoding)(=|$)/.test(token)) other = true;
    }
  }
  return { lineEndings, other };
}

/** A file as a snapshot's record of the bytes on disk has it. */
export interface ExactFile {
  mode: string;
  object: string;
}

/**
 * The bytes on disk of these paths, as a snapshot recorded them: by raw path, for the
 * regular files its record has. Undefined when the snapshot has no record (taken where git
 * converts no line endings, or by an earlier runner): git's own checkout gives them back.
 */
export async function exactFilesOf(repository: Repository, commit: string, rawPaths: readonly string[]): Promise<Map<string, ExactFile> | undefined> {
  const body = await gitText(repository.root, ['cat-file', 'commit', commit], { mayFindNothing: true }).catch(() => '');
  const named = TRAILER_LINE.exec(body)?.[1];
  if (!named) return undefined;
  return filesOf(repository, named === 'tree' ? commit : named, new Set(rawPaths));
}

/** The regular files of a tree (or commit) among these paths, by raw path. */
async function filesOf(repository: Repository, treeish: string, wanted: ReadonlySet<string>): Promise<Map<string, ExactFile>> {
  const listing = (await gitBytes(repository.root, ['ls-tree', '-r', '-z', '--full-tree', treeish])).toString('latin1');
  const files = new Map<string, ExactFile>();
  for (const entry of listing.split('\0')) {
    // `<mode> <type> <object>\t<path>`
    const tab = entry.indexOf('\t');
    const [mode, type, object] = entry.slice(0, tab).split(' ');
    const rawPath = entry.slice(tab + 1);
    if (tab > 0 && type === 'blob' && (mode === '100644' || mode === '100755') && wanted.has(rawPath)) files.set(rawPath, { mode, object: object! });
  }
  return files;
}

/**
 * Gives files git has just written in the work tree (`git apply` converts line endings
 * as a checkout does) the form they had when a snapshot was taken: a file whose bytes
 * on disk were its blob then (an LF file where `core.autocrlf=true` writes CRLF) gets
 * its new blob's bytes as they are; a file git had converted (CRLF on disk, LF in git)
 * keeps git's conversion, which gives that form back. Nothing changes after a snapshot
 * without a record (git converts no line endings there).
 */
export async function keepLineEndings(repository: Repository, snapshot: string, rawPaths: readonly string[]): Promise<void> {
  const recorded = await exactFilesOf(repository, snapshot, rawPaths);
  if (!recorded || recorded.size === 0) return;
  const inTree = await filesOf(repository, snapshot, new Set(recorded.keys()));
  const asStored = [...recorded].filter(([rawPath, file]) => inTree.get(rawPath)?.object === file.object).map(([rawPath]) => rawPath);
  const regular = asStored.filter((rawPath) => fs.lstatSync(onDisk(repository.root, rawPath), { throwIfNoEntry: false })?.isFile());
  if (regular.length === 0) return;
  // What git reads from each file now (through its line-end rules) is the new content; written as it is.
  const input = Buffer.from(regular.map((rawPath) => `${quotedForStdin(rawPath)}\n`).join(''), 'latin1');
  const blobs = (await gitText(repository.root, ['hash-object', '-w', '--stdin-paths'], { input })).split('\n').filter(Boolean);
  await writeExactFiles(
    repository,
    regular.map((rawPath, index) => ({ target: onDisk(repository.root, rawPath), file: { mode: inTree.get(rawPath)!.mode, object: blobs[index]! } })),
  );
}

/**
 * Writes blobs to files byte for byte, with no conversion, as `git cat-file --batch`
 * streams them (one file open at a time, whatever their size). A file or link in the
 * way is replaced, as git's checkout replaces it; an executable mode is kept.
 */
export async function writeExactFiles(repository: Repository, files: readonly { target: Buffer; file: ExactFile }[]): Promise<void> {
  if (files.length === 0) return;
  const writer = new BlobWriter(files);
  try {
    await gitEach(repository.root, ['cat-file', '--batch'], { input: Buffer.from(files.map(({ file }) => `${file.object}\n`).join('')) }, (chunk) =>
      writer.take(chunk),
    );
  } finally {
    writer.close();
  }
  writer.finish();
}

/** `git cat-file --batch` output (`<object> blob <size>\n<bytes>\n`, again and again) into the files, in order. */
class BlobWriter {
  private index = 0;
  private header = Buffer.alloc(0);
  /** Bytes of the current blob still to come; -1 while a header is read, 0 for the newline after the blob. */
  private left = -1;
  private fd: number | undefined;
  /** The first thing that went wrong: said once git is done (a stream's listener must not throw). */
  private failure: Error | undefined;

  constructor(private readonly files: readonly { target: Buffer; file: ExactFile }[]) {}

  take(chunk: Buffer): void {
    if (this.failure) return;
    try {
      for (let at = 0; at < chunk.length;) at = this.step(chunk, at);
    } catch (error) {
      this.failure = error as Error;
    }
  }

  /** Takes what it can of the chunk from `at`; where it stopped. */
  private step(chunk: Buffer, at: number): number {
    if (this.left < 0) {
      const newline = chunk.indexOf(0x0a, at);
      this.header = Buffer.concat([this.header, chunk.subarray(at, newline < 0 ? chunk.length : newline)]);
      if (newline < 0) return chunk.length;
      const size = /^[0-9a-f]+ blob (\d+)$/.exec(this.header.toString('latin1'))?.[1];
      if (size === undefined) throw new Error(`git cat-file could not give ${this.header.toString('latin1')}`);
      this.header = Buffer.alloc(0);
      this.open(Number(size));
      return newline + 1;
    }
    if (this.left > 0) {
      const piece = chunk.subarray(at, at + this.left);
      fs.writeSync(this.fd!, piece);
      this.left -= piece.length;
      return at + piece.length;
    }
    this.close();
    this.index += 1;
    this.left = -1;
    return at + 1; // the newline after the blob
  }

  private open(size: number): void {
    const { target, file } = this.files[this.index]!;
    const slash = target.lastIndexOf(0x2f);
    if (slash > 0) fs.mkdirSync(target.subarray(0, slash), { recursive: true });
    const stat = fs.lstatSync(target, { throwIfNoEntry: false });
    if (stat?.isDirectory()) fs.rmdirSync(target);
    else if (stat) fs.rmSync(target, { force: true });
    // The umask applies, as to the files git writes.
    this.fd = fs.openSync(target, 'wx', file.mode === '100755' ? 0o777 : 0o666);
    this.left = size;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  finish(): void {
    if (this.failure) throw this.failure;
    if (this.index !== this.files.length) throw new Error(`git cat-file gave ${this.index} of ${this.files.length} files`);
  }
}
