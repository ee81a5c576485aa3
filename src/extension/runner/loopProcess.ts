import type { ReviewAction, RunControl } from '../../sessionFormat/reviewRecords.js';
import { runOptionArgs, type RunOptionValues } from '../../sessionFormat/runOptions.js';
import { parseRunEvent, type RunEvent, type RunEventOf, type RunSummary } from '../../sessionFormat/runEvents.js';
import type { RunnerClient, RunnerFailure, RunnerStream } from './runnerClient.js';

export interface LoopProcessOptions {
  workingDir: string;
  /** What to run: a prompt, or an earlier session to carry on (`codeloops resume`). */
  prompt: { text: string } | { file: string } | { resume: string; force?: boolean; answer?: string };
  /** Editor settings as a config layer (JSON), between the global and the project config. */
  editorSettings?: string;
  /** What this run asks for above every config (a language model tool's agents, the more iterations of a resume): the CLI's own flags. */
  overrides?: RunOverrides;
}

/** A run's choices that rank above every config layer: the run options (`sessionFormat/runOptions.ts`) by key, as the CLI's flags take them. */
export type RunOverrides = RunOptionValues;

/** The overrides as the runner's flags, each value one argument (`--check=<command>`: a command that starts with "-" is never read as a flag). */
export function overrideArgs(overrides: RunOverrides = {}): string[] {
  return runOptionArgs(overrides);
}

export type LoopProcessEnd = { kind: 'finished'; summary: RunSummary; exitCode: number | null } | RunnerFailure;

/** One loop's runner (`codeloops run|resume --events ndjson`): its run events, and its stdin for the user's word on a paused loop. */
export class LoopProcess {
  private readonly runner: RunnerStream<RunEvent, RunEventOf<'run_finished'>>;
  readonly done: Promise<LoopProcessEnd>;

  constructor(client: RunnerClient, options: LoopProcessOptions, onEvent: (event: RunEvent) => void) {
    const args: string[] = [];
    if ('resume' in options.prompt) {
      // `--` first: the session id is an operand, never a flag.
      args.push('resume', '--events', 'ndjson', ...(options.prompt.force ? ['--force'] : []));
      // `--answer=<text>`: one argument, whatever the answer starts with.
      if (options.prompt.answer !== undefined) args.push(`--answer=${options.prompt.answer}`);
    } else {
      args.push('run', '--events', 'ndjson', '--working-dir', options.workingDir);
      // `--prompt=<text>`: one argument, so a prompt that starts with "-" is never read as a flag.
      if ('text' in options.prompt) args.push(`--prompt=${options.prompt.text}`);
      else args.push('--prompt-file', options.prompt.file);
    }
    args.push(...overrideArgs(options.overrides));
    if ('resume' in options.prompt) args.push('--', options.prompt.resume);
    this.runner = client.stream(
      args,
      { workingDir: options.workingDir, editorSettings: options.editorSettings, runsProjectPrograms: true },
      { parse: parseRunEvent, isFinal: (event): event is RunEventOf<'run_finished'> => event.type === 'run_finished' },
      onEvent,
    );
    this.done = this.runner.done.then((end) => (end.kind === 'finished' ? { kind: 'finished', summary: end.final, exitCode: end.exitCode } : end));
  }

  /** Tells a loop paused for review to go on or to stop (`review = "pause"`). */
  control(action: ReviewAction): void {
    this.send({ type: action });
  }

  /** Gives a loop that needs the user their answer: the next actor is told it as the user's words. */
  answer(text: string): void {
    this.send({ type: 'answer', text });
  }

  private send(control: RunControl): void {
    this.runner.send(JSON.stringify(control));
  }

  /** Like Ctrl+C in a terminal: the runner stops the agent, skips the critic, ends the session `interrupted`. */
  interrupt(): void {
    this.runner.interrupt();
  }
}
