import path from 'node:path';
import type { FailureCode } from '../../sessionFormat/failures.js';
import type { Forecast } from '../../sessionFormat/forecast.js';
import { advanceLoop, LOOP_STARTING, loopToldTo } from '../../sessionFormat/loopProgress.js';
import type { NeedsInput } from '../../sessionFormat/needsInput.js';
import type { ReviewAction } from '../../sessionFormat/reviewRecords.js';
import { beginsWait, type RunEvent } from '../../sessionFormat/runEvents.js';
import type { Disposable, Event, FolderRef } from '../editorPorts.js';
import { COMMANDS } from '../ids.js';
import { reportLoopEnd, type LoopEndPorts } from './loopEndReport.js';
import { logEvent } from './loopLog.js';
import { LoopProcess, type LoopProcessEnd, type LoopProcessOptions, type RunOverrides } from '../runner/loopProcess.js';
import type { LoopEvent, LoopRegistry, RunningLoop } from './loopRegistry.js';
import { tellAgentWaiting } from './waitingNotice.js';

export interface RunControllerDeps<F extends FolderRef> extends LoopEndPorts<F> {
  /** Where the window's running loops are kept, and the context keys set. */
  registry: LoopRegistry<F>;
  /** Shows a running loop in the status bar until disposed. */
  showStatus: (loop: RunningLoop<F>) => Disposable;
  /** Whether the agents' text streams into the log. */
  showAgentText: () => boolean;
}

export interface StartOptions {
  /** Refusals the caller deals with itself (resume offers "Resume Anyway" for a changed tree): not reported here. */
  handles?: readonly FailureCode[];
  /** What past tasks with the run's agents took: the status bar shows the spend against its p90 once it is known. */
  forecast?: Promise<Forecast | undefined>;
  /** Choices above every config for this run (a chat tool's agents, a resume's more iterations). */
  overrides?: RunOverrides;
}

/**
 * Starts and stops single loops, one per workspace folder, and follows them as they
 * run: the log streams each phase, a status bar item shows where the loop is, a loop
 * that waits for the user's review asks for it, and the end is told with what to do
 * next. The loops themselves are kept in the registry, which the views follow.
 */
export class RunController<F extends FolderRef = FolderRef> implements Disposable {
  /** Every run event of this window's single loops (a candidate's reach the registry's listeners only). */
  readonly onEvent: Event<LoopEvent<F>> = (listener) =>
    this.deps.registry.onEvent((event) => {
      if (event.kind === 'loop') listener(event);
    });

  constructor(private readonly deps: RunControllerDeps<F>) {}

  runningLoops(): RunningLoop<F>[] {
    return this.deps.registry.loops();
  }

  runningSessionIds(): Set<string> {
    return new Set(this.runningLoops().flatMap((loop) => (loop.sessionId ? [loop.sessionId] : [])));
  }

  /** Whether a loop may start in the folder now; when not, the user has been told why. */
  canStartIn(folder: F): boolean {
    return !this.deps.registry.refuseBusyFolder('loop', folder);
  }

  /** Starts a loop; resolves when it has ended. Refuses a second loop in the same folder. */
  async start(folder: F, prompt: LoopProcessOptions['prompt'], options: StartOptions = {}): Promise<LoopProcessEnd | undefined> {
    if (!this.canStartIn(folder)) return undefined;
    const { deps } = this;
    const process = new LoopProcess(
      deps.runner,
      { workingDir: folder.uri.fsPath, prompt, editorSettings: deps.editorSettingsJson(folder), overrides: options.overrides },
      (event) => this.handle(folder, event),
    );
    const loop: RunningLoop<F> = {
      kind: 'loop',
      folder,
      process,
      sessionId: undefined,
      progress: LOOP_STARTING,
      startedAt: Date.now(),
      guards: null,
      spend: null,
      forecast: null,
    };
    void options.forecast?.then((forecast) => (loop.forecast = forecast ?? null));
    deps.log.info(`Starting a loop in ${folder.uri.fsPath}`);
    return deps.registry.run(loop, process.done, {
      status: () => deps.showStatus(loop),
      report: (end) => reportLoopEnd(deps, folder, end, options.handles),
    });
  }

