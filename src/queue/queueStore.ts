import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { NotARegularFileError, readRegularFileSync } from '../files/regularFile.js';
import type { Repository } from '../git/repository.js';
import { isProcessAlive } from '../process/processGroup.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { queueFileSchema, queuesDir, taskBranch, type QueueFile, type QueueTask, type TaskFlags } from '../sessionFormat/queueRecords.js';

/**
 * A repository's queue on disk (`queues/<key>.json`, see `queueRecords.ts`), keyed by
 * the repository's shared git folder so that every worktree of it sees one queue. Every
 * change is a read, a change and a whole new file renamed into place, under a short
 * lock (`<key>.json.lock`): the CLI's commands, a running `queue run` and the editor
 * change it side by side, and none loses another's change. A second lock
 * (`<key>.run.lock`) keeps one `queue run` at a time.
 */

/** How long a change waits for another's: each holds the lock for a read and a write. */
const CHANGE_LOCK_WAIT_MS = 10_000;

export class TaskNotFoundError extends CodeloopsError {
  override name = 'TaskNotFoundError';
  constructor(id: number | string) {
    super('task_not_found', `The queue has no task ${id}.`, { id });
  }
}

export interface RunLock {
  release(): void;
}

/** A task just added: queued, its branch named by its id and prompt, nothing run yet. */
export function queuedTask(id: number, prompt: string, flags: TaskFlags): QueueTask {
  return {
    id,
    prompt,
    branch: taskBranch(id, prompt),
    flags,
    state: 'queued',
    added_at: new Date().toISOString(),
    started_at: null,
    finished_at: null,
    start_commit: null,
    session_ids: [],
    worktree: null,
    outcome: null,
    commit: null,
    question: null,
    answer: null,
    result: null,
  };
}

export class QueueStore {
  private constructor(
    /** The queue's file. */
    readonly file: string,
    readonly repositoryRoot: string,
    readonly gitCommonDir: string,
  ) {}

  /** The queue of the repository `repository` belongs to (a worktree's is its main repository's). */
  static of(repository: Repository, directory: string = queuesDir()): QueueStore {
    // The attributes file is in the shared git folder (`<common>/info/attributes`), whichever worktree opened it.
    const common = realPath(path.dirname(path.dirname(repository.attributesFile)));
    const key = createHash('sha256').update(common).digest('hex').slice(0, 16);
    return new QueueStore(path.join(directory, `${key}.json`), repository.root, common);
  }

  /**
   * The queue as it is now; an empty one when none was written. Opened as the session
   * readers open their files (a FIFO or a folder there is `not_a_file`, never a hang);
   * a file that is not a queue is `queue_invalid`, naming the copy kept before its last change.
   */
  read(): QueueFile {
    let text: string;
    try {
      text = readRegularFileSync(this.file);
    } catch (error) {
      if (error instanceof NotARegularFileError) throw new CodeloopsError('not_a_file', `The queue file ${error.message}.`, { file: this.file });
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return { version: 1, repository: this.repositoryRoot, git_common_dir: this.gitCommonDir, next_id: 1, base_commit: null, tasks: [] };
    }
    let why: string;
    try {
      const parsed = queueFileSchema.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data;
      why = parsed.error.issues[0]?.message ?? 'not a queue';
    } catch (error) {
      why = `not JSON (${(error as Error).message})`;
    }
    const previous = fs.existsSync(this.previousFile()) ? this.previousFile() : null;
    throw new CodeloopsError(
      'queue_invalid',
      `The queue file ${this.file} cannot be read: ${why}. ${previous ? `Its copy before the last change is ${previous}.` : 'There is no copy of it from before.'}`,
      { file: this.file, previous },
    );
  }

  task(id: number): QueueTask {
    const task = this.read().tasks.find((candidate) => candidate.id === id);
    if (!task) throw new TaskNotFoundError(id);
    return task;
  }

  /** Changes the queue: `change` edits it in place (or throws, and nothing is written); what it returns is returned. */
  async change<T>(change: (queue: QueueFile) => T): Promise<T> {
    const release = await this.takeChangeLock();
    try {
      const queue = this.read();
      const result = change(queue);
      this.write(queue);
      return result;
    } finally {
      release();
    }
  }

  /** Changes one task (it must be there). */
  changeTask(id: number, change: (task: QueueTask, queue: QueueFile) => void): Promise<QueueTask> {
    return this.change((queue) => {
      const task = queue.tasks.find((candidate) => candidate.id === id);
      if (!task) throw new TaskNotFoundError(id);
      change(task, queue);
      return structuredClone(task);
    });
  }

