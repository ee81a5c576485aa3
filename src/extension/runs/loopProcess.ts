import { spawn, type ChildProcess } from 'node:child_process';
import type { FailureCode, FailureDetails } from '../../sessionFormat/failures.js';
import type { RunControl } from '../../sessionFormat/reviewRecords.js';
import { parseRunEvent, type RunEvent, type RunEventOf, type RunSummary } from '../../sessionFormat/runEvents.js';
import { HeadTailBuffer } from '../../text/headTailBuffer.js';
import { LineSplitter } from '../../text/lineSplitter.js';

export interface LoopProcessOptions {
  /** The bundled runner, `dist/cli.js`. */
  cliPath: string;
  /** The program that runs it: the editor's own executable, as Node. */
  nodePath: string;
  workingDir: string;
  /** What to run: a prompt, or an earlier session to carry on (`codeloops resume`). */
  prompt: { text: string } | { file: string } | { resume: string; force?: boolean };
  /** Editor settings as a config layer (JSON), between the global and the project config. */
  editorSettings?: string;
  env?: NodeJS.ProcessEnv;
}

export type LoopProcessEnd =
  | { kind: 'finished'; summary: RunSummary; exitCode: number | null }
  /** The runner could not start the loop (bad config, missing agent…) and said why (`run_refused`). */
  | { kind: 'refused'; code: FailureCode; message: string; details: FailureDetails; exitCode: number | null }
  /** The runner died without reporting an outcome. */
  | { kind: 'crashed'; message: string; exitCode: number | null; signal: NodeJS.Signals | null };

/**
 * The runner as a child process: the editor and the CLI share one code path, and a
 * runner that crashes cannot take the extension host down. It streams its run
 * events as NDJSON on stdout; each line is validated before anyone sees it.
 */
export class LoopProcess {
  private readonly child: ChildProcess;
  private readonly stderr = new HeadTailBuffer(4_000, 8_000);
  private summary: RunSummary | undefined;
  private refusal: RunEventOf<'run_refused'> | undefined;
  readonly done: Promise<LoopProcessEnd>;

  constructor(options: LoopProcessOptions, onEvent: (event: RunEvent) => void) {
    const args: string[] = [options.cliPath];
    if ('resume' in options.prompt) {
      // `--` first: the session id is an operand, never a flag.
      args.push('resume', '--events', 'ndjson', ...(options.prompt.force ? ['--force'] : []));
    } else {
      args.push('run', '--events', 'ndjson', '--working-dir', options.workingDir);
      // `--prompt=<text>`: one argument, so a prompt that starts with "-" is never read as a flag.
      if ('text' in options.prompt) args.push(`--prompt=${options.prompt.text}`);
      else args.push('--prompt-file', options.prompt.file);
    }
    if (options.editorSettings) args.push('--editor-settings', options.editorSettings);
    // The editor runs loops only in a workspace the user trusts: that trust covers the project's codeloops.toml.
    args.push('--trust');
    if ('resume' in options.prompt) args.push('--', options.prompt.resume);
    this.child = spawn(options.nodePath, args, {
      cwd: options.workingDir,
      // The editor's executable runs as plain Node with this variable.
      env: { ...(options.env ?? process.env), ELECTRON_RUN_AS_NODE: '1' },
      // stdin carries the user's word to a loop paused for review (`{"type":"continue"}`).
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.child.stdin!.on('error', () => {}); // a runner that ended cannot be told anything
    const lines = new LineSplitter((line) => {
      // Anything that is not an event (a stray print) is ignored.
      const event = parseRunEvent(line);
      if (!event) return;
      if (event.type === 'run_finished') this.summary = event;
      if (event.type === 'run_refused') this.refusal = event;
      onEvent(event);
    });
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => lines.push(chunk));
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => this.stderr.append(chunk));
    this.done = new Promise((resolve) => {
      this.child.on('error', (error) => resolve({ kind: 'crashed', message: `Could not start the runner: ${error.message}`, exitCode: null, signal: null }));
      this.child.on('close', (exitCode, signal) => {
        lines.flush();
        const stderr = this.stderr.toString().trim();
        if (this.summary) resolve({ kind: 'finished', summary: this.summary, exitCode });
        else if (this.refusal) {
          const { code, message, details } = this.refusal;
          resolve({ kind: 'refused', code, message, details, exitCode });
        } else {
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

  /** Tells a loop paused for review to go on or to stop (`review = "pause"`). */
  control(action: RunControl['type']): void {
    if (this.child.exitCode === null && this.child.stdin?.writable) this.child.stdin.write(JSON.stringify({ type: action } satisfies RunControl) + '\n');
  }

  /** Like Ctrl+C in a terminal: the runner stops the agent, skips the critic, ends the session `interrupted`. */
  interrupt(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGINT');
  }
}
