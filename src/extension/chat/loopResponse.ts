import { describeEvent, oneLine } from '../../sessionFormat/eventWording.js';
import type { Forecast } from '../../sessionFormat/forecast.js';
import type { LoopGuards, RunEvent, Spend } from '../../sessionFormat/runEvents.js';
import { COMMANDS } from '../ids.js';
import type { LoopProcessEnd } from '../runner/loopProcess.js';
import { runnerCrashedText } from '../runs/loopEndReport.js';
import { spendText } from '../runs/runController.js';
import { linesMarkdown, markdownText } from './chatMarkdown.js';
import type { ChatOutcomeMetadata, ChatStream } from './chatPorts.js';

/**
 * One loop told in a chat response as it runs: each run event in the words the log
 * and the CLI use, the agents' steps as progress, the cost after each iteration, and
 * buttons where the user can act: open the viewer, interrupt, show an iteration's
 * changes.
 */
export class LoopResponse {
  private sessionId: string | undefined;
  private guards: LoopGuards | null = null;
  private spend: Spend | null = null;
  private forecast: Forecast | null = null;

  constructor(
    private readonly stream: ChatStream,
    forecast?: Promise<Forecast | undefined>,
  ) {
    void forecast?.then((known) => (this.forecast = known ?? null));
  }

  event(event: RunEvent): void {
    const lines = describeEvent(event, { showAgentText: false });
    switch (event.type) {
      case 'run_started':
        this.sessionId = event.session_id;
        this.guards = event.guards ?? null;
        this.stream.markdown(linesMarkdown(lines));
        this.stream.button({ command: COMMANDS.openViewer, title: 'Open Viewer', arguments: [event.session_id] });
        this.stream.button({ command: COMMANDS.interrupt, title: 'Interrupt', arguments: [{ kind: 'session', id: event.session_id }] });
        return;
      case 'phase':
      case 'agent_event':
        // The agents' steps come and go: the response keeps what they did, not each tool call.
        if (lines.length > 0) this.stream.progress(oneLine(lines));
        return;
      case 'spend':
        this.spend = event;
        return;
      case 'iteration_finished':
        this.iterationFinished(event.iteration);
        return;
      default:
        if (lines.length > 0) this.stream.markdown(linesMarkdown(lines));
    }
  }

  /** The cost so far, and the button that shows what the iteration changed. */
  private iterationFinished(iteration: number): void {
    const cost = spendText({ spend: this.spend, guards: this.guards, forecast: this.forecast });
    if (cost) this.stream.markdown(`Cost so far: ${markdownText(cost)}  \n`);
    if (this.sessionId)
      this.stream.button({
        command: COMMANDS.showIterationChanges,
        title: `Show Changes of Iteration ${iteration}`,
        arguments: [{ kind: 'iteration', sessionId: this.sessionId, number: iteration }],
      });
  }

  /** How the loop ended, for the follow-ups; a runner that could not start or died says why here too. */
  end(command: string, end: LoopProcessEnd | undefined): ChatOutcomeMetadata {
    if (end?.kind === 'crashed') this.stream.markdown(`**${markdownText(runnerCrashedText(end.message))}**\n`);
    // A refusal was streamed as its run_refused event.
    if (end?.kind !== 'finished') return { command, sessionId: this.sessionId };
    const { summary } = end;
    return { command, sessionId: summary.session_id, status: summary.status };
  }
}
