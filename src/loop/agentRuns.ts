import type { AgentTurn } from '../agents/agentLimits.js';
import { runAgent, type AgentRunResult } from '../agents/runAgent.js';
import { DEFAULT_LIMITS } from '../config/runSettings.js';
import type { AskCriticOptions } from '../critic/askCritic.js';
import type { GroupRecorder } from '../process/processGroup.js';
import type { AgentEvent } from '../sessionFormat/agentEvents.js';
import type { AnswerAttempt } from '../sessionFormat/sessionFiles.js';
import { inPhase, type EmitEvent } from './iterationWork.js';
import type { LoopGuard } from './loopGuard.js';
import type { LoopRequest } from './loopRequest.js';
import { LimitWaits, waitingAgentOf } from './outlastLimits.js';

type Role = 'actor' | 'critic';

export interface AgentRunsSetup {
  request: Pick<LoopRequest, 'actor' | 'critic' | 'candidate' | 'continuation' | 'limits'>;
  sessionId: string;
  /** The run's first iteration: a resumed run's first actor picks up its own agent session there. */
  firstIteration: number;
  /** The budget and the clock: every run's usage goes to it, and every run listens to its signal. */
  guard: LoopGuard;
  /** Told of each agent's process group while it runs (the loop's lock). */
  groups: GroupRecorder;
  emit: EmitEvent;
  /** Where a run's raw output is kept; undefined once the sidecar record stopped. */
  rawStdoutPath: (iteration: number, role: Role, attempt?: AnswerAttempt) => string | undefined;
}

/**
 * The loop's agents as they run: each run's events and usage reported (the guard
 * counts the spend), the environment it finds, and its usage limits and API trouble
 * waited out within `[limits]` (`LimitWaits`). Each run is numbered its own
 * (`3/actor`, `3/actor/2`, `3/critic/0`): one run again after a limit is a new one for the budget.
 */
export class AgentRuns {
  private readonly limitWaits: LimitWaits;

  constructor(private readonly setup: AgentRunsSetup) {
    this.limitWaits = LimitWaits.forLoop(setup.request.limits ?? DEFAULT_LIMITS, setup.guard, setup.emit);
  }

  /** The actor's turn, in the `actor` phase: run until it ends for a reason of its own (limits waited out). */
  runActor(iteration: number, prompt: string): Promise<AgentRunResult> {
    const { request, guard } = this.setup;
    // A resumed run's first actor picks up its own agent session, context and all.
    const agentSession = iteration === this.setup.firstIteration && request.actor.launch.adapter.canResume ? request.continuation?.actorSession : null;
    let runs = 0;
    const runTurn = async (turn: AgentTurn) => {
      const run = runs++ === 0 ? `${iteration}/actor` : `${iteration}/actor/${runs}`;
      const actor = await runAgent(
        request.actor.launch,
        { role: 'actor', prompt: turn.prompt, model: request.actor.model, resumeSessionId: turn.resumeSessionId },
        {
          costAlreadyCounted: turn.costAlreadyCounted,
          signal: guard.signal,
          onEvent: (event: AgentEvent) => this.onAgentEvent(iteration, 'actor', run, event),
          rawStdoutPath: this.setup.rawStdoutPath(iteration, 'actor'),
          runEnv: this.runEnv(iteration),
          groups: this.setup.groups,
        },
      );
      this.agentFinished(iteration, 'actor', run, actor);
      return actor;
    };
    const first: AgentTurn = { prompt, resumeSessionId: agentSession?.id ?? null, costAlreadyCounted: agentSession?.costAlreadyCounted };
    const work = () => this.limitWaits.outlast(waitingAgentOf(iteration, 'actor', request.actor.launch), first, runTurn);
    return inPhase(this.setup.emit, iteration, 'actor', work, (actor) => actor.durationSecs);
  }

  /** How the critic's runs of one iteration (its answer, a repair) are run: reported, in their environment, limits waited out. */
  criticRuns(
    iteration: number,
  ): Pick<AskCriticOptions, 'model' | 'signal' | 'onEvent' | 'onRunFinished' | 'rawStdoutPath' | 'runEnv' | 'groups' | 'outlastLimits'> {
    const { request, guard } = this.setup;
    let criticRuns = 0;
    return {
      model: request.critic.model,
      signal: guard.signal,
      onEvent: (event) => this.onAgentEvent(iteration, 'critic', `${iteration}/critic/${criticRuns}`, event),
      onRunFinished: (run) => this.agentFinished(iteration, 'critic', `${iteration}/critic/${criticRuns++}`, run),
      rawStdoutPath: (attempt) => this.setup.rawStdoutPath(iteration, 'critic', attempt),
      runEnv: this.runEnv(iteration),
      groups: this.setup.groups,
      outlastLimits: (turn, runTurn) =>
        this.limitWaits.outlast(waitingAgentOf(iteration, 'critic', request.critic.launch), turn, runTurn, (failed) =>
          this.agentFinished(iteration, 'critic', `${iteration}/critic/${criticRuns++}`, failed),
        ),
    };
  }

  /** What the agents find in their environment: which session and iteration they work in. */
  private runEnv(iteration: number): Record<string, string> {
    return {
      CODELOOPS_SESSION_ID: this.setup.sessionId,
      CODELOOPS_ITERATION: String(iteration),
      ...(this.setup.request.candidate ? { CODELOOPS_CANDIDATE: this.setup.request.candidate.label } : {}),
    };
  }

  private onAgentEvent(iteration: number, role: Role, run: string, event: AgentEvent): void {
    this.setup.emit({ type: 'agent_event', iteration, role, event });
    if (event.kind === 'usage') this.setup.guard.usageReported(run, event.total, event.model ?? this.setup.request[role].model);
  }

  private agentFinished(iteration: number, role: Role, run: string, result: AgentRunResult): void {
    this.setup.emit({
      type: 'agent_finished',
      iteration,
      role,
      exit_code: result.exitCode,
      duration_secs: result.durationSecs,
      succeeded: result.succeeded,
      failure_reason: result.failureReason,
      timed_out: result.timedOut,
      interrupted: result.interrupted,
      agent_session_id: result.agentSessionId,
      usage: result.usage,
      tool_calls: result.toolCalls,
      drift: result.drift,
    });
    this.setup.guard.runFinished(run, result.usage, result.model ?? this.setup.request[role].model);
  }
}
