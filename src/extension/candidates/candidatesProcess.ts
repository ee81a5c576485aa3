import { spawn, type ChildProcess } from 'node:child_process';
import { parseCandidateStreamEvent, type CandidateStreamEvent, type GroupStatus } from '../../sessionFormat/candidateGroups.js';
import type { FailureCode, FailureDetails } from '../../sessionFormat/failures.js';
import { HeadTailBuffer } from '../../text/headTailBuffer.js';
import { LineSplitter } from '../../text/lineSplitter.js';

export interface CandidatesProcessOptions {
  cliPath: string;
  nodePath: string;
  workingDir: string;
  prompt: string;
  /** `--candidates`: agents or agent:model pairs, comma-separated. */
  candidates: string;
  /** `--parallel`: each candidate this many times. */
  times: number;
  editorSettings?: string;
  env?: NodeJS.ProcessEnv;
}

export type CandidatesProcessEnd =
  | { kind: 'finished'; groupId: string; status: GroupStatus; ranking: string[]; exitCode: number | null }
  | { kind: 'refused'; code: FailureCode; message: string; details: FailureDetails; exitCode: number | null }
  | { kind: 'crashed'; message: string; exitCode: number | null; signal: NodeJS.Signals | null };

/**
 * A candidate group's runner as a child process (`codeloops run --candidates …
 * --events ndjson`), as `LoopProcess` is for one loop: its group record lines and each
 * candidate's run events arrive as NDJSON, validated line by line.
 */
export class CandidatesProcess {
  private readonly child: ChildProcess;
  private readonly stderr = new HeadTailBuffer(4_000, 8_000);
  readonly done: Promise<CandidatesProcessEnd>;

  constructor(options: CandidatesProcessOptions, onEvent: (event: CandidateStreamEvent) => void) {
    const args = [options.cliPath, 'run', '--events', 'ndjson', '--working-dir', options.workingDir, `--prompt=${options.prompt}`];
    // `--candidates=<list>`: one argument, whatever the list holds.
    args.push(`--candidates=${options.candidates}`);
    if (options.times > 1) args.push('--parallel', String(options.times));
    if (options.editorSettings) args.push('--editor-settings', options.editorSettings);
    // Only in a workspace the user trusts (see LoopProcess).
    args.push('--trust');
    this.child = spawn(options.nodePath, args, {
      cwd: options.workingDir,
      env: { ...(options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    let started: string | undefined;
    let finished: Extract<CandidateStreamEvent, { type: 'group_finished' }> | undefined;
    let refused: Extract<CandidateStreamEvent, { type: 'run_refused' }> | undefined;
    const lines = new LineSplitter((line) => {
      const event = parseCandidateStreamEvent(line);
      if (!event) return;
      if (event.type === 'group_started') started = event.group_id;
      if (event.type === 'group_finished') finished = event;
      if (event.type === 'run_refused') refused = event;
      onEvent(event);
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => lines.push(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.append(chunk));
    this.done = new Promise((resolve) => {
      this.child.on('error', (error) => resolve({ kind: 'crashed', message: `Could not start the runner: ${error.message}`, exitCode: null, signal: null }));
      this.child.on('close', (exitCode, signal) => {
        lines.flush();
        if (finished && started) resolve({ kind: 'finished', groupId: started, status: finished.status, ranking: finished.ranking, exitCode });
        else if (refused) resolve({ kind: 'refused', code: refused.code, message: refused.message, details: refused.details, exitCode });
        else {
          const stderr = this.stderr.toString().trim();
          resolve({
            kind: 'crashed',
            message: stderr || `The runner stopped (${signal ?? `exit ${exitCode}`}) without reporting an outcome.`,
            exitCode,
            signal,
          });
        }
      });
    });
  }

  /** Like Ctrl+C in a terminal: every candidate stops, each session ends `interrupted`. */
  interrupt(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
  }
}
