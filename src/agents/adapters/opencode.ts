import * as z from '../../sessionFormat/zod.js';
import type { AgentEvent, Usage } from '../../sessionFormat/agentEvents.js';
import { addUsage, clip, summarizeToolInput } from '../agentEventHelpers.js';
import type { AgentAdapter, StreamParser } from '../agentAdapter.js';
import { jsonLineParser } from '../jsonLineParser.js';
import type { KnownEvents } from '../streamDrift.js';
import { agentLimit, limitKindOfStatus, NETWORK_FAILURE, parseRetryAfter, type AgentLimit } from '../agentLimits.js';

/**
 * OpenCode (`opencode run --format json`), the prompt on stdin (arguments after
 * `--` are re-quoted on the way to the model). Events carry a `part`; cost and
 * tokens come per step and are summed. 1.18 has no `done` event: a run ends with
 * a `step_finish` and exit 0.
 */

const tokens = z.optional(
  z.looseObject({
    input: z.optional(z.number()),
    output: z.optional(z.number()),
    reasoning: z.optional(z.number()),
    cache: z.optional(z.looseObject({ read: z.optional(z.number()), write: z.optional(z.number()) })),
  }),
);

const part = z.looseObject({
  text: z.optional(z.string()),
  tool: z.optional(z.string()),
  callID: z.optional(z.string()),
  state: z.optional(
    z.looseObject({
      status: z.optional(z.string()),
      input: z.optional(z.unknown()),
      output: z.optional(z.unknown()),
      error: z.optional(z.unknown()),
      title: z.optional(z.string()),
    }),
  ),
  cost: z.optional(z.number()),
  tokens,
  /** On `step_finish`: why the step ended; `tool-calls` means another step follows. */
  reason: z.optional(z.string()),
});

const opencodeLine = z.looseObject({
  type: z.string(),
  sessionID: z.optional(z.string()),
  part: z.optional(part),
  error: z.optional(z.unknown()),
});

/** `run --format json` as 1.18.33 prints it: every event is `{type, timestamp, sessionID}` and a `part` (or an `error`). */
const KNOWN_EVENTS: KnownEvents = {
  step_start: ['type', 'timestamp', 'sessionID', 'part'],
  step_finish: ['type', 'timestamp', 'sessionID', 'part'],
  text: ['type', 'timestamp', 'sessionID', 'part'],
  reasoning: ['type', 'timestamp', 'sessionID', 'part'],
  tool_use: ['type', 'timestamp', 'sessionID', 'part'],
  error: ['type', 'timestamp', 'sessionID', 'error'],
};

export const opencodeAdapter: AgentAdapter = {
  kind: 'opencode',
  displayName: 'OpenCode',
  defaultBinary: 'opencode',
  installHint: 'npm install -g opencode-ai',
  // --agent picks the permissions (the critic runs as `plan`); --attach and --dir run elsewhere.
  permissionFlags: ['--auto', '--dangerously-skip-permissions', '--agent', '--attach', '--dir'],
  canResume: true,
  testedVersions: ['1.18.33'],
  costCoversAgentSession: false,
  diagnose: () => null,

  invocation(request) {
    const args = ['run', '--format', 'json'];
    if (request.model) args.push('--model', request.model);
    if (request.resumeSessionId) args.push('--session', request.resumeSessionId);
    // The read-only built-in agent for judging; the default agent for building.
    if (request.role === 'critic') args.push('--agent', 'plan');
    // `run` rejects permission prompts it cannot show, so everything is allowed up
    // front. The plan agent alone does not stop edits once they are allowed: the
    // critic gets edit denied, which removes the edit and write tools altogether
    // (unless the project's opencode.json allows edits: that wins, and the runner's
    // check after the review reverts whatever the critic changed).
    const permission = request.role === 'actor' ? { '*': 'allow' } : { '*': 'allow', edit: 'deny' };
    const env: Record<string, string> = { OPENCODE_PERMISSION: JSON.stringify(permission) };
    return { args, stdin: request.prompt, env };
  },

  createParser(): StreamParser {
    let usage: Usage = {};
    let lastText = '';
    let steps = 0;
    let error: string | null = null;
    let limit: AgentLimit | null = null;
    let sessionSeen = false;
    let lastStepReason: string | undefined;
    return jsonLineParser({
      known: KNOWN_EVENTS,
      schema: opencodeLine,
      read(event, events) {
        if (event.sessionID && !sessionSeen) {
          sessionSeen = true;
          events.push({ kind: 'session', agentSessionId: event.sessionID });
        }
        switch (event.type) {
          case 'text':
            if (event.part?.text) {
              lastText = event.part.text;
              events.push({ kind: 'text', text: event.part.text });
            }
            break;
          case 'tool_use':
            events.push(...toolEvents(event.part));
            break;
          case 'step_finish':
            steps += 1;
            lastStepReason = event.part?.reason;
            usage = addUsage(usage, stepUsage(event.part));
            events.push({ kind: 'usage', total: usage });
            break;
          case 'error': {
            error = describeError(event.error);
            limit = openCodeLimit(event.error, Date.now());
            events.push({ kind: 'error', message: error });
            break;
          }
        }
      },
      finish(exitCode) {
        const verdict = { finalText: lastText || null };
        if (error) return { ...verdict, succeeded: false, failureReason: `OpenCode reported an error: ${error}`, limit };
        if (steps === 0) {
          return { ...verdict, succeeded: false, failureReason: `OpenCode exited (code ${exitCode ?? 'none'}) without finishing a step` };
        }
        if (lastStepReason === 'tool-calls') {
          // Its last step called tools, so another step was due: the output ended before the turn's final step.
          return {
            ...verdict,
            succeeded: false,
            failureReason: `OpenCode exited (code ${exitCode ?? 'none'}) before its final step: the last one ended in tool calls`,
          };
        }
        if (exitCode !== 0) return { ...verdict, succeeded: false, failureReason: `OpenCode exited with code ${exitCode ?? 'none'}` };
        return { ...verdict, succeeded: true, failureReason: null };
      },
    });
  },
};

