import { parseCandidateStreamEvent, type CandidateStreamEvent, type GroupRecordLineOf, type GroupStatus } from '../../sessionFormat/candidateGroups.js';
import type { RunnerClient, RunnerFailure, RunnerStream } from './runnerClient.js';

export interface CandidatesProcessOptions {
  workingDir: string;
  prompt: string;
  /** `--candidates`: agents or agent:model pairs, comma-separated. */
  candidates: string;
  /** `--parallel`: each candidate this many times. */
  times: number;
  editorSettings?: string;
}

export type CandidatesProcessEnd = { kind: 'finished'; groupId: string; status: GroupStatus; ranking: string[]; exitCode: number | null } | RunnerFailure;

/**
 * A candidate group's runner (`codeloops run --candidates … --events ndjson`), as
 * `LoopProcess` is for one loop: its group record lines and each candidate's run
 * events wrapped in `candidate_event`.
 */
export class CandidatesProcess {
  private readonly runner: RunnerStream<CandidateStreamEvent, GroupRecordLineOf<'group_finished'>>;
  readonly done: Promise<CandidatesProcessEnd>;

  constructor(client: RunnerClient, options: CandidatesProcessOptions, onEvent: (event: CandidateStreamEvent) => void) {
    // `--prompt=<text>`, `--candidates=<list>`: one argument each, whatever they hold.
    const args = ['run', '--events', 'ndjson', '--working-dir', options.workingDir, `--prompt=${options.prompt}`, `--candidates=${options.candidates}`];
    if (options.times > 1) args.push('--parallel', String(options.times));
    this.runner = client.stream(
      args,
      { workingDir: options.workingDir, editorSettings: options.editorSettings, runsProjectPrograms: true },
      { parse: parseCandidateStreamEvent, isFinal: (event): event is GroupRecordLineOf<'group_finished'> => event.type === 'group_finished' },
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
