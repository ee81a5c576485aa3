import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
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
  if (settings.webhook) sends.push(postWebhook(settings.webhook, settings.webhookHeaders, payload, settings.timeoutSecs));
  const failures = await Promise.all(sends);
  return failures.filter((failure): failure is NotifyFailure => failure !== null);
}

/**
 * One argument of the program at most this many characters (a question or a summary can be long):
 * at four bytes a character still under Linux's limit on one argument (128 KiB).
 */
const MAX_ARGUMENT_CHARS = 30_000;

/** A filled argument as a program can take it: no NUL (no argument can hold one), not longer than one may be. */
function programArgument(text: string): string {
  return truncateMiddle(text.replaceAll('\0', ''), MAX_ARGUMENT_CHARS);
}

/** The program, no shell, one filled placeholder one argument; its output ignored but for the end of its stderr, for the log. */
function runNotifyCommand(command: readonly string[], payload: NotificationPayload, timeoutSecs: number): Promise<NotifyFailure | null> {
  const [program, ...args] = fillPlaceholders(command, payload).map(programArgument);
  const failed = (message: string): NotifyFailure => ({ channel: 'command', message: `${command[0]} ${message}` });
  return new Promise((resolve) => {
    let child: ChildProcessByStdio<null, null, Readable>;
    try {
      child = spawn(program!, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: process.platform !== 'win32', windowsHide: true });
    } catch (error) {
      return resolve(failed(`could not start: ${(error as Error).message}`));
    }
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

/** A JSON POST of what may be sent, with the config's headers; anything but a 2xx answer within the timeout is a failure. */
async function postWebhook(
  url: string,
  headers: Readonly<Record<string, string>>,
  payload: NotificationPayload,
  timeoutSecs: number,
): Promise<NotifyFailure | null> {
  const failed = (why: string): NotifyFailure => ({ channel: 'webhook', message: `${webhookName(url)} ${withoutSecrets(why, url, headers)}` });
  try {
    const sent = new Headers(headers);
    sent.set('content-type', 'application/json');
    if (!sent.has('user-agent')) sent.set('user-agent', 'codeloops');
    const response = await fetch(url, {
      method: 'POST',
      headers: sent,
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(timerDelay(timeoutSecs * 1000)),
      // Not followed: a 307 would send the body and the headers (a token) on to any address it names.
      redirect: 'manual',
    });
    // Read to the end so the connection is let go; the body means nothing to us.
    await response.arrayBuffer().catch(() => undefined);
    if (response.status >= 300 && response.status < 400)
      return failed(`answered HTTP ${response.status}, a redirect: not followed (give the address it leads to)`);
    return response.ok ? null : failed(`answered HTTP ${response.status}`);
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause;
    return failed(
      (error as Error).name === 'TimeoutError'
        ? `did not answer within ${timeoutSecs} s`
        : `could not be reached: ${cause?.message ?? (error as Error).message}`,
    );
  }
}

/** The webhook's origin only (scheme, host, port): its path and query often carry the token that lets anyone post to it. */
function webhookName(url: string): string {
  const origin = originOf(url);
  return origin ? `the webhook at ${origin}` : 'the webhook';
}

function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * An error's words without the webhook's secrets, should they quote them (fetch quotes
 * a URL it refuses, and a header value): the address beyond its origin, its login, the
 * headers' values. The config refuses what fetch would refuse; this is the second lock.
 */
function withoutSecrets(text: string, url: string, headers: Readonly<Record<string, string>>): string {
  const secrets = [url, ...Object.values(headers).filter((value) => value.trim().length >= 4)];
  try {
    const parsed = new URL(url);
    secrets.push(parsed.href, parsed.username, parsed.password, `${parsed.pathname}${parsed.search}${parsed.hash}`);
  } catch {
    // not a URL: only its text is known
  }
  const known = secrets.filter((secret) => secret.length > 1).sort((a, b) => b.length - a.length);
  return known.reduce((said, secret) => said.replaceAll(secret, '…'), text);
}
