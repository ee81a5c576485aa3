import * as z from '../../sessionFormat/zod.js';
import { clip, summarizeToolInput } from '../agentEventHelpers.js';
import type { AgentAdapter, StreamParser } from '../agentAdapter.js';
import { jsonLineParser } from '../jsonLineParser.js';
import type { KnownEvents } from '../streamDrift.js';
import { agentLimit, limitKindOfStatus, NETWORK_FAILURE, nextMidnight, parseRetryDelay, type AgentLimit } from '../agentLimits.js';

/**
 * Gemini CLI (`--output-format stream-json`). Headless because stdin is not a
 * terminal; the prompt goes on stdin. Without yolo, write and shell tools are
 * denied in headless mode, and an untrusted folder silently downgrades yolo.
 */

const geminiLine = z.looseObject({
  type: z.string(),
  session_id: z.optional(z.string()),
  sessionId: z.optional(z.string()),
  role: z.optional(z.string()),
  content: z.optional(z.string()),
  delta: z.optional(z.boolean()),
  tool_name: z.optional(z.string()),
  tool_id: z.optional(z.string()),
  parameters: z.optional(z.unknown()),
  status: z.optional(z.string()),
  output: z.optional(z.unknown()),
  error: z.optional(z.unknown()),
  message: z.optional(z.string()),
  severity: z.optional(z.string()),
  stats: z.optional(
    z.looseObject({
      input_tokens: z.optional(z.number()),
      output_tokens: z.optional(z.number()),
      cached: z.optional(z.number()),
    }),
  ),
});

/** `--output-format stream-json` as 0.61.0 prints it. */
const KNOWN_EVENTS: KnownEvents = {
  init: ['type', 'timestamp', 'session_id', 'model'],
  message: ['type', 'timestamp', 'role', 'content', 'delta'],
  tool_use: ['type', 'timestamp', 'tool_name', 'tool_id', 'parameters'],
  tool_result: ['type', 'timestamp', 'tool_id', 'status', 'output', 'error'],
  error: ['type', 'timestamp', 'severity', 'message'],
  result: ['type', 'timestamp', 'status', 'stats', 'error'],
};

/**
 * Model switches in one run past which Gemini CLI is taken to be stuck: in plan mode
 * (the critic's) it falls back between models without end when a quota refuses each
 * (docs/agent-limits.md), saying so only in its debug log, and never ends by itself.
 */
export const GEMINI_FALLBACKS_ALLOWED = 5;

