import { parseCandidateStreamEvent, type CandidateStreamEvent, type GroupRecordLineOf, type GroupStatus } from '../../sessionFormat/candidateGroups.js';
import { RunnerProcess, type RunnerFailure } from '../runs/runnerProcess.js';

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

export type CandidatesProcessEnd = { kind: 'finished'; groupId: string; status: GroupStatus; ranking: string[]; exitCode: number | null } | RunnerFailure;

/**
 * A candidate group's runner (`codeloops run --candidates … --events ndjson`), as
 * `LoopProcess` is for one loop: its group record lines and each candidate's run
 * events wrapped in `candidate_event`.
 */
export class CandidatesProcess {
  private readonly runner: RunnerProcess<CandidateStreamEvent, GroupRecordLineOf<'group_finished'>>;
  readonly done: Promise<CandidatesProcessEnd>;

  constructor(options: CandidatesProcessOptions, onEvent: (event: CandidateStreamEvent) => void) {
    // `--prompt=<text>`, `--candidates=<list>`: one argument each, whatever they hold.
    const args = [
      options.cliPath,
      'run',
      '--events',
      'ndjson',
      '--working-dir',
      options.workingDir,
      `--prompt=${options.prompt}`,
      `--candidates=${options.candidates}`,
    ];
    if (options.times > 1) args.push('--parallel', String(options.times));
    if (options.editorSettings) args.push('--editor-settings', options.editorSettings);
    // Only in a workspace the user trusts (see LoopProcess).
    args.push('--trust');
    this.runner = new RunnerProcess(
      {
        nodePath: options.nodePath,
        args,
        workingDir: options.workingDir,
        env: options.env,
        parse: parseCandidateStreamEvent,
        isFinal: (event): event is GroupRecordLineOf<'group_finished'> => event.type === 'group_finished',
      },
      onEvent,
    );
    this.done = this.runner.done.then((end) =>
      end.kind === 'finished'
        ? { kind: 'finished', groupId: end.final.group_id, status: end.final.status, ranking: end.final.ranking, exitCode: end.exitCode }
        : end,
    );
  }

  /** Like Ctrl+C in a terminal: every candidate stops, each session ends `interrupted`. */
  interrupt(): void {
    this.runner.interrupt();
  }
}
