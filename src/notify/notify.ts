import { spawn } from 'node:child_process';
import type { NotifySettings } from '../config/runSettings.js';
import { setLongTimeout, timerDelay } from '../process/longTimer.js';
import { superviseGroup } from '../process/processGroup.js';
import { fillPlaceholders, notificationPayload, type NotificationPayload, type NotifyEvent } from '../sessionFormat/notifications.js';
import { truncateMiddle } from '../text/truncate.js';

/** Where a notification went that did not arrive, and why: for the log, never for the loop. */
export interface NotifyFailure {
  channel: 'command' | 'webhook';
  message: string;
}

/**
 * Sends one event where `[notify]` says (its program, its webhook, both at once), if
 * `on` names it. Never throws and never takes longer than the timeout: a program or a
 * webhook that fails or hangs is given up and reported, and whatever called (a loop's
 * end, a queue) goes on as if it had been told.
 */
export async function notify(settings: NotifySettings | null, event: NotifyEvent): Promise<NotifyFailure[]> {
  if (!settings || !settings.on.includes(event.event)) return [];
  const payload = notificationPayload(event, settings.include);
  const sends: Promise<NotifyFailure | null>[] = [];
  if (settings.command) sends.push(runNotifyCommand(settings.command, payload, settings.timeoutSecs));
  if (settings.webhook) sends.push(postWebhook(settings.webhook, payload, settings.timeoutSecs));
  const failures = await Promise.all(sends);
  return failures.filter((failure): failure is NotifyFailure => failure !== null);
}

/** The program, no shell, one filled placeholder one argument; its output ignored but for the end of its stderr, for the log. */
function runNotifyCommand(command: readonly string[], payload: NotificationPayload, timeoutSecs: number): Promise<NotifyFailure | null> {
  const [program, ...args] = fillPlaceholders(command, payload);
  const failed = (message: string): NotifyFailure => ({ channel: 'command', message: `${command[0]} ${message}` });
  return new Promise((resolve) => {
    const child = spawn(program!, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: process.platform !== 'win32', windowsHide: true });
    const group = superviseGroup(child, { timeoutSecs });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
    // Given up at the timeout without waiting for the group to end: the loop's end is not held by a stuck program.
    const cancelTimer = setLongTimeout(() => resolve(failed(`did not finish within ${timeoutSecs} s`)), timeoutSecs * 1000);
    const settle = (failure: NotifyFailure | null): void => {
      cancelTimer();
      group.release();
      resolve(failure);
    };
    child.on('error', (error) => settle(failed(`could not start: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) return settle(null);
      const said = stderr.trim() ? `: ${truncateMiddle(stderr.trim(), 300)}` : '';
      settle(failed(`${signal ? `was stopped by ${signal}` : `exited with code ${code}`}${said}`));
    });
  });
}

/** A JSON POST of what may be sent; anything but a 2xx answer within the timeout is a failure. */
async function postWebhook(url: string, payload: NotificationPayload, timeoutSecs: number): Promise<NotifyFailure | null> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'codeloops' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(timerDelay(timeoutSecs * 1000)),
    });
    // Read to the end so the connection is let go; the body means nothing to us.
    await response.arrayBuffer().catch(() => undefined);
    return response.ok ? null : { channel: 'webhook', message: `${webhookName(url)} answered HTTP ${response.status}` };
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    const why =
      (error as Error).name === 'TimeoutError'
        ? `did not answer within ${timeoutSecs} s`
        : `could not be reached: ${cause?.message ?? (error as Error).message}`;
    return { channel: 'webhook', message: `${webhookName(url)} ${why}` };
  }
}

/** The webhook's origin only: its path often carries the token that lets anyone post to it. */
function webhookName(url: string): string {
  try {
    return `the webhook at ${new URL(url).origin}`;
  } catch {
    return 'the webhook';
  }
}
