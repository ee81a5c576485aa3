import fs from 'node:fs';
import path from 'node:path';
import { isWithinFolder } from '../files/folderPaths.js';
import { judgeCandidates, type JudgedCandidate } from '../critic/judgeCandidates.js';
import { openRepository, type Repository } from '../git/repository.js';
import { takeSnapshot } from '../git/snapshots.js';
import { addWorktree } from '../git/worktrees.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import {
  type Candidate,
  type CandidateStreamEvent,
  type GroupComparison,
  type GroupRecordInput,
  type GroupStatus,
  type Judgment,
} from '../sessionFormat/candidateGroups.js';
import { GROUP_RECORD_FILE, groupBaseRef, groupIdFor } from '../sessionFormat/candidateGroupFiles.js';
import { CodeloopsError, isCodeloopsError, type FailureCode } from '../sessionFormat/failures.js';
import { type RunEvent, type RunSummary } from '../sessionFormat/runEvents.js';
import type { Outcome } from '../sessionFormat/sessionLines.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { loopWorktreePath } from '../worktreeLoops/loopWorktrees.js';
import { runLoopInWorktree } from '../worktreeLoops/runInWorktree.js';
import { candidateChange, compareGroup, rankCandidates } from './comparison.js';
import type { CandidateSpec } from './candidateSpecs.js';
import { GroupRecorder, readGroup } from './groupRecord.js';
import { pruneLeftoverWorktrees } from './worktreeCleanup.js';

/**
 * A candidate group: one task, several loops, each a normal session in its own git
 * worktree made from a snapshot of the user's tree (uncommitted and untracked files
 * included), at most `jobs` at a time. The user's working tree, index, HEAD and
 * branches are not touched. When all have ended, the judge (the critic agent) ranks
 * the finished changes, and the group's record says how it went.
 */

export interface CandidatesRequest {
  prompt: string;
  /** The user's run, prepared in their working directory: the critic, the checks, the guards, `[worktree]`. */
  base: PreparedRun;
  /** Each candidate with its own actor (prepared like `base`, with its agent and model). */
  candidates: readonly { spec: CandidateSpec; prepared: PreparedRun }[];
  jobs: number;
  /** Rank the finished changes with the critic agent (off: checks and outcomes only). */
  judge: boolean;
  sessionsDirectory: string;
  sidecarDirOf: (sessionId: string) => string;
  groupsDirectory: string;
  worktreesDirectory: string;
  store: SessionStore;
  signal: AbortSignal;
  onEvent?: (event: CandidateStreamEvent) => void;
  /** Said before the group starts (worktrees left by an earlier crash, pruned or kept). */
  onWarning?: (message: string) => void;
}

export interface CandidatesResult {
  comparison: GroupComparison;
  status: GroupStatus;
}

/** The candidate groups this process runs, for an exit that cannot wait (see `endGroupsInThisProcessNow`). */
const groupsInThisProcess = new Set<GroupRun>();

/** Ends the record of every group of this process at once, synchronously: after `endLoopsInThisProcessNow`, on a second Ctrl+C. */
export function endGroupsInThisProcessNow(status: GroupStatus): void {
  for (const group of [...groupsInThisProcess]) group.endNow(status, []);
}

export async function runCandidates(request: CandidatesRequest): Promise<CandidatesResult> {
  const repository = request.base.repository;
  for (const warning of await pruneLeftoverWorktrees(repository, { groupsDirectory: request.groupsDirectory, sidecarDirOf: request.sidecarDirOf }))
    request.onWarning?.(warning);
  assertOutside(request.worktreesDirectory, repository);
  const started = new Date();
  const recorder = createRecorder(request.groupsDirectory, started, request.prompt);
  const run = new GroupRun(request, recorder);
  groupsInThisProcess.add(run);
  try {
    return await run.execute(repository, started);
  } finally {
    groupsInThisProcess.delete(run);
  }
}

/** The group's folder, at the start second or, when another group of the same prompt took it, the next free one. */
function createRecorder(groupsDirectory: string, startedAt: Date, prompt: string): GroupRecorder {
  for (let offsetSecs = 0; ; offsetSecs++) {
    const groupId = groupIdFor(new Date(startedAt.getTime() + offsetSecs * 1000), prompt);
    try {
      return GroupRecorder.create(groupsDirectory, groupId);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && offsetSecs < 3600) continue;
      throw error;
    }
  }
}

