import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../process/processGroup.js';
import type { Repository } from './repository.js';

/** Temporary index files in use, so that an emergency exit can remove them. */
const inUse = new Set<string>();

/**
 * A fresh index file name inside the repository's git directory (same file system,
 * so git can write it atomically), never the user's own index.
 */
export function temporaryIndexPath(repository: Repository, purpose: string): string {
  const file = path.join(repository.gitDir, `codeloops-${purpose}-${process.pid}-${randomBytes(4).toString('hex')}.index`);
  inUse.add(file);
  return file;
}

export function removeTemporaryIndex(file: string): void {
  inUse.delete(file);
  fs.rmSync(file, { force: true });
  fs.rmSync(`${file}.lock`, { force: true });
}

/** For exits that skip `finally` blocks (a second Ctrl+C, an uncaught error). */
export function removeAllTemporaryIndexes(): void {
  for (const file of [...inUse]) removeTemporaryIndex(file);
}

/** `codeloops-<purpose>-<pid>-<hex>.index` (and git's `.lock` beside it), as named above. */
const TEMPORARY_INDEX = /^codeloops-[a-z-]+-(\d+)-[0-9a-f]+\.index(\.lock)?$/;

/**
 * Removes the temporary index files of runners that died (SIGKILL in the middle of a
 * snapshot skips every cleanup): those whose process is gone. A live process's files
 * are its own, whatever it is.
 */
export function removeStaleTemporaryIndexes(repository: Repository): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(repository.gitDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = TEMPORARY_INDEX.exec(name)?.[1];
    if (pid === undefined || isProcessAlive(Number(pid))) continue;
    fs.rmSync(path.join(repository.gitDir, name), { force: true });
    removed.push(name);
  }
  return removed;
}
