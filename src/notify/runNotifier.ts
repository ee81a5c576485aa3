import path from 'node:path';
import type { NotifySettings } from '../config/runSettings.js';
import type { NotifyEvent } from '../sessionFormat/notifications.js';
import { beginsWait, type RunEvent } from '../sessionFormat/runEvents.js';
import { notify, type NotifyFailure } from './notify.js';

/**
 * Follows a loop's run events and sends `[notify]`'s word for those a user asked for:
 * `needs_input` when the loop asks its question, `waiting` when it waits out an agent's
 * usage limit or an outage, `finished` at `run_finished`. What
 * fails is reported through `onFailure` (the CLI's stderr); `settled` waits for what
 * is under way, in order, each bounded by the notify timeout, so that a process can end after.
 */
export class RunNotifier {
  /** The last send: each waits for the one before, so a question's word never arrives after the end's. */
  private last: Promise<void> = Promise.resolve();
  private sessionId: string | null = null;

  constructor(
    private readonly settings: NotifySettings | null,
    /** The repository's top folder: its name is the `project` sent. */
    repositoryRoot: string,
    private readonly onFailure: (failure: NotifyFailure) => void,
    private readonly project = path.basename(repositoryRoot),
  ) {}

  /** A run event as the loop reports it; of one loop among several (candidates), with its session. */
  observe(event: RunEvent, sessionId?: string): void {
    if (!this.settings) return;
    if (event.type === 'run_started') this.sessionId = event.session_id;
    const notice = this.noticeOf(event, sessionId ?? this.sessionId);
    if (notice) this.send(notice);
  }

  /** Sends an event of the loop's surroundings (a queue's end, a wait the loop does not report as a run event), after those before it. */
  send(event: NotifyEvent): void {
    this.last = this.last
      .then(async () => (await notify(this.settings, event)).forEach((failure) => this.onFailure(failure)))
      // A log that cannot be written loses a warning, never the word after it or the loop's end.
      .catch(() => undefined);
  }

  /** Once everything sent so far has arrived or been given up (each within the notify timeout). */
  settled(): Promise<void> {
    return this.last;
  }

  private noticeOf(event: RunEvent, sessionId: string | null): NotifyEvent | null {
    const { project } = this;
    if (event.type === 'needs_input' && sessionId) return { event: 'needs_input', session_id: sessionId, project, question: event.question };
    if (event.type === 'run_finished') return { event: 'finished', session_id: event.session_id, project, outcome: event.status, summary: event.summary };
    // Once a wait, not at every refusal within it (a quota retried every few seconds).
    if (event.type === 'agent_waiting' && beginsWait(event) && sessionId)
      return { event: 'waiting', session_id: sessionId, project, agent: event.agent, reason: event.reason, until: event.until };
    return null;
  }
}
