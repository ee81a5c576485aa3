import type { ConfigLayer } from '../config/runSettings.js';
import type { LoopGuards } from '../sessionFormat/runEvents.js';
import { answerQuestion, assertIterationsLeft, planResume } from '../resume/resumePlan.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { driveLoop } from './driveLoop.js';
import { openStore } from './openStore.js';
import { checkOutputFlags, prepareOrRefuse, type RunOptions } from './runSetup.js';
import { writeWarning } from './terminal.js';

export interface ResumeOptions extends Omit<RunOptions, 'prompt' | 'promptFile' | 'workingDir' | 'dryRun'> {
  force?: boolean;
  /** The user's answer to the question the session's last iteration asked (`needs_input`). */
  answer?: string;
}

/**
 * `codeloops resume <session>`: checks that the files are as the loop left them,
 * then carries the session on with its prompt, agents and models (flags override
 * them), the critic's last feedback and the actor's own agent session.
 */
export async function resumeCommand(idOrPrefix: string, options: ResumeOptions): Promise<number> {
  checkOutputFlags(options);
  const { plan, prepared } = await prepareOrRefuse(options, async (prepareAsking) => {
    const store = openStore();
    const sessionId = await store.resolveId(idOrPrefix);
    const plan = await planResume({ store, sidecarDirOf: (id) => sidecarDirOf(id), sessionId, force: Boolean(options.force) });
    if (options.answer !== undefined) answerQuestion(plan, options.answer);
    const { recorded } = plan;
    const actorAgent = options.actorAgent ?? options.agent ?? recorded.actorAgent;
    const criticAgent = options.criticAgent ?? options.agent ?? recorded.criticAgent;
    // A recorded model belongs to its agent: it is kept only while the agent is.
    const actorModel = options.actorModel ?? options.model ?? (actorAgent === recorded.actorAgent ? (recorded.actorModel ?? undefined) : undefined);
    const criticModel = options.criticModel ?? options.model ?? (criticAgent === recorded.criticAgent ? (recorded.criticModel ?? undefined) : undefined);
    const maxIterations = options.maxIterations ?? recorded.maxIterations ?? 0;
    assertIterationsLeft(plan, maxIterations);
    const prepared = await prepareAsking({
      workingDir: plan.session.start.working_dir,
      flags: { ...options, actorAgent, criticAgent, actorModel, criticModel, maxIterations },
      // The guards the session ran with, unless a flag says otherwise (`--max-cost 10` raises a cap to carry on).
      recordedLayer: recordedGuardsLayer(recorded.guards),
    });
    return { plan, prepared };
  });
  if (!options.quiet && !options.events) {
    for (const warning of plan.warnings) writeWarning(warning);
    const where = plan.continuation.appendTo ? 'in the same session file' : 'in a new session linked to it';
    process.stderr.write(`Resuming session ${plan.session.id} at iteration ${plan.continuation.lastIteration + 1}, ${where}.\n`);
  }
  return driveLoop(options, { prompt: plan.session.start.prompt, prepared, continuation: plan.continuation });
}

/** A resumed session's recorded guards as a config layer; none for a session from a runner that did not record them. */
function recordedGuardsLayer(guards: LoopGuards | undefined): ConfigLayer | undefined {
  if (!guards) return undefined;
  return {
    source: 'the resumed session',
    maxCostUsd: guards.max_cost_usd ?? undefined,
    maxTokens: guards.max_tokens ?? undefined,
    maxDurationSecs: guards.max_duration_secs ?? undefined,
    stall: { unchanged_iterations: guards.stall_after, action: guards.stall_action },
    review: guards.review,
    checks: guards.checks.map((check) => ({
      name: check.name,
      run: check.command,
      required: check.required,
      folder: check.folder,
      timeout_secs: check.timeout_secs,
      runner: check.runner,
      when: check.when,
      hidden: check.hidden,
      isolated: check.isolated,
    })),
    // Not recorded (`--no-verify`, an older runner): verified all the same unless `--no-verify` says so again.
    verify: guards.verify && {
      protected: guards.verify.protected,
      allow_test_changes: guards.verify.allow_test_changes,
      require_evidence: guards.verify.require_evidence,
    },
  };
}
