import { prepareRun } from '../loop/prepareRun.js';
import { planResume } from '../resume/resumePlan.js';
import { sidecarDir } from '../sessionFormat/sessionFiles.js';
import { driveLoop, editorSettingsLayer, notStarted, type RunOptions } from './runCommand.js';
import { openStore } from './sessionsCommand.js';
import { UsageError } from './usageError.js';

export interface ResumeOptions extends Omit<RunOptions, 'prompt' | 'promptFile' | 'workingDir' | 'dryRun'> {
  force?: boolean;
}

/**
 * `codeloops resume <session>`: checks that the files are as the loop left them,
 * then carries the session on with its prompt, agents and models (flags override
 * them), the critic's last feedback and the actor's own agent session.
 */
export async function resumeCommand(idOrPrefix: string, options: ResumeOptions): Promise<number> {
  if (options.jsonOutput && options.events) throw new UsageError('--json-output and --events cannot be used together.');
  let plan: Awaited<ReturnType<typeof planResume>>;
  let prepared: Awaited<ReturnType<typeof prepareRun>>;
  try {
    const store = openStore();
    const sessionId = await store.resolveId(idOrPrefix);
    plan = await planResume({ store, sidecarDirOf: (id) => sidecarDir(id), sessionId, force: Boolean(options.force) });
    const { recorded } = plan;
    const actorAgent = options.actorAgent ?? options.agent ?? recorded.actorAgent;
    const criticAgent = options.criticAgent ?? options.agent ?? recorded.criticAgent;
    // A recorded model belongs to its agent: it is kept only while the agent is.
    const actorModel = options.actorModel ?? options.model ?? (actorAgent === recorded.actorAgent ? (recorded.actorModel ?? undefined) : undefined);
    const criticModel = options.criticModel ?? options.model ?? (criticAgent === recorded.criticAgent ? (recorded.criticModel ?? undefined) : undefined);
    const maxIterations = options.maxIterations ?? recorded.maxIterations ?? 0;
    const next = plan.continuation.lastIteration + 1;
    if (maxIterations !== 0 && next > maxIterations) {
      throw new UsageError(
        `Session ${sessionId} has used its ${maxIterations} iteration${maxIterations === 1 ? '' : 's'}; the next would be iteration ${next}. ` +
          `Allow more with -n (for example -n ${maxIterations + 5}), or -n 0 for no limit.`,
      );
    }
    const userLayers = options.editorSettings ? [editorSettingsLayer(options.editorSettings)] : [];
    prepared = await prepareRun({
      workingDir: plan.session.start.working_dir,
      flags: { actorAgent, criticAgent, actorModel, criticModel, maxIterations },
      userLayers,
    });
  } catch (error) {
    if (options.jsonOutput) process.stdout.write(JSON.stringify(notStarted((error as Error).message)) + '\n');
    throw error;
  }
  if (!options.quiet && !options.events) {
    for (const warning of plan.warnings) process.stderr.write(`warning: ${warning}\n`);
    const where = plan.continuation.appendTo ? 'in the same session file' : 'in a new session linked to it';
    process.stderr.write(`Resuming session ${plan.session.id} at iteration ${plan.continuation.lastIteration + 1}, ${where}.\n`);
  }
  return driveLoop(options, { prompt: plan.session.start.prompt, prepared, continuation: plan.continuation });
}