  /** Interrupts the loop of a folder, or the only one running; asks when several run. */
  interrupt(folder?: F): Promise<void> {
    return this.deps.registry.interrupt(folder, 'loop');
  }

  /**
   * Tells a loop paused for review to go on (or to stop); the loop of this session, or
   * the only one paused. A loop that waits for an answer goes on with one: the box opens.
   */
  async resumeAfterReview(action: ReviewAction, sessionId?: string): Promise<void> {
    const loop = await this.pausedLoop(sessionId, action === 'continue' ? 'Which loop should go on?' : 'Which loop should stop?');
    if (!loop) return;
    if (action === 'continue' && loop.progress.question) return void (await this.askAnswer(loop));
    loop.progress = loopToldTo(loop.progress, action);
    this.deps.registry.syncContext();
    loop.process.control(action);
  }

  /** Gives a loop that waits for the user's answer (`needs_input`) their answer: the next actor gets it as their words. */
  async answer(text: string, sessionId?: string): Promise<void> {
    const loop = await this.pausedLoop(sessionId, 'Which loop is your answer for?');
    if (!loop) return;
    loop.progress = loopToldTo(loop.progress, 'continue');
    this.deps.registry.syncContext();
    loop.process.answer(text);
  }

  /** Opens the answer box for the question a loop waits on (this session's, or the only one): the status bar's and the palette's way back to it. */
  async answerQuestion(sessionId?: string): Promise<void> {
    const loop = await this.pausedLoop(sessionId, 'Which loop is your answer for?', 'answer');
    if (loop) await this.askAnswer(loop);
  }

  /** Asks for the answer to the loop's question and gives it; false when none was given (cancelled, or the loop went on meanwhile). */
  private async askAnswer(loop: RunningLoop<F>, needs = loop.progress.question): Promise<boolean> {
    if (!needs) return false;
    const text = (await this.deps.window.input(needs.question, 'Your answer: the next actor gets it as your words'))?.trim();
    if (!text || loop.progress.pausedAfter === null) return false;
    await this.answer(text, loop.sessionId);
    return true;
  }

  /** The loop of this session that waits for the user (for an answer, with `answer`), or the only one; asks when several wait. */
  private async pausedLoop(sessionId: string | undefined, question: string, waitingFor: 'review' | 'answer' = 'review'): Promise<RunningLoop<F> | undefined> {
    const waits = (loop: RunningLoop<F>) => (waitingFor === 'answer' ? loop.progress.question !== null : loop.progress.pausedAfter !== null);
    const paused = this.runningLoops().filter((loop) => waits(loop) && (sessionId === undefined || loop.sessionId === sessionId));
    const loop =
      paused.length <= 1
        ? paused[0]
        : await this.deps.window.pick(
            paused.map((candidate) => ({ label: candidate.folder.name, description: `after iteration ${candidate.progress.pausedAfter}`, value: candidate })),
            question,
          );
    if (!loop && paused.length === 0) void this.deps.window.showInfo(`No Codeloops loop is waiting for your ${waitingFor}.`);
    return loop;
  }

  private handle(folder: F, event: RunEvent): void {
    const loop = this.deps.registry.loopIn(folder);
    if (loop) this.follow(loop, event);
    // A refusal is reported once, when the loop ends, in the editor's own words.
    if (event.type !== 'run_refused') logEvent(this.deps.log, event, { showAgentText: this.deps.showAgentText() });
    this.deps.registry.fire({ folder, kind: 'loop', sessionId: loop?.sessionId, event });
  }

  /** What an event tells of its loop: its session, its guards and spend, where it is; a pause asks for the review. */
  private follow(loop: RunningLoop<F>, event: RunEvent): void {
    if (event.type === 'run_started') {
      loop.sessionId = event.session_id;
      loop.guards = event.guards ?? null;
    }
    if (event.type === 'spend') loop.spend = event;
    loop.progress = advanceLoop(loop.progress, event);
    if (event.type === 'review_paused') {
      if (event.needs_input) this.askForAnswer(loop, event.iteration, event.needs_input);
      else this.offerReview(loop, event.iteration);
    }
    // Once a wait; the status bar follows each refusal's new time.
    if (event.type === 'agent_waiting' && beginsWait(event)) tellAgentWaiting(this.deps.window, loop.folder.name, event, () => loop.process.interrupt());
  }