/** Worktrees inside the user's tree would show up in it (and in its snapshots). */
function assertOutside(worktreesDirectory: string, repository: Repository): void {
  if (isWithinFolder(repository.root, worktreesDirectory)) {
    throw new CodeloopsError(
      'setup_failed',
      `The candidates' worktrees would go to ${worktreesDirectory}, inside the repository ${repository.root}. Set XDG_DATA_HOME to a folder outside it.`,
      { worktrees_dir: worktreesDirectory },
    );
  }
}

class GroupRun {
  private ended = false;
  private readonly groupId: string;
  private planned: Candidate[] = [];

  constructor(
    private readonly request: CandidatesRequest,
    private readonly recorder: GroupRecorder,
  ) {
    this.groupId = recorder.groupId;
  }

  private get sources() {
    return { store: this.request.store, sidecarDirOf: this.request.sidecarDirOf };
  }

  async execute(repository: Repository, started: Date): Promise<CandidatesResult> {
    const { request } = this;
    let status: GroupStatus;
    let ranking: string[] = [];
    try {
      const base = await takeSnapshot(
        repository,
        `codeloops ${this.groupId}: the tree the candidates start from (HEAD with its uncommitted and untracked files)`,
        [groupBaseRef(this.groupId)],
      );
      const groupFolder = path.join(request.worktreesDirectory, this.groupId);
      const inRepository = path.relative(repository.root, request.base.workingDir);
      this.planned = request.candidates.map(({ spec }) => {
        const worktree = loopWorktreePath(request.worktreesDirectory, this.groupId, spec.index, repository.root);
        return { index: spec.index, label: spec.label, agent: spec.agent, model: spec.model, worktree, working_dir: path.join(worktree, inRepository) };
      });
      const { settings } = request.base;
      this.record(
        {
          type: 'group_started',
          prompt: request.prompt,
          working_dir: request.base.workingDir,
          repository: repository.root,
          base_commit: base.commit,
          base_ref: groupBaseRef(this.groupId),
          candidates: this.planned,
          jobs: request.jobs,
          critic_agent: request.base.critic.launch.adapter.displayName,
          critic_model: request.base.critic.model,
          pid: process.pid,
          copy: settings.worktree.copy,
          setup: settings.worktree.setup,
        },
        started,
      );
      await this.runAll(repository, base.commit);
      const interrupted = request.signal.aborted;
      const judgment = interrupted || !request.judge ? null : await this.judge(repository, groupFolder);
      const state = await readGroup(request.groupsDirectory, this.groupId);
      ranking = rankCandidates((await compareGroup(state, this.sources)).candidates, judgment);
      status = request.signal.aborted ? 'interrupted' : 'finished';
    } catch (error) {
      if (!this.planned.length) {
        // Nothing started (the snapshot of the user's tree failed): no group to keep a record of.
        this.ended = true;
        this.recorder.close();
        fs.rmSync(this.recorder.directory, { recursive: true, force: true });
        throw error;
      }
      request.onWarning?.(`the candidate group failed: ${(error as Error).message}`);
      status = request.signal.aborted ? 'interrupted' : 'failed';
    }
    this.endNow(status, ranking);
    const comparison = await compareGroup(await readGroup(request.groupsDirectory, this.groupId), this.sources);
    return { comparison, status };
  }

