import type { ReviewAction, RunControl } from '../../sessionFormat/reviewRecords.js';
import { runOptionArgs, type RunOptionValues } from '../../sessionFormat/runOptions.js';
import { parseRunEvent, type RunEvent, type RunEventOf, type RunSummary } from '../../sessionFormat/runEvents.js';
import { RunnerProcess, type RunnerFailure } from './runnerProcess.js';

export interface LoopProcessOptions {
  /** The bundled runner, `dist/cli.js`. */
  cliPath: string;
  /** The program that runs it: the editor's own executable, as Node. */
  nodePath: string;
  workingDir: string;
  /** What to run: a prompt, or an earlier session to carry on (`codeloops resume`). */
  prompt: { text: string } | { file: string } | { resume: string; force?: boolean; answer?: string };
  /** Editor settings as a config layer (JSON), between the global and the project config. */
  editorSettings?: string;
  /**
   * Whether the user trusts the workspace. VS Code's workspace trust is the editor's
   * word for the project's codeloops.toml: given, the runner may run what the file
   * names (`--trust`); withheld, the runner refuses it (`project_untrusted`).
   */
  trusted: boolean;
  /** What this run asks for above every config (a language model tool's agents, the more iterations of a resume): the CLI's own flags. */
  overrides?: RunOverrides;
  env?: NodeJS.ProcessEnv;
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
  private readonly runner: RunnerProcess<RunEvent, RunEventOf<'run_finished'>>;
  readonly done: Promise<LoopProcessEnd>;

  constructor(options: LoopProcessOptions, onEvent: (event: RunEvent) => void) {
    const args: string[] = [options.cliPath];
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
    if (options.editorSettings) args.push('--editor-settings', options.editorSettings);
    if (options.trusted) args.push('--trust');
    if ('resume' in options.prompt) args.push('--', options.prompt.resume);
    this.runner = new RunnerProcess(
      {
        nodePath: options.nodePath,
        args,
        workingDir: options.workingDir,
        env: options.env,
        parse: parseRunEvent,
        isFinal: (event): event is RunEventOf<'run_finished'> => event.type === 'run_finished',
      },
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