  /**
   * The loop waits for the user's review: a notification says so and offers to go on,
   * to stop, or to look at the changes first. It takes no focus: the user reviews in
   * their own time, and the status bar keeps saying that the loop waits.
   */
  private offerReview(loop: RunningLoop<F>, iteration: number): void {
    const [go, stop, look] = ['Continue', 'Stop', 'Show Changes'];
    const ask = (): void =>
      void this.deps.window
        .showInfo(
          `Codeloops in ${loop.folder.name} is waiting for your review of iteration ${iteration}: comment, reject hunks, then continue.`,
          go,
          look,
          stop,
        )
        .then((choice) => {
          if (loop.progress.pausedAfter !== iteration) return; // already answered elsewhere (the viewer, the status bar)
          if (choice === go) void this.resumeAfterReview('continue', loop.sessionId);
          else if (choice === stop) void this.resumeAfterReview('stop', loop.sessionId);
          else if (choice === look && loop.sessionId) {
            void this.deps.commands.execute(COMMANDS.showIterationChanges, { kind: 'iteration', sessionId: loop.sessionId, number: iteration });
            ask(); // the question stays until it is answered
          }
        });
    ask();
  }

  /**
   * The loop needs the user (`needs_input`): the notification shows the question, and
   * Answer opens a box for the answer, which goes to the next actor as the user's
   * words. Like a review, it takes no focus and stays until answered.
   */
  private askForAnswer(loop: RunningLoop<F>, iteration: number, needs: NeedsInput): void {
    const [answer, look, stop] = ['Answer…', 'Show Changes', 'Stop'];
    const ask = (): void =>
      void this.deps.window
        .showWarning(`Codeloops in ${loop.folder.name} needs you (asked by the ${needs.from}): ${needs.question}`, answer, look, stop)
        .then(async (choice) => {
          if (loop.progress.pausedAfter !== iteration) return; // already answered elsewhere (the viewer, the status bar)
          if (choice === stop) return void this.resumeAfterReview('stop', loop.sessionId);
          if (choice === answer) {
            if (await this.askAnswer(loop, needs)) return;
          } else if (choice === look) {
            if (loop.sessionId)
              void this.deps.commands.execute(COMMANDS.showIterationChanges, { kind: 'iteration', sessionId: loop.sessionId, number: iteration });
          } else return; // dismissed: the status bar still says the loop waits
          if (loop.progress.pausedAfter === iteration) ask(); // the question stays until it is answered
        });
    ask();
  }

  /** Stops this controller's loops (the registry stops every loop of the window when the window closes). */
  dispose(): void {
    for (const loop of this.runningLoops()) loop.process.interrupt();
  }
}

/**
 * What the loop's agents have cost so far, against its cap when it has one and the
 * forecast's p90 when one is known: `$0.42 of $5.00 (p90 $2.43)`.
 */
export function spendText(loop: Pick<RunningLoop, 'spend' | 'guards'> & { forecast?: Forecast | null }): string | undefined {
  const cost = loop.spend?.total_cost_usd ?? null;
  const cap = loop.guards?.max_cost_usd ?? null;
  const p90 = loop.forecast?.cost_usd.p90 ?? null;
  if (cost === null && cap === null && p90 === null) return undefined;
  const estimated = cost !== null && loop.spend?.cost_estimated ? '≈' : '';
  return `${estimated}$${(cost ?? 0).toFixed(2)}${cap === null ? '' : ` of $${cap.toFixed(2)}`}${p90 === null ? '' : ` (p90 $${p90.toFixed(2)})`}`;
}

export function bundledCliPath(extensionPath: string): string {
  return path.join(extensionPath, 'dist', 'cli.js');
}
