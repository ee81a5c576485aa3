import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** Read at most this much of the log at a time. */
const READ_CHUNK_BYTES = 64 * 1024;

/**
 * A log an agent CLI writes while it runs, to a file the runner names
 * (`Invocation.logFileEnv`), followed as it grows: Gemini CLI says only in its debug
 * log that it is stuck retrying a refused request. Not its stderr: a child's stdio
 * here is a socket, which a CLI cannot open again by a path such as `/dev/stderr`.
 * The file lives in a folder of its own, removed when the run ends.
 */
export class AgentLogFile {
  readonly path: string;
  private readonly folder: string;
  private readonly watcher: fs.FSWatcher | null;
  private readonly decoder = new StringDecoder('utf8');
  private offset = 0;

  /** `onText`: each piece of the log as it is read, decoded. */
  constructor(private readonly onText: (text: string) => void) {
    this.folder = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-agent-log-'));
    this.path = path.join(this.folder, 'agent.log');
    // The folder, not the file: the CLI creates the file once it starts.
    this.watcher = watchOrNull(this.folder, () => this.readNew());
  }

  /** Once the run has ended: the rest of the log read, the watch stopped, the folder removed. */
  close(): void {
    this.watcher?.close();
    this.readNew();
    fs.rmSync(this.folder, { recursive: true, force: true });
  }

  /** Reads what was written since the last read. */
  private readNew(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.path, 'r');
    } catch {
      return; // not written yet
    }
    try {
      const buffer = Buffer.alloc(READ_CHUNK_BYTES);
      for (let read = fs.readSync(fd, buffer, 0, buffer.length, this.offset); read > 0; read = fs.readSync(fd, buffer, 0, buffer.length, this.offset)) {
        this.offset += read;
        this.onText(this.decoder.write(buffer.subarray(0, read)));
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

/** A watch on a folder, or null where the file system offers none (then the log is read once, at the end). */
function watchOrNull(folder: string, onChange: () => void): fs.FSWatcher | null {
  try {
    const watcher = fs.watch(folder, { persistent: false }, onChange);
    // A watch that fails later (the folder gone) stops; what is left is read at the end.
    watcher.on('error', () => watcher.close());
    return watcher;
  } catch {
    return null;
  }
}
