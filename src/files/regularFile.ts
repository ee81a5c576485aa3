import fs from 'node:fs';
import path from 'node:path';

/**
 * Opening files that something else put there: the sessions folder, a sidecar
 * record, a project's codeloops.toml. A name says nothing about what is behind it: a
 * FIFO blocks whoever opens it until a writer comes (a server's thread pool, or a
 * CLI, forever), a folder fails on the first read, a symbolic link may lead
 * anywhere. These open without blocking, check that what was opened is a regular
 * file, and say in words what it is when it is not.
 */

/** A path that exists but cannot be read as a file; `reason` says why, in words that follow the path. */
export class NotARegularFileError extends Error {
  override name = 'NotARegularFileError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file} ${reason}`);
  }
}

/** What a path is, when it is not a regular file: "is a folder", "is a named pipe (FIFO)". */
export function describeNonFile(stats: fs.Stats): string {
  if (stats.isDirectory()) return 'is a folder, not a file';
  if (stats.isFIFO()) return 'is a named pipe (FIFO), not a file';
  if (stats.isSocket()) return 'is a socket, not a file';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'is a device, not a file';
  if (stats.isSymbolicLink()) return 'is a symbolic link';
  return 'is not a regular file';
}

/** An error from opening or reading, in words; ENOENT is left to the caller (a file that is simply not there). */
function reasonOf(error: NodeJS.ErrnoException): string | undefined {
  switch (error.code) {
    case 'EACCES':
    case 'EPERM':
      return 'cannot be read: permission denied';
    case 'ELOOP':
      return 'is a symbolic link that leads back to itself';
    case 'EISDIR':
      return 'is a folder, not a file';
    case 'ENXIO':
      return 'is a socket or a device with nothing behind it, not a file';
    case 'ENOENT':
      return undefined;
    default:
      return `cannot be read (${error.message})`;
  }
}

function translate(file: string, error: unknown): never {
  const reason = reasonOf(error as NodeJS.ErrnoException);
  throw reason === undefined ? error : new NotARegularFileError(file, reason);
}

// O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);

/**
 * Where a path inside `folder` really leads, or a NotARegularFileError when it is a
 * symbolic link that leads out of it. Links within the folder are followed.
 */
function resolveWithin(file: string, folder: string, realFolder: () => string): string {
  let stats: fs.Stats;
  try {
    stats = fs.lstatSync(file);
  } catch (error) {
    return translate(file, error);
  }
  if (!stats.isSymbolicLink()) return file;
  let target: string;
  try {
    target = fs.realpathSync(file);
  } catch (error) {
    // A link to nowhere is a file that is not there.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw error;
    return translate(file, error);
  }
  const top = realFolder();
  if (target !== top && !target.startsWith(top + path.sep)) {
    throw new NotARegularFileError(file, `is a symbolic link to ${target}, outside ${folder} (links out of the folder are not followed)`);
  }
  return target;
}

export interface OpenOptions {
  /** The folder the file must stay in: a symbolic link that leads out of it is refused. */
  within?: string;
}

/**
 * Opens a regular file for reading without ever blocking. Throws NotARegularFileError
 * (saying what it is) for anything else, and the plain ENOENT error when there is nothing.
 */
export async function openRegularFile(file: string, options: OpenOptions = {}): Promise<fs.promises.FileHandle> {
  const target = checkBeforeOpening(file, options);
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(target, OPEN_FLAGS);
  } catch (error) {
    return translate(file, error);
  }
  try {
    // Checked again on what was opened: the name may have been replaced meanwhile.
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotARegularFileError(file, describeNonFile(stats));
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** openRegularFile, synchronously: a descriptor the caller closes. */
export function openRegularFileSync(file: string, options: OpenOptions = {}): number {
  return openChecked(file, checkBeforeOpening(file, options), OPEN_FLAGS);
}

// Appending: created when missing (private, as every record is), and O_NONBLOCK as for reading.
const APPEND_FLAGS = fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | (fs.constants.O_NONBLOCK ?? 0);

/**
 * Opens a regular file to append to, creating it (0600) when it is not there, with the
 * same checks as for reading: a FIFO (which would block the writer until a reader
 * comes), a folder or a device is a NotARegularFileError, and nothing is opened.
 */
export function openRegularFileForAppendSync(file: string): number {
  let target = file;
  try {
    target = checkBeforeOpening(file, {});
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return openChecked(file, target, APPEND_FLAGS, 0o600);
}

/** Opens `target` and checks again what was opened: the name may have been replaced meanwhile. */
function openChecked(file: string, target: string, flags: number, mode?: number): number {
  let fd: number;
  try {
    fd = fs.openSync(target, flags, mode);
  } catch (error) {
    return translate(file, error);
  }
  try {
    const stats = fs.fstatSync(fd);
    if (!stats.isFile()) throw new NotARegularFileError(file, describeNonFile(stats));
    return fd;
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
}

/**
 * What to open: the file, or where its link leads within the folder. Nothing that is
 * not a regular file is opened at all (opening a device can have effects of its own).
 */
function checkBeforeOpening(file: string, options: OpenOptions): string {
  const target = options.within === undefined ? file : resolveWithin(file, options.within, () => realFolderOf(options.within!));
  let stats: fs.Stats;
  try {
    stats = fs.statSync(target);
  } catch (error) {
    return translate(file, error);
  }
  if (!stats.isFile()) throw new NotARegularFileError(file, describeNonFile(stats));
  return target;
}

/** A whole small file's text (a config file), read as openRegularFileSync opens it. */
export function readRegularFileSync(file: string): string {
  const fd = openRegularFileSync(file);
  try {
    return fs.readFileSync(fd, 'utf8');
  } catch (error) {
    return translate(file, error);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * What a name in a folder is, without opening it: its stats when it is a regular file
 * (through a link that stays in the folder), a NotARegularFileError otherwise, undefined
 * when it is gone. For listings, which skip what is not a file and say why.
 */
export function statRegularFile(file: string, folder: string, realFolder: () => string = () => realFolderOf(folder)): fs.Stats | undefined {
  let stats: fs.Stats | undefined;
  try {
    stats = fs.lstatSync(file, { throwIfNoEntry: false });
    if (stats?.isFile()) return stats; // the common case, first: a listing asks for every session
    if (stats?.isSymbolicLink()) stats = fs.statSync(resolveWithin(file, folder, realFolder), { throwIfNoEntry: false });
  } catch (error) {
    if (error instanceof NotARegularFileError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return translate(file, error);
  }
  if (stats && !stats.isFile()) throw new NotARegularFileError(file, describeNonFile(stats));
  return stats;
}

/** The folder's real path, or the path itself when it cannot be resolved (not there yet). */
export function realFolderOf(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}