type Part = z.infer<typeof part>;

/** A tool call, and its result when the part says the call has ended. */
function toolEvents(part: Part | undefined): AgentEvent[] {
  const state = part?.state;
  const events: AgentEvent[] = [{ kind: 'tool_use', id: part?.callID, name: part?.tool ?? 'tool', summary: summarizeToolInput(state?.input) }];
  if (state?.status === 'completed' || state?.status === 'error') {
    const isError = state.status === 'error';
    const detail = isError ? state.error : state.output;
    events.push({ kind: 'tool_result', id: part?.callID, isError, summary: clip(typeof detail === 'string' ? detail : JSON.stringify(detail ?? '')) });
  }
  return events;
}

/** One step's tokens and cost; reasoning counts as output. */
function stepUsage(part: Part | undefined): Usage {
  const t = part?.tokens;
  return {
    inputTokens: t?.input,
    outputTokens: t === undefined ? undefined : (t.output ?? 0) + (t.reasoning ?? 0),
    cacheReadTokens: t?.cache?.read,
    cacheWriteTokens: t?.cache?.write,
    costUsd: part?.cost,
  };
}

function describeError(error: unknown): string {
  if (error && typeof error === 'object') {
    const record = error as { name?: unknown; message?: unknown; data?: { message?: unknown } };
    const message = record.data?.message ?? record.message;
    if (typeof message === 'string') return typeof record.name === 'string' ? `${record.name}: ${message}` : message;
  }
  return typeof error === 'string' ? error : JSON.stringify(error ?? 'unknown error');
}

/**
 * OpenCode's `error` event as a limit (1.18.33; docs/agent-limits.md): a provider's
 * `APIError` carries the HTTP status and headers (`retry-after`), a
 * `ProviderAuthError` a login that failed. It retries 429 and 5xx by itself, without
 * end, so those reach here only from a provider that says they cannot be retried.
 */
export function openCodeLimit(error: unknown, now: number): AgentLimit | null {
  if (!error || typeof error !== 'object') return null;
  const record = error as { name?: unknown; data?: { message?: unknown; statusCode?: unknown; responseHeaders?: unknown } };
  const message = typeof record.data?.message === 'string' ? record.data.message : describeError(error);
  if (record.name === 'ProviderAuthError') return agentLimit('auth', message);
  const status = typeof record.data?.statusCode === 'number' ? record.data.statusCode : null;
  const kind = status === null ? null : limitKindOfStatus(status);
  if (kind) {
    const headers = (record.data?.responseHeaders ?? {}) as Record<string, unknown>;
    const retryAfter = typeof headers['retry-after'] === 'string' ? headers['retry-after'] : undefined;
    return agentLimit(kind, message, kind === 'auth' ? null : parseRetryAfter(retryAfter, now));
  }
  return NETWORK_FAILURE.test(message) ? agentLimit('outage', message) : null;
}
