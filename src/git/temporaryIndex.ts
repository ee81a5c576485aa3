import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
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