  /** Runs every candidate, at most `jobs` at once; resolves when all have ended. */
  private async runAll(repository: Repository, baseCommit: string): Promise<void> {
    const queue = [...this.request.candidates.keys()];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await this.runCandidate(next, repository, baseCommit);
    };
    await Promise.all(Array.from({ length: Math.min(this.request.jobs, queue.length) }, worker));
  }

  private async runCandidate(position: number, repository: Repository, baseCommit: string): Promise<void> {
    const { request } = this;
    const candidate = this.planned[position]!;
    const { prepared } = request.candidates[position]!;
    const finish = (outcome: Outcome, sessionId: string | null, error: string | null, code: FailureCode | null) =>
      this.record({ type: 'candidate_finished', label: candidate.label, session_id: sessionId, outcome, error, error_code: code });
    if (request.signal.aborted) return void finish('interrupted', null, 'interrupted before it started', null);
    let worktreeRepository: Repository;
    try {
      await addWorktree(repository, candidate.worktree, baseCommit);
      worktreeRepository = await openRepository(candidate.working_dir);
    } catch (error) {
      return void finish('failed', null, `Its worktree could not be made in ${candidate.worktree}: ${(error as Error).message}`, 'setup_failed');
    }
    let sessionId: string | null = null;
    let summary: RunSummary;
    try {
      summary = await runLoopInWorktree({
        prompt: request.prompt,
        prepared,
        source: repository,
        place: { worktree: candidate.worktree, workingDir: candidate.working_dir },
        worktreesDirectory: request.worktreesDirectory,
        repository: worktreeRepository,
        sessionsDirectory: request.sessionsDirectory,
        sidecarDirOf: request.sidecarDirOf,
        signal: request.signal,
        candidate: { group: this.groupId, label: candidate.label },
        onEvent: (event: RunEvent) => {
          if (event.type === 'run_started') {
            sessionId = event.session_id;
            this.record({ type: 'candidate_started', label: candidate.label, session_id: event.session_id });
          }
          if (sessionId)
            request.onEvent?.({
              type: 'candidate_event',
              timestamp: event.timestamp,
              group_id: this.groupId,
              label: candidate.label,
              session_id: sessionId,
              event,
            });
        },
      });
    } catch (error) {
      // Only failures before its session exists reach here.
      return void finish('failed', sessionId, (error as Error).message, isCodeloopsError(error) ? error.code : 'internal');
    }
    finish(summary.status, summary.session_id, summary.error, summary.error_code);
  }

  /** The critic agent ranks the candidates that changed something; null when fewer than two did. */
  private async judge(repository: Repository, groupFolder: string): Promise<Judgment | null> {
    const { request } = this;
    const state = await readGroup(request.groupsDirectory, this.groupId);
    const comparison = await compareGroup(state, this.sources);
    const judged: JudgedCandidate[] = [];
    for (const row of comparison.candidates) {
      if (!row.session_id || !row.files_changed) continue;
      const change = await candidateChange(repository, row.session_id);
      if (!change) continue;
      const checks = row.checks_total === null ? 'no checks ran' : `checks on its last tree: ${row.checks_passed} of ${row.checks_total} passed`;
      judged.push({
        label: row.label,
        facts: `Its loop ended ${row.status} after ${row.iterations} iteration${row.iterations === 1 ? '' : 's'}; ${checks}; ${change.filesChanged} file(s) changed, +${change.insertions} −${change.deletions}.`,
        summary: row.summary,
        diff: change.diff,
        tree: row.worktree ? this.planned.find((candidate) => candidate.label === row.label)!.working_dir : null,
      });
    }
    if (judged.length < 2) return null;
    const critic = request.base.critic;
    const result = await judgeCandidates(
      { ...critic.launch, workingDir: groupFolder },
      { task: request.prompt, candidates: judged },
      {
        model: critic.model,
        signal: request.signal,
        rawStdoutPath: (attempt) => path.join(this.recorder.directory, attempt === 'repair' ? 'judge-repair.stdout' : 'judge.stdout'),
      },
    );
    if (result.interrupted) return null;
    let cost: number | null = null;
    let tokens = 0;
    for (const run of result.runs) {
      if (run.usage?.costUsd !== undefined) cost = (cost ?? 0) + run.usage.costUsd;
      tokens += (run.usage?.inputTokens ?? 0) + (run.usage?.outputTokens ?? 0) + (run.usage?.cacheReadTokens ?? 0) + (run.usage?.cacheWriteTokens ?? 0);
    }
    const judgment: Judgment = {
      ranking: result.ranking,
      reasoning: result.reasoning,
      source: result.source,
      agent: critic.launch.adapter.displayName,
      model: critic.model,
      answer: result.answer,
      total_cost_usd: cost,
      total_tokens: tokens,
    };
    this.record({ type: 'judged', judgment });
    return judgment;
  }

  private record(input: GroupRecordInput, at?: Date): void {
    const line = this.recorder.record(input, at);
    this.request.onEvent?.(line);
  }

  /** Writes `group_finished` and closes the record, exactly once, synchronously (also from an exit that cannot wait). */
  endNow(status: GroupStatus, ranking: string[]): void {
    if (this.ended) return;
    this.ended = true;
    try {
      if (fs.existsSync(path.join(this.recorder.directory, GROUP_RECORD_FILE))) this.record({ type: 'group_finished', status, ranking });
    } finally {
      this.recorder.close();
    }
  }
}