export const geminiAdapter: AgentAdapter = {
  kind: 'gemini',
  displayName: 'Gemini CLI',
  defaultBinary: 'gemini',
  installHint: 'npm install -g @google/gemini-cli',
  permissionFlags: [
    '--approval-mode',
    '--yolo',
    '-y',
    '--sandbox',
    '-s',
    '--sandbox-image',
    '--allowed-tools',
    '--allowed-mcp-server-names',
    '--include-directories',
    '--extensions',
    '-e',
    '--policy',
  ],
  canResume: true,
  testedVersions: ['0.61.0'],
  costCoversAgentSession: false,
  diagnose: () => null,

  invocation(request) {
    const args = ['--output-format', 'stream-json', '--skip-trust'];
    args.push('--approval-mode', request.role === 'actor' ? 'yolo' : 'plan');
    if (request.model) args.push('--model', request.model);
    // By id, never `latest`: the newest session in the folder may be the critic's.
    if (request.resumeSessionId) args.push('--resume', request.resumeSessionId);
    // Its debug log, where the runner sees it stuck switching models (`readLogLine`).
    return { args, stdin: request.prompt, env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' }, logFileEnv: 'GEMINI_DEBUG_LOG_FILE' };
  },

  createParser(): StreamParser {
    let message = '';
    let result: { isError: boolean; detail: string } | undefined;
    let fallbacks = 0;
    return jsonLineParser({
      known: KNOWN_EVENTS,
      schema: geminiLine,
      read(event, events) {
        switch (event.type) {
          case 'init': {
            const id = event.session_id ?? event.sessionId;
            if (id) events.push({ kind: 'session', agentSessionId: id });
            break;
          }
          case 'message':
            if (event.role === 'assistant' && event.content) {
              message = event.delta ? message + event.content : event.content;
              events.push({ kind: 'text', text: event.content, delta: event.delta === true });
            }
            break;
          case 'tool_use':
            // What it says after its tools run is a new message: the final one is the last, not all of them joined.
            message = '';
            events.push({ kind: 'tool_use', id: event.tool_id, name: event.tool_name ?? 'tool', summary: summarizeToolInput(event.parameters) });
            break;
          case 'tool_result':
            events.push({
              kind: 'tool_result',
              id: event.tool_id,
              isError: event.status === 'error',
              summary: clip(typeof event.output === 'string' ? event.output : JSON.stringify(event.output ?? event.error ?? '')),
            });
            break;
          case 'error':
            // Warnings too (a loop detected, a retry): said, never a failure by themselves.
            events.push({
              kind: 'error',
              message: `${event.severity === 'warning' ? 'warning: ' : ''}${event.message ?? JSON.stringify(event.error ?? 'error')}`,
            });
            break;
          case 'result': {
            events.push({
              kind: 'usage',
              total: { inputTokens: event.stats?.input_tokens, outputTokens: event.stats?.output_tokens, cacheReadTokens: event.stats?.cached },
            });
            const isError = event.status !== 'success';
            result = { isError, detail: isError ? errorText(event.error) || (event.status ?? 'no status') : '' };
            events.push({ kind: 'result', text: message, isError, detail: event.status });
            break;
          }
        }
      },
      finish(exitCode) {
        const verdict = { finalText: message || null };
        if (!result)
          return {
            ...verdict,
            succeeded: false,
            failureReason: `Gemini CLI exited (code ${exitCode ?? 'none'}) without a result event: its output ended before its final event`,
          };
        if (result.isError) {
          return {
            ...verdict,
            succeeded: false,
            failureReason: `Gemini CLI reported an error: ${clip(result.detail)}`,
            limit: geminiLimit(result.detail, Date.now()),
          };
        }
        return { ...verdict, succeeded: true, failureReason: null };
      },
      readLogLine(line) {
        if (!/Model fallback activated: switching from/.test(line) || ++fallbacks <= GEMINI_FALLBACKS_ALLOWED) return null;
        return agentLimit(
          'usage_limit',
          `Gemini CLI switched models ${fallbacks} times in one run: a quota refused each, and in plan mode it retries without end`,
        );
      },
    });
  },
};

/** `{type, message}` as Gemini CLI reports a failed turn, or whatever else it sent. */
function errorText(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') return error.message;
  return error === undefined ? '' : JSON.stringify(error);
}

/** Where the day of the Gemini API's per-day quotas ends: they reset at midnight Pacific time (ai.google.dev/gemini-api/docs/rate-limits). */
const QUOTA_DAY_ZONE = 'America/Los_Angeles';

/**
 * Gemini CLI's failed turn (its `result` event's `error.message`) as a limit
 * (0.61.0; docs/agent-limits.md): a per-day quota, in its own words (`You have
 * exhausted your daily quota on this model.`, no delay), is a usage limit until the
 * next midnight Pacific time; a model out of capacity is an overloaded API; another
 * quota it gave up on (`You exceeded your current quota … Please retry in 3.5s.`,
 * `RESOURCE_EXHAUSTED`) is a usage limit, until the delay it states; else the API's
 * status in the error it quotes, any other 429 a rate limit, or a network that failed.
 */
export function geminiLimit(message: string, now: number): AgentLimit | null {
  if (/exhausted your daily quota/i.test(message)) return agentLimit('usage_limit', message, nextMidnight(QUOTA_DAY_ZONE, now));
  // Its own test for a model out of capacity (`classifyGoogleError`).
  if (/exhausted your capacity|capacity exceeded|MODEL_CAPACITY_EXHAUSTED/i.test(message))
    return agentLimit('overloaded', message, parseRetryDelay(message, now));
  if (/exceeded your current quota|RESOURCE_EXHAUSTED|Quota exceeded/i.test(message)) return agentLimit('usage_limit', message, parseRetryDelay(message, now));
  if (/API key not valid|API_KEY_INVALID|UNAUTHENTICATED|PERMISSION_DENIED/.test(message)) return agentLimit('auth', message);
  const status = /"code":\s*(\d{3})|\bstatus:? (\d{3})\b|\[API Error: (\d{3})\b/.exec(message);
  const kind = status ? limitKindOfStatus(Number(status[1] ?? status[2] ?? status[3])) : null;
  if (kind) return agentLimit(kind, message);
  // What it adds to every 429 it reports (`parseAndFormatApiError`): a rate limit, whatever the API said.
  if (/Please wait and try again later\. To increase your limits/.test(message)) return agentLimit('rate_limited', message, parseRetryDelay(message, now));
  if (/\bUNAVAILABLE\b|overloaded/i.test(message)) return agentLimit('overloaded', message);
  if (NETWORK_FAILURE.test(message)) return agentLimit('outage', message);
  return null;
}
