import type { Outcome } from './sessionLines.js';
import { agentWaitingText, type AgentWaiting } from './eventWording.js';

/**
 * "Word when it needs you": what `[notify]` in the global config sends, to a program
 * (`command`) or a webhook (`webhook`). The events a user can ask for (`on`):
 * - `needs_input`: a loop waits for the user's answer (or, headless, ends for want of one);
 * - `finished`: a session ended, whatever its outcome;
 * - `waiting`: a loop waits for an agent's usage limit to reset;
 * - `queue_finished`: a queue ran all its tasks.
 * Prompts, diffs and agents' output are never sent; the critic's summary and the
 * question only when `include` names them.
 */
export const NOTIFY_EVENTS = ['needs_input', 'finished', 'waiting', 'queue_finished'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

/** What `include` may add to what is sent: the critic's summary, the question asked. */
export const NOTIFY_INCLUDES = ['summary', 'question'] as const;
export type NotifyInclude = (typeof NOTIFY_INCLUDES)[number];

/** `include` when the config says nothing: the question (the user cannot answer without it), never the summary. */
export const DEFAULT_NOTIFY_INCLUDE: readonly NotifyInclude[] = ['question'];

/** Every event unless `on` says otherwise. */
export const DEFAULT_NOTIFY_ON: readonly NotifyEventName[] = NOTIFY_EVENTS;

interface SessionNotice {
  session_id: string;
  /** The repository's folder name. */
  project: string;
}

/** Something a user asked to hear about, as the engine (or the queue) tells the notifier. */
export type NotifyEvent =
  | (SessionNotice & { event: 'needs_input'; question: string })
  | (SessionNotice & { event: 'finished'; outcome: Outcome; summary: string | null })
  | (SessionNotice & { event: 'waiting' } & AgentWaiting)
  | { event: 'queue_finished'; project: string; session_id: null; outcome: Outcome | null; summary: string | null };

/** The webhook's JSON body: always these four; `summary` and `question` only when `include` names them; a wait's agent, reason and end. */
export interface NotificationPayload {
  event: NotifyEventName;
  session_id: string | null;
  project: string;
  outcome: Outcome | null;
  summary?: string | null;
  question?: string | null;
  agent?: string;
  reason?: AgentWaiting['reason'];
  until?: string;
}

/** What is sent for an event: the fields every event has, and what `include` lets through. */
export function notificationPayload(event: NotifyEvent, include: readonly NotifyInclude[]): NotificationPayload {
  const payload: NotificationPayload = {
    event: event.event,
    session_id: event.session_id,
    project: event.project,
    outcome: 'outcome' in event ? event.outcome : null,
  };
  if (include.includes('summary') && 'summary' in event) payload.summary = event.summary;
  if (include.includes('question') && event.event === 'needs_input') payload.question = event.question;
  if (event.event === 'waiting') Object.assign(payload, { agent: event.agent, reason: event.reason, until: event.until });
  return payload;
}

/** The notification's title and one-line message, from what may be sent only. */
export function notificationText(payload: NotificationPayload): { title: string; message: string } {
  const where = `in ${payload.project}`;
  switch (payload.event) {
    case 'needs_input':
      return { title: `Codeloops needs you ${where}`, message: payload.question ?? 'A loop waits for your answer.' };
    case 'finished':
      return {
        title: `Codeloops ${OUTCOME_WORDS[payload.outcome ?? 'failed']} ${where}`,
        message: payload.summary ?? `Session ${payload.session_id ?? ''}`.trim(),
      };
    case 'waiting':
      return {
        title: `Codeloops is waiting ${where}`,
        message:
          payload.agent && payload.reason && payload.until
            ? agentWaitingText({ agent: payload.agent, reason: payload.reason, until: payload.until })
            : 'A loop waits for its agent.',
      };
    case 'queue_finished':
      return { title: `Codeloops queue finished ${where}`, message: payload.summary ?? 'Every task of the queue has run.' };
  }
}

const OUTCOME_WORDS: Readonly<Record<Outcome, string>> = {
  success: 'finished',
  failed: 'failed',
  interrupted: 'was interrupted',
  max_iterations_reached: 'stopped at the iteration limit',
};

/** What `command`'s arguments may name, each filled from what may be sent (`summary` and `question` empty unless included). */
export const NOTIFY_PLACEHOLDERS = ['title', 'message', 'event', 'session_id', 'project', 'outcome', 'summary', 'question'] as const;
type Placeholder = (typeof NOTIFY_PLACEHOLDERS)[number];

const PLACEHOLDER = /\{([a-z_]+)\}/g;

/** The placeholders an argument names that do not exist (a misspelt `{mesage}` is an error, not a literal). */
export function unknownPlaceholders(argument: string): string[] {
  return [...argument.matchAll(PLACEHOLDER)].map((match) => match[1]!).filter((name) => !(NOTIFY_PLACEHOLDERS as readonly string[]).includes(name));
}

/** The command's arguments with each placeholder filled: one argument stays one argument, whatever the text holds. */
export function fillPlaceholders(args: readonly string[], payload: NotificationPayload): string[] {
  const { title, message } = notificationText(payload);
  const values: Record<Placeholder, string> = {
    title,
    message,
    event: payload.event,
    session_id: payload.session_id ?? '',
    project: payload.project,
    outcome: payload.outcome ?? '',
    summary: payload.summary ?? '',
    question: payload.question ?? '',
  };
  return args.map((argument) => argument.replace(PLACEHOLDER, (whole, name: string) => (name in values ? values[name as Placeholder] : whole)));
}