  /** Adds tasks at the end, each with the next id (never reused) and its branch's name. */
  add(tasks: readonly { prompt: string; flags: TaskFlags }[]): Promise<QueueTask[]> {
    return this.change((queue) =>
      tasks.map(({ prompt, flags }) => {
        const task = queuedTask(queue.next_id++, prompt, flags);
        queue.tasks.push(task);
        return structuredClone(task);
      }),
    );
  }

  /** The pid of the process running this queue now, or null. */
  runnerPid(): number | null {
    const owner = readOwner(this.runLockFile());
    return owner && isProcessAlive(owner.pid) ? owner.pid : null;
  }

  /** One `queue run` at a time: refused with `queue_running` while another process runs it; a dead runner's lock is taken over. */
  takeRunLock(): RunLock {
    const file = this.runLockFile();
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    for (let attempt = 0; attempt < 2; attempt++) {
      const release = tryLock(file);
      if (release) return { release };
      const owner = readOwner(file);
      if (owner && owner.pid !== process.pid && isProcessAlive(owner.pid)) {
        throw new CodeloopsError('queue_running', `The queue of ${this.repositoryRoot} is running in process ${owner.pid}.`, { pid: owner.pid });
      }
      fs.rmSync(file, { force: true });
    }
    throw new CodeloopsError('queue_running', `Could not take the queue's lock ${file}.`, { lock_file: file });
  }

  private runLockFile(): string {
    return this.file.replace(/\.json$/, '.run.lock');
  }

  /** `<key>.json.previous`: the queue as it was before its last change, kept for a torn file to be recovered from. */
  private previousFile(): string {
    return `${this.file}.previous`;
  }

  /** The whole file anew, on disk before it is renamed into place; the one it replaces stays as `.previous`. */
  private write(queue: QueueFile): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.tmp`;
    fs.rmSync(temporary, { force: true });
    const fd = fs.openSync(temporary, 'wx', 0o600);
    try {
      fs.writeFileSync(fd, JSON.stringify(queueFileSchema.parse(queue), null, 2) + '\n');
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    if (fs.existsSync(this.file)) this.keepPrevious();
    fs.renameSync(temporary, this.file);
  }

  /** The file as it is now, as `.previous`: a copy kept at best, never a change refused for want of it. */
  private keepPrevious(): void {
    try {
      fs.rmSync(this.previousFile(), { force: true });
      try {
        fs.linkSync(this.file, this.previousFile());
      } catch {
        fs.copyFileSync(this.file, this.previousFile()); // a file system without hard links
      }
    } catch {
      // something else sits there (a folder): the change goes ahead without a copy
    }
  }

  /** The change lock; one held by a dead process is taken over. */
  private async takeChangeLock(): Promise<() => void> {
    const file = `${this.file}.lock`;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const deadline = Date.now() + CHANGE_LOCK_WAIT_MS;
    for (;;) {
      const release = tryLock(file);
      if (release) return release;
      const owner = readOwner(file);
      // A lock file without its owner yet is being written (or was left torn long ago).
      if (owner ? !isProcessAlive(owner.pid) : ageMs(file) > TORN_LOCK_MS) fs.rmSync(file, { force: true });
      else if (Date.now() > deadline)
        throw new CodeloopsError('queue_running', `The queue file ${this.file} is being changed by process ${owner?.pid ?? 'unknown'}.`, {
          pid: owner?.pid ?? null,
        });
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function tryLock(file: string): (() => void) | null {
  const owner = { pid: process.pid, started_at: new Date().toISOString() };
  try {
    fs.writeFileSync(file, JSON.stringify(owner), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  }
  return () => {
    if (readOwner(file)?.started_at === owner.started_at && readOwner(file)?.pid === owner.pid) fs.rmSync(file, { force: true });
  };
}

function readOwner(file: string): { pid: number; started_at: string } | null {
  try {
    const value = JSON.parse(readRegularFileSync(file)) as { pid?: unknown; started_at?: unknown };
    return typeof value.pid === 'number' && typeof value.started_at === 'string' ? { pid: value.pid, started_at: value.started_at } : null;
  } catch {
    return null;
  }
}

/** A lock file with no readable owner this long after it was made was left torn: its writer died. */
const TORN_LOCK_MS = 5_000;

function ageMs(file: string): number {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  return stat ? Date.now() - stat.mtimeMs : 0;
}

function realPath(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}
