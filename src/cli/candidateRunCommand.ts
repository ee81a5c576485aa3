import os from 'node:os';
import path from 'node:path';
import { planCandidates } from '../candidates/candidateSpecs.js';
import { endGroupsInThisProcessNow, runCandidates } from '../candidates/runCandidates.js';
import { endLoopsInThisProcessNow } from '../loop/loopRunner.js';
import { prepareRun, type PreparedRun } from '../loop/prepareRun.js';
import { RunNotifier } from '../notify/runNotifier.js';
import { describeGroupEvent } from '../sessionFormat/groupWording.js';
import type { GroupComparison, GroupStatus } from '../sessionFormat/candidateGroups.js';
import { groupsDir, worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { sessionsDir, sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { renderComparison } from './comparisonText.js';
import { printGroupPlan } from './dryRunPlan.js';
import { EXIT_CODES } from './exitCodes.js';
import { openStore } from './openStore.js';
import { notifyFailureText, prepareOrRefuse, readPrompt, reportRefusal, userLayersOf, type RunOptions } from './runSetup.js';
import { colorEnabled, writeLines } from './terminal.js';
import { runFromTerminal, writeStderr } from './terminalRun.js';
import { printAnswer } from './answers.js';

/**
 * `codeloops run --candidates …` / `--parallel N`: a candidate group, one loop per
 * candidate in its own worktree, then their comparison (`codeloops candidates` shows
 * it again; `codeloops apply` takes one's changes).
 */

type Candidate = { spec: ReturnType<typeof planCandidates>[number]; prepared: PreparedRun };

export async function runCandidatesCommand(options: RunOptions): Promise<number> {
  const workingDir = path.resolve(options.workingDir ?? process.cwd());
  const { prompt, base, candidates } = await prepareOrRefuse(options, async (prepareAsking) => {
    const prompt = readPrompt(options, workingDir);
    const base = await prepareAsking({ workingDir, flags: options });
    return { prompt, base, candidates: await prepareCandidates(options, workingDir, base) };
  });
  const jobs = options.jobs ?? os.availableParallelism();
  if (base.settings.review === 'pause' && !options.events) {
    process.stderr.write(
      'warning: review = "pause" does not pause candidates (they run side by side unattended): review them in the comparison, then apply one.\n',
    );
  }
  if (options.dryRun) {
    const planned = candidates.map(({ spec, prepared }) => ({ label: spec.label, prepared }));
    return printGroupPlan(options, { base, prompt, candidates: planned, jobs, judge: options.judge !== false });
  }
  const result = await runGroup(options, { prompt, base, candidates, jobs });
  if (options.jsonOutput) printAnswer('run --candidates', result.comparison);
  else if (!options.events && !options.quiet) process.stderr.write(renderComparison(result.comparison, colorEnabled(process.stderr)));
  return exitCodeOf(result.status, result.comparison);
}

/** Every candidate's agent is looked for now: a missing one fails the group before anything starts. */
async function prepareCandidates(options: RunOptions, workingDir: string, base: PreparedRun): Promise<Candidate[]> {
  const specs = planCandidates(options.candidates, options.parallel, base.settings.actor.agent);
  return Promise.all(
    specs.map(async (spec) => ({
      spec,
      prepared:
        spec.agent === base.settings.actor.agent && spec.model === null
          ? base
          : // The project file passed its trust check with the base (or was trusted just now).
            await prepareRun({
              workingDir,
              flags: { ...options, actorAgent: spec.agent, actorModel: spec.model ?? undefined },
              userLayers: userLayersOf(options),
              trust: true,
            }),
    })),
  );
}

/** The group, run from the terminal: Ctrl+C stops every candidate; its events go to stdout or, in words, to stderr. */
async function runGroup(options: RunOptions, group: { prompt: string; base: PreparedRun; candidates: Candidate[]; jobs: number }) {
  const store = openStore();
  const terminal = {
    events: options.events,
    stopping: 'stopping every candidate and ending their sessions',
    endNow: (status: 'interrupted' | 'failed', failure: { error: string; code: 'internal' } | null) => {
      endLoopsInThisProcessNow(status, failure);
      endGroupsInThisProcessNow(status);
    },
  };
  // Each candidate is a session of its own: word of its question and its end, as for a single loop.
  const notifier = new RunNotifier(group.base.settings.notify, group.base.repository.root, (failure) => writeStderr(notifyFailureText(failure)));
  // What runCandidates throws, it throws before the group starts (a leftover agent still at work, a worktree folder
  // inside the repository): a refusal, told on stdout like the ones before it.
  return runFromTerminal(terminal, ({ signal, stdoutOpen }) =>
    runCandidates({
      ...group,
      judge: options.judge !== false,
      sessionsDirectory: sessionsDir(),
      sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
      groupsDirectory: groupsDir(),
      worktreesDirectory: worktreesDir(),
      store,
      signal,
      onEvent: (event) => {
        if (event.type === 'candidate_event') notifier.observe(event.event, event.session_id);
        if (options.events === 'ndjson') {
          if (stdoutOpen()) process.stdout.write(JSON.stringify(event) + '\n');
        } else if (!options.quiet) writeLines(process.stderr, describeGroupEvent(event));
      },
      onWarning: (message) => {
        if (!options.events) process.stderr.write(`warning: ${sanitizeForTerminal(message)}\n`);
      },
    }),
  )
    .catch((error: unknown) => {
      reportRefusal(options, error);
      throw error;
    })
    .finally(() => notifier.settled());
}

/** Interrupted: 130; otherwise the best candidate's outcome, as a single run's exit code. */
function exitCodeOf(status: GroupStatus, comparison: GroupComparison): number {
  if (status === 'interrupted') return EXIT_CODES.interrupted;
  const best = comparison.candidates[0]?.status;
  return best === 'success' || best === 'max_iterations_reached' || best === 'interrupted' || best === 'failed' ? EXIT_CODES[best] : EXIT_CODES.failed;
}
