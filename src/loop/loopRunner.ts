import type { AgentEvent } from '../agents/agentEvents.js';
import { runAgent, type AgentLaunch, type AgentRunResult } from '../agents/runAgent.js';
import { feedbackText, type CriticDecision } from '../critic/criticDecision.js';
import { reviewIteration, type Review } from '../critic/reviewIteration.js';
import type { Repository } from '../git/repository.js';
import { restoreChangedPaths } from '../git/restore.js';
import { pointRef, snapshotRef, takeSnapshot, type Snapshot, type SnapshotLabel } from '../git/snapshots.js';
import { changedPaths, diffSnapshots, type DiffSummary } from '../git/treeDiff.js';
import type { Outcome } from '../sessionFormat/sessionLines.js';
import { SessionWriter } from '../sessionWriter/sessionWriter.js';
import { SidecarRecorder } from '../sessionWriter/sidecarRecorder.js';
import { buildContinuationPrompt, type FeedbackRecord } from './actorPrompt.js';
import { acquireRepositoryLock } from './repositoryLock.js';
import type { RunEvent, RunEventInput, RunEventListener, RunSummary } from './runEvents.js';

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
  /** Where this session's sidecar folder goes, given its id. */
  sidecarDirectory: (sessionId: string) => string;
  signal: AbortSignal;
  onEvent?: RunEventListener;
}

/** Ends the loop with `failed`: something no further iteration can fix. */
export class LoopFailure extends Error {
  override name = 'LoopFailure';
}

/** Consecutive failed agent runs that changed nothing before the loop gives up. */
const STALL_LIMIT = 2;

interface IterationOutcome {
  decision: CriticDecision | null;
  interrupted: boolean;
}

/**
 * The actor–critic loop: snapshot, actor, snapshot, diff, critic, record, decide.
 * DONE ends with success; CONTINUE and ERROR feed back and loop; the iteration
 * limit, an interrupt or an unrecoverable failure end it too. Whatever happens, the
 * session ends with a `session_end` line.
 */
