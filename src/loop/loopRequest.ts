import path from 'node:path';
import type { AgentLaunch } from '../agents/runAgent.js';
import type { PriceTable } from '../budget/prices.js';
import type { Budget, SpendTotals } from '../budget/spendTracker.js';
import { timingOf, type CheckSpec, type CheckTiming } from '../checks/runCheck.js';
import type { LimitSettings, StallSettings, VerifySettings } from '../config/runSettings.js';
import type { Repository } from '../git/repository.js';
import type { Snapshot } from '../git/snapshots.js';
import { worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import type { NeedsInput } from '../sessionFormat/needsInput.js';
import type { ReviewAction, RunControl } from '../sessionFormat/reviewRecords.js';
import type { LoopGuards, RunEventInput, RunEventListener } from '../sessionFormat/runEvents.js';
import type { EvalTag, SessionHeader } from '../sessionFormat/sessionLines.js';
import type { FeedbackRecord } from './actorPrompt.js';
import type { IsolationSettings } from './isolatedCheck.js';
import type { CarriedChecklist } from './requirementsChecklist.js';
import type { TestBaseline } from './testOracle.js';

/** What a loop is asked to do (`runLoop`), and what its session and its first event say of it. */

/** One role's agent, ready to start. */
export interface RoleLaunch {
  launch: AgentLaunch;
  model: string | null;
}

export interface LoopRequest {
  prompt: string;
  /** Absolute; recorded in the session as `working_dir`. */
  workingDir: string;
  repository: Repository;
  actor: RoleLaunch;
  critic: RoleLaunch;
  /** null: no limit. */
  maxIterations: number | null;
  sessionsDirectory: string;
  /** Where a session's sidecar folder is, given its id. */
  sidecarDirOf: (sessionId: string) => string;
  /** The project's checks, run after the actor and before the critic in every iteration (`when = "done"`: after a DONE). */
  checks: readonly CheckSpec[];
  /** Where isolated checks make their clean worktrees and how they are readied; absent: the default folder, no `[worktree]` copy or setup. */
  isolation?: IsolationSettings;
  budget: Budget;
  stall: StallSettings;
  /** `[limits]`: agents' usage limits and API trouble waited out (`outlastLimits.ts`); absent: the defaults. */
  limits?: LimitSettings;
  /** Prices for the agents that report tokens but no cost. */
  prices: PriceTable;
  /** The user's interrupt. */
  signal: AbortSignal;
  onEvent?: RunEventListener;
  /** Carry on an earlier session instead of starting afresh (`codeloops resume`). */
  continuation?: Continuation;
  /** One of a candidate group (`codeloops run --candidates`): recorded in `session_start`. */
  candidate?: { group: string; label: string };
  /** One run of an eval (`codeloops eval`): recorded in `session_start`. */
  eval?: EvalTag;
  /**
   * Runs once, before the first iteration (a candidate's worktree setup). What it
   * reports is recorded; a `CodeloopsError` it throws ends the session `failed` with its code.
   */
  beforeFirstIteration?: (context: { report: (event: RunEventInput) => void; signal: AbortSignal }) => Promise<void>;
  /**
   * Review before continuing (`review = "pause"`): after each iteration that does not
   * end the loop, the loop waits for the user's word. Absent: it never waits.
   */
  waitForReview?: (iteration: number, signal: AbortSignal) => Promise<ReviewAction>;
  /**
   * When the critic or the actor needs the user (`needs_input`): asks them, and the
   * loop waits as for a review. Their answer goes to the next actor as their words;
   * null: nobody can answer after all (the channel closed). Absent (headless: no
   * terminal, no control channel): the loop ends `failed` with `needs_input`.
   */
  askUser?: (iteration: number, needs: NeedsInput, signal: AbortSignal) => Promise<RunControl | null>;
  /**
   * What the actor may not weaken to pass the gate (`[verify]`): its changes to tests,
   * to what the checks run, to CI and to codeloops.toml are judged after every actor
   * run, and a weakening refuses DONE. Absent: not verified (`--no-verify`).
   */
  verify?: VerifySettings;
  /** The config files the run was set up from: an actor that edits one is told nothing changes for this run. */
  configFiles?: readonly string[];
}

/** What a resumed run takes over from the session it carries on; see `resume/resumePlan.ts`. */
export interface Continuation {
  /** The session carried on. */
  sessionId: string;
  /** Its file, when it has no `session_end`: the run appends to it. Otherwise a new linked session is started. */
  appendTo: string | null;
  /** The critic's decisions so far, oldest first: the actor is told the latest and the rest in brief. */
  history: FeedbackRecord[];
  /** The last iteration recorded; the run goes on with the next number. */
  lastIteration: number;
  /** The actor's own agent session to resume on the first iteration, where its CLI can. */
  actorSession: { id: string; costAlreadyCounted: number } | null;
  /** The snapshot from before the first iteration of the whole task, for "changed since the start". */
  taskStart: Snapshot | null;
  /**
   * What the sessions carried on used, at the run's prices (a session that ended without
   * its totals, a crash's, is priced from its agents' usage): the budget counts on from
   * there, it does not start again.
   */
  spentAt(prices: PriceTable): SpendTotals & { durationSecs: number };
  /** The sidecar folders of the sessions carried on, oldest first: their open findings and the user's review go on. */
  earlierSidecarDirs: string[];
  /**
   * After a rollback to before this iteration, the critic's review of it and later ones
   * no longer counts: its findings were about files that are gone. Absent: all counts.
   */
  reviewBefore?: number;
  /** The user's answer to the question the last iteration asked (`codeloops resume --answer`). */
  answer?: string;
  /** The task's requirements as last judged: the critic's list, each one's status, go on. */
  checklist?: CarriedChecklist;
  /** The start's tests as the task's first run found them: not run again on the same start tree. */
  baseline?: TestBaseline;
}

/** The guards of a run, as its `run_started` event records them. */
export function guardsOf(request: LoopRequest): LoopGuards {
  return {
    checks: request.checks.map((check) => ({
      name: check.name,
      command: check.run,
      required: check.required,
      ...(check.folder !== undefined && { folder: check.folder }),
      timeout_secs: check.timeoutSecs,
      ...(check.runner !== undefined && { runner: check.runner }),
      ...traitsOf(check),
    })),
    max_cost_usd: request.budget.maxCostUsd,
    max_tokens: request.budget.maxTokens,
    max_duration_secs: request.budget.maxDurationSecs,
    stall_after: request.stall.unchangedIterations,
    stall_action: request.stall.action,
    review: request.waitForReview ? 'pause' : 'off',
    ...(request.verify && {
      verify: {
        protected: [...request.verify.protected],
        allow_test_changes: request.verify.allowTestChanges,
        require_evidence: request.verify.requireEvidence,
      },
    }),
  };
}

/** Where clean worktrees go without `[worktree]`: the default folder, nothing copied, no setup. */
export function defaultIsolation(): IsolationSettings {
  return { directory: worktreesDir(), worktree: { copy: [], setup: null, setupTimeoutSecs: 0 } };
}

/** The loop's working directory from the repository's top, '/'-separated ('' at the top). */
export function workingDirPrefixOf(request: LoopRequest): string {
  return path.relative(request.repository.root, request.workingDir).split(path.sep).join('/');
}

/** How a check is run beyond its command, as `run_started.guards` and `check_finished` record it. */
export function traitsOf(check: CheckSpec): { when: CheckTiming; hidden: boolean; isolated: boolean } {
  return { when: timingOf(check), hidden: check.hidden === true, isolated: check.isolated === true };
}

/** The session's header, as its `session_start` line and its `run_started` event carry it. */
export function sessionHeader(request: LoopRequest): SessionHeader {
  const continuation = request.continuation;
  return {
    prompt: request.prompt,
    working_dir: request.workingDir,
    actor_agent: request.actor.launch.adapter.displayName,
    critic_agent: request.critic.launch.adapter.displayName,
    actor_model: request.actor.model,
    critic_model: request.critic.model,
    max_iterations: request.maxIterations,
    ...(continuation ? { resumed_from: continuation.sessionId, resumed_after_iteration: continuation.lastIteration } : {}),
    ...(request.candidate ? { candidate_group: request.candidate.group, candidate: request.candidate.label } : {}),
    ...(request.eval ? { eval: request.eval } : {}),
  };
}
