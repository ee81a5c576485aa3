import { configFilesOf } from '../config/runSettings.js';
import type { Continuation } from '../loop/loopRequest.js';
import { endLoopsInThisProcessNow, runLoop } from '../loop/loopRunner.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { RunNotifier } from '../notify/runNotifier.js';
import { worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { describeEvent } from '../sessionFormat/eventWording.js';
import type { RunEvent, RunSummary } from '../sessionFormat/runEvents.js';
import { sessionsDir, sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { runOutcomeOf } from '../sessionFormat/cliAnswers.js';
import { CodeloopsError, type Failure } from '../sessionFormat/failures.js';
import { printAnswer } from './answers.js';
import { EXIT_CODES } from './exitCodes.js';
import { cliHint } from './failureHints.js';
import { stdinReviewControl } from './reviewControl.js';
import { reportRefusal, type RunOptions } from './runSetup.js';
import { writeLines } from './terminal.js';
import { shellWord } from '../text/shellSteps.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { notifyFailureText } from './runSetup.js';
import { runFromTerminal, writeStderr } from './terminalRun.js';

/**
 * Runs a loop from the terminal (`runFromTerminal`: Ctrl+C interrupts it, a second
 * one quits at once); progress goes to stderr, and to stdout either one JSON object
 * (--json-output) or every run event (--events ndjson). Shared by `run` and `resume`.
 */
export async function driveLoop(
  options: Pick<RunOptions, 'jsonOutput' | 'events' | 'quiet'>,
  run: { prompt: string; prepared: PreparedRun; continuation?: Continuation },
): Promise<number> {
  const terminal = { events: options.events, stopping: 'stopping the agent and ending the session', endNow: endLoopsInThisProcessNow };
  let stdoutOpen = () => true;
  let sessionId: string | undefined;
  // The question the loop is waiting on, so that a user who stops it there is told how to answer later.
  let unanswered: string | undefined;
  // The last DONE the gate refused, while no later verdict stands: a run that ends on it says how to accept what refused it.
  let refused: Extract<RunEvent, { type: 'done_refused' }> | undefined;
  // Someone can answer on stdin when it is the editor's control channel (--events ndjson) or a terminal;
  // otherwise (CI, --json-output piped) the run is headless and a question ends it.
  const answerable = options.events === 'ndjson' || process.stdin.isTTY === true;
  const control =
    run.prepared.settings.review === 'pause' || answerable
      ? stdinReviewControl({ json: options.events === 'ndjson', sessionId: () => sessionId, say: writeStderr })
      : undefined;
  const notifier = new RunNotifier(run.prepared.settings.notify, run.prepared.repository.root, (failure) => writeStderr(notifyFailureText(failure)));
  let summary: RunSummary;
  try {
    summary = await runFromTerminal(terminal, ({ signal, stdoutOpen: isOpen }) => {
      stdoutOpen = isOpen;
      const onEvent = (event: RunEvent): void => {
        notifier.observe(event);
        if (event.type === 'run_started') sessionId = event.session_id;
        if (event.type === 'review_paused') unanswered = event.needs_input?.question;
        if (event.type === 'needs_input_answered' || event.type === 'iteration_started') unanswered = undefined;
        if (event.type === 'done_refused') refused = event;
        else if (event.type === 'iteration_started') refused = undefined;
        if (options.events === 'ndjson') {
          if (isOpen()) process.stdout.write(JSON.stringify(event.type === 'run_finished' ? runOutcomeOf(event, summaryHint) : event) + '\n');
          return;
        }
        if (!options.quiet) writeLines(process.stderr, describeEvent(event, { showAgentText: true }));
      };
      return runLoop({
        prompt: run.prompt,
        workingDir: run.prepared.workingDir,
        repository: run.prepared.repository,
        actor: run.prepared.actor,
        critic: run.prepared.critic,
        maxIterations: run.prepared.settings.maxIterations,
        checks: run.prepared.settings.checks,
        isolation: { directory: worktreesDir(), worktree: run.prepared.settings.worktree },
        budget: run.prepared.settings.budget,
        stall: run.prepared.settings.stall,
        limits: run.prepared.settings.limits,
        prices: run.prepared.settings.prices,
        sessionsDirectory: sessionsDir(),
        sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
        signal,
        onEvent,
        continuation: run.continuation,
        waitForReview: run.prepared.settings.review === 'pause' ? control?.wait : undefined,
        askUser: answerable ? control?.ask : undefined,
        verify: run.prepared.settings.verify ?? undefined,
        configFiles: configFilesOf(run.prepared.settings),
      });
    });
  } catch (error) {
    // Only failures before the session exists reach here (the repository is busy, the sessions folder cannot be written).
    reportRefusal(options, error);
    throw error;
  } finally {
    control?.close();
    // Bounded by the notify timeout: word of the end goes out before the process does.
    await notifier.settled();
  }
  const stoppedAtQuestion = summary.status === 'interrupted' && unanswered !== undefined;
  if ((summary.error_code === 'needs_input' || stoppedAtQuestion) && !options.events && !options.quiet) {
    writeStderr(`${cliHint(new CodeloopsError('needs_input', summary.error ?? '', { session_id: summary.session_id })) ?? ''}\n`);
  }
  if ((summary.error_code === 'agent_auth' || summary.error_code === 'usage_limit') && !options.events && !options.quiet) {
    writeStderr(`${cliHint(new CodeloopsError(summary.error_code, summary.error ?? '', { session_id: summary.session_id })) ?? ''}\n`);
  }
  if (refused && summary.status !== 'success' && !options.events && !options.quiet) writeStderr(acceptHint(summary.session_id, refused));
  if (options.jsonOutput && stdoutOpen()) printAnswer('run', runOutcomeOf(summary, summaryHint));
  return EXIT_CODES[summary.status];
}

/**
 * How to accept what refused the run's last DONE, when the task needed it: each start
 * test that failed on the final code, each weakening standing. Nothing for a failing
 * check or a requirement: those are the actor's to fix.
 */
/** What to type about a loop that ended failed, as a refusal's hint would say it. */
function summaryHint(failure: Omit<Failure, 'hint'>): string | null {
  return cliHint(new CodeloopsError(failure.code, failure.message, failure.details)) ?? null;
}

function acceptHint(sessionId: string, refused: Extract<RunEvent, { type: 'done_refused' }>): string {
  const quote = (text: string) => sanitizeForTerminal(shellWord(text));
  const commands = [
    ...(refused.failed_tests ?? []).map((id) => `codeloops accept ${sessionId} --test ${quote(id)} --reason "…"`),
    ...(refused.protected_changes ?? []).map(
      (change) => `codeloops accept ${sessionId} --iteration ${refused.iteration} --file ${quote(change.file)} --reason "…"`,
    ),
  ];
  if (commands.length === 0) return '';
  const shown = commands.slice(0, 5);
  const more = commands.length > shown.length ? [`  (and ${commands.length - shown.length} more)`] : [];
  return [
    `If the task needed what refused its last DONE, accept it and resume (codeloops resume ${sessionId}):`,
    ...shown.map((each) => `  ${each}`),
    ...more,
    '',
  ].join('\n');
}