export async function runLoop(request: LoopRequest): Promise<RunSummary> {
  const startedAt = new Date();
  const clockStart = performance.now();
  // Locked before the session file exists: a refused run leaves nothing behind.
  const lock = acquireRepositoryLock(request.repository);
  let writer: SessionWriter;
  try {
    writer = SessionWriter.create(
      request.sessionsDirectory,
      {
        prompt: request.prompt,
        workingDir: request.workingDir,
        actorAgent: request.actor.launch.adapter.displayName,
        criticAgent: request.critic.launch.adapter.displayName,
        actorModel: request.actor.model,
        criticModel: request.critic.model,
        maxIterations: request.maxIterations,
      },
      startedAt,
    );
  } catch (error) {
    lock.release();
    throw error;
  }
  const sessionId = writer.sessionId;
  const sidecar = SidecarRecorder.open(request.sidecarDirectory(sessionId));
  let sidecarBroken = false;
  const emit = (input: RunEventInput): void => {
    const event = { ...input, timestamp: new Date().toISOString() } as RunEvent;
    if (!sidecarBroken) {
      try {
        sidecar.record(event);
      } catch (error) {
        sidecarBroken = true; // the session file is what matters; say so once and go on
        request.onEvent?.({ type: 'warning', message: `the sidecar record stopped: ${(error as Error).message}`, timestamp: event.timestamp });
      }
    }
    request.onEvent?.(event);
  };

  emit({
    type: 'run_started',
    session_id: sessionId,
    session_file: writer.filePath,
    prompt: request.prompt,
    working_dir: request.workingDir,
    actor_agent: request.actor.launch.adapter.displayName,
    critic_agent: request.critic.launch.adapter.displayName,
    actor_model: request.actor.model,
    critic_model: request.critic.model,
    max_iterations: request.maxIterations,
  });

  const history: FeedbackRecord[] = [];
  let loopStart: Snapshot | undefined;
  let completedIterations = 0;
  let actorStalls = 0;
  let criticFailures = 0;
  let summary: RunSummary;
  let outcome: { status: Outcome; summary: string | null; confidence: number | null; error: string | null } | undefined;

  const snapshot = async (iteration: number, label: SnapshotLabel, withRef = true): Promise<Snapshot> => {
    const ref = withRef ? snapshotRef(sessionId, iteration, label) : null;
    const taken = await takeSnapshot(request.repository, `codeloops ${sessionId} iteration ${iteration} ${label}`, ref ?? undefined);
    if (withRef) emit({ type: 'snapshot', iteration, label, commit: taken.commit, ref });
    return taken;
  };

  const agentFinished = (iteration: number, role: 'actor' | 'critic', result: AgentRunResult): void =>
    emit({
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
    });

  const runIteration = async (iteration: number): Promise<IterationOutcome> => {
    const runEnv = { CODELOOPS_SESSION_ID: sessionId, CODELOOPS_ITERATION: String(iteration) };
    emit({ type: 'iteration_started', iteration });
    const pre = await snapshot(iteration, 'pre');
    loopStart ??= pre;

    const prompt = history.length === 0 ? request.prompt : buildContinuationPrompt(request.prompt, history, iteration);
    emit({ type: 'phase', iteration, phase: 'actor', status: 'started' });
    const actor = await runAgent(
      request.actor.launch,
      { role: 'actor', prompt, model: request.actor.model, resumeSessionId: null },
      {
        signal: request.signal,
        onEvent: (event: AgentEvent) => emit({ type: 'agent_event', iteration, role: 'actor', event }),
        rawStdoutPath: sidecar.rawStdoutPath(iteration, 'actor'),
        runEnv,
      },
    );
    agentFinished(iteration, 'actor', actor);
    emit({ type: 'phase', iteration, phase: 'actor', status: 'finished', duration_secs: actor.durationSecs });
    // Even an interrupted actor may have changed files: keep them restorable.
    const post = await snapshot(iteration, 'post');
    if (actor.interrupted || request.signal.aborted) return { decision: null, interrupted: true };
    if (actor.exitCode === 127 && actor.failureReason?.startsWith('could not start')) throw new LoopFailure(`The actor ${actor.failureReason}`);

    emit({ type: 'phase', iteration, phase: 'diff', status: 'started' });
    const diffStarted = performance.now();
    const diff = await diffSnapshots(request.repository, pre.commit, post.commit);
    const sinceStart = (await changedPaths(request.repository, loopStart.tree, post.tree)).map((change) => change.path);
    emit({
      type: 'diff_captured',
      iteration,
      files_changed: diff.filesChanged,
      insertions: diff.insertions,
      deletions: diff.deletions,
      files: diff.files,
      truncated: diff.diffTruncated,
    });
    emit({ type: 'phase', iteration, phase: 'diff', status: 'finished', duration_secs: (performance.now() - diffStarted) / 1000 });

    emit({ type: 'phase', iteration, phase: 'critic', status: 'started' });
    const criticStarted = performance.now();
    const review = await reviewIteration(
      request.critic.launch,
      {
        task: request.prompt,
        iteration,
        maxIterations: request.maxIterations,
        actorTranscript: actor.transcript,
        actorStderr: actor.stderr,
        actorExitCode: actor.exitCode,
        actorFailure: actor.succeeded ? null : actor.failureReason,
        diff: diff.diff,
        filesChanged: diff.filesChanged,
        insertions: diff.insertions,
        deletions: diff.deletions,
        changedSinceStart: sinceStart,
        previousFeedback: history.length > 0 ? feedbackText(history.at(-1)!.decision) : null,
      },
      {
        model: request.critic.model,
        signal: request.signal,
        onEvent: (event) => emit({ type: 'agent_event', iteration, role: 'critic', event }),
        onRepair: (problem) => {
          emit({ type: 'warning', message: `iteration ${iteration}: the critic's answer could not be read (${problem}); asking once more` });
          emit({ type: 'phase', iteration, phase: 'critic_repair', status: 'started' });
        },
        rawStdoutPath: (attempt) => sidecar.rawStdoutPath(iteration, 'critic', attempt),
        runEnv,
      },
    );
    for (const run of review.runs) agentFinished(iteration, 'critic', run);
    emit({ type: 'phase', iteration, phase: 'critic', status: 'finished', duration_secs: (performance.now() - criticStarted) / 1000 });
    const reverted = await revertCriticChanges(iteration, post);
    if (review.interrupted || request.signal.aborted) return { decision: null, interrupted: true };

    recordIteration(iteration, actor, diff, review, reverted);
    completedIterations = iteration;

    actorStalls = !actor.succeeded && diff.filesChanged === 0 ? actorStalls + 1 : 0;
    criticFailures = review.source === 'critic_failed' ? criticFailures + 1 : 0;
    if (review.decision.kind !== 'DONE') {
      if (actorStalls >= STALL_LIMIT) {
        throw new LoopFailure(`The actor failed ${STALL_LIMIT} times in a row without changing anything: ${actor.failureReason ?? 'unknown failure'}`);
      }
      if (criticFailures >= STALL_LIMIT) {
        throw new LoopFailure(`The critic failed ${STALL_LIMIT} times in a row: ${review.runs.at(-1)?.failureReason ?? 'unknown failure'}`);
      }
    }
    return { decision: review.decision, interrupted: false };
  };

  /** The critic reviews, it does not edit: anything it changed goes back to the actor's version. */
  const revertCriticChanges = async (iteration: number, post: Snapshot): Promise<string[]> => {
    const afterCritic = await snapshot(iteration, 'critic', false);
    if (afterCritic.tree === post.tree) return [];
    const ref = snapshotRef(sessionId, iteration, 'critic');
    await pointRef(request.repository, ref, afterCritic.commit, `codeloops ${sessionId} iteration ${iteration} critic changes`);
    emit({ type: 'snapshot', iteration, label: 'critic', commit: afterCritic.commit, ref });
    const restored = await restoreChangedPaths(request.repository, afterCritic.commit, post.commit);
    const paths = [...restored.restored, ...restored.removed].sort();
    emit({ type: 'critic_changes_reverted', iteration, paths });
    emit({
      type: 'warning',
      message: `iteration ${iteration}: the critic changed ${paths.length} file${paths.length === 1 ? '' : 's'} (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}); restored the actor's version. The critic's version is kept at ${ref}.`,
    });
    return paths;
  };

  const recordIteration = (iteration: number, actor: AgentRunResult, diff: DiffSummary, review: Review, reverted: string[]): void => {
    const decision = review.decision;
    emit({
      type: 'critic_decision',
      iteration,
      decision: decision.kind,
      feedback: feedbackText(decision),
      summary: decision.kind === 'DONE' ? decision.summary : null,
      confidence: decision.kind === 'DONE' ? decision.confidence : null,
      remaining_issues: decision.kind === 'CONTINUE' ? decision.remainingIssues : [],
      source: review.source,
      critic_output: review.answer,
    });
    writer.writeIteration({
      iterationNumber: iteration,
      actorOutput: actor.transcript,
      actorStderr: actor.stderr,
      actorExitCode: actor.exitCode,
      actorDurationSecs: actor.durationSecs,
      gitDiff: diff.diff,
      gitFilesChanged: diff.filesChanged,
      gitInsertions: diff.insertions,
      gitDeletions: diff.deletions,
      criticDecision: decision.kind,
      feedback: feedbackText(decision),
      remainingIssues: decision.kind === 'CONTINUE' ? decision.remainingIssues : [],
      criticRevertedFiles: reverted,
    });
    emit({ type: 'iteration_finished', iteration, decision: decision.kind });
  };

  try {
    for (let iteration = 1; ; iteration++) {
      if (request.signal.aborted) {
        outcome = { status: 'interrupted', summary: null, confidence: null, error: null };
        break;
      }
      if (request.maxIterations !== null && iteration > request.maxIterations) {
        outcome = { status: 'max_iterations_reached', summary: null, confidence: null, error: null };
        break;
      }
      const result = await runIteration(iteration);
      if (result.interrupted) {
        outcome = { status: 'interrupted', summary: null, confidence: null, error: null };
        break;
      }
      const decision = result.decision!;
      if (decision.kind === 'DONE') {
        outcome = { status: 'success', summary: decision.summary, confidence: decision.confidence, error: null };
        break;
      }
      history.push({ iteration, decision });
    }
  } catch (error) {
    // Ctrl+C in a terminal reaches git's processes too: a snapshot can fail a moment
    // before the interrupt itself is seen. Give the signal that moment.
    if (!request.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 250));
    outcome = request.signal.aborted
      ? { status: 'interrupted', summary: null, confidence: null, error: null }
      : { status: 'failed', summary: null, confidence: null, error: (error as Error).message };
  } finally {
    outcome ??= { status: 'failed', summary: null, confidence: null, error: 'the loop stopped unexpectedly' };
    const totalDurationSecs = (performance.now() - clockStart) / 1000;
    try {
      writer.writeEnd({
        outcome: outcome.status,
        iterations: completedIterations,
        summary: outcome.summary,
        confidence: outcome.confidence,
        durationSecs: totalDurationSecs,
        error: outcome.error,
      });
    } finally {
      writer.close();
      lock.release();
    }
    summary = {
      status: outcome.status,
      iterations: completedIterations,
      summary: outcome.summary,
      confidence: outcome.confidence,
      error: outcome.error,
      total_duration_secs: Math.round(totalDurationSecs * 1000) / 1000,
      session_id: sessionId,
      session_file: writer.filePath,
    };
    emit({ type: 'run_finished', ...summary });
    sidecar.close();
  }
  return summary;
}
