import * as z from '../../sessionFormat/zod.js';
import type { Usage } from '../../sessionFormat/agentEvents.js';
import { addUsage, clip, summarizeToolInput } from '../agentEventHelpers.js';
import type { AgentAdapter, InvocationRequest, StreamParser } from '../agentAdapter.js';
import { jsonLineParser } from '../jsonLineParser.js';
import { eventType, type KnownEvents } from '../streamDrift.js';
import { agentLimit, limitKindOfStatus, NETWORK_FAILURE, parseWallClock, type AgentLimit } from '../agentLimits.js';

/**
 * Claude Code (`claude -p --output-format stream-json --verbose`). The prompt goes
 * on stdin, which is then closed (`-p` waits forever on an open pipe).
 */

const block = z.looseObject({
  type: z.string(),
  text: z.optional(z.string()),
  id: z.optional(z.string()),
  name: z.optional(z.string()),
  input: z.optional(z.unknown()),
  tool_use_id: z.optional(z.string()),
  content: z.optional(z.unknown()),
  is_error: z.optional(z.boolean()),
});

const tokenUsage = z.looseObject({
  input_tokens: z.optional(z.number()),
  output_tokens: z.optional(z.number()),
  cache_creation_input_tokens: z.optional(z.number()),
  cache_read_input_tokens: z.optional(z.number()),
});

const claudeLine = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('system'), subtype: z.optional(z.string()), session_id: z.optional(z.string()) }),
  z.looseObject({
    type: z.literal('assistant'),
    session_id: z.optional(z.string()),
    message: z.looseObject({
      id: z.optional(z.string()),
      model: z.optional(z.string()),
      content: z.optional(z.union([z.array(block), z.string()])),
      usage: z.optional(tokenUsage),
    }),
  }),
  z.looseObject({
    type: z.literal('user'),
    message: z.looseObject({ content: z.optional(z.union([z.array(block), z.string()])) }),
  }),
  z.looseObject({
    type: z.literal('result'),
    subtype: z.optional(z.string()),
    is_error: z.optional(z.boolean()),
    result: z.optional(z.string()),
    session_id: z.optional(z.string()),
    total_cost_usd: z.optional(z.number()),
    usage: z.optional(tokenUsage),
    api_error_status: z.optional(z.nullable(z.number())),
    api_error: z.optional(z.nullable(z.string())),
  }),
  /** The account's usage limit as the API's `anthropic-ratelimit-unified-*` headers state it (subscription logins only). */
  z.looseObject({
    type: z.literal('rate_limit_event'),
    rate_limit_info: z.optional(z.looseObject({ status: z.optional(z.string()), resetsAt: z.optional(z.number()) })),
  }),
]);

type TokenUsage = z.infer<typeof tokenUsage>;

function usageOf(usage: TokenUsage | undefined): Usage {
  return {
    inputTokens: usage?.input_tokens,
    outputTokens: usage?.output_tokens,
    cacheReadTokens: usage?.cache_read_input_tokens,
    cacheWriteTokens: usage?.cache_creation_input_tokens,
  };
}

/** `--output-format stream-json --verbose` as 2.1.330 prints it; other `system` subtypes (hooks, status) vary and are ignored whole. */
const KNOWN_EVENTS: KnownEvents = {
  'system/init': [
    'type',
    'subtype',
    'uuid',
    'session_id',
    'cwd',
    'original_cwd',
    'additional_directories',
    'model',
    'tools',
    'mcp_servers',
    'permissionMode',
    'apiKeySource',
    'claude_code_version',
    'output_style',
    'agents',
    'skills',
    'plugins',
    'slash_commands',
    'terminal_slash_commands',
    'memory_paths',
    'capabilities',
    'analytics_disabled',
    'product_feedback_disabled',
    'served_by_anthropic',
    'fast_mode_state',
    'fast_mode_disabled_reason',
    'per_turn_effort_active',
    'ultrathink_available',
    'ultrathink_typed_raises',
    'messaging_socket_path',
    'view_mode',
  ],
  system: null,
  assistant: [
    'type',
    'uuid',
    'session_id',
    'timestamp',
    'message',
    'parent_tool_use_id',
    'request_id',
    // On the message Claude Code makes up when the API refused the turn.
    'error',
    'is_api_error_message',
    'api_error_status',
    'api_error',
    'api_error_params',
    'api_error_type',
  ],
  rate_limit_event: ['type', 'rate_limit_info', 'uuid', 'session_id'],
  user: ['type', 'uuid', 'session_id', 'timestamp', 'message', 'parent_tool_use_id', 'tool_use_result', 'tool_result_meta'],
  result: [
    'type',
    'subtype',
    'uuid',
    'session_id',
    'is_error',
    'result',
    'stop_reason',
    'terminal_reason',
    'api_error_status',
    'api_error',
    'api_error_type',
    'duration_ms',
    'duration_api_ms',
    'time_to_request_ms',
    'ttft_ms',
    'ttft_stream_ms',
    'first_content_frame_ms',
    'num_turns',
    'total_cost_usd',
    'usage',
    'modelUsage',
    'model_usage_since_last_result',
    'permission_denials',
    'safety_stops',
    'subagent_stats',
    'queued_turn_count',
    'result_index',
    'fast_mode_state',
    'fast_mode_disabled_reason',
  ],
};

/**
 * Tools taken from the critic: it judges, it does not edit. Shell commands stay, so
 * it can run the tests; whatever it changes anyway is reverted by the runner.
 */
export const CRITIC_DISALLOWED_TOOLS = 'Edit,MultiEdit,Write,NotebookEdit';

/**
 * How many times Claude Code sends a refused request again by itself
 * (`CLAUDE_CODE_MAX_RETRIES`; its default is 10, over about three minutes, a refused
 * key included). A few quick tries ride out a passing overload; a refused key
 * reaches the loop within seconds, and the loop waits out what can be waited out.
 * `[agents.claude] env` sets another.
 */
export const CLAUDE_MAX_RETRIES = 2;

export const claudeAdapter: AgentAdapter = {
  kind: 'claude',
  displayName: 'Claude Code',
  defaultBinary: 'claude',
  installHint: 'npm install -g @anthropic-ai/claude-code',
  // Hooks in --settings or a plugin run programs; --add-dir and MCP servers reach beyond the repository.
  permissionFlags: [
    '--dangerously-skip-permissions',
    '--allow-dangerously-skip-permissions',
    '--permission-mode',
    '--permission-prompt-tool',
    '--permission-prompts',
    '--settings',
    '--setting-sources',
    '--allowedTools',
    '--disallowedTools',
    '--tools',
    '--mcp-config',
    '--strict-mcp-config',
    '--add-dir',
    '--plugin-dir',
    '--plugin-url',
    '--agents',
    '--agent',
  ],
  canResume: true,
  testedVersions: ['2.1.330'],
  costCoversAgentSession: true,
  diagnose: (stderr) => diagnoseClaude(stderr),

  invocation(request: InvocationRequest) {
    const args = ['-p', '--output-format', 'stream-json', '--verbose'];
    // bypassPermissions lets the actor edit and run commands without a prompt nobody can answer;
    // acceptEdits would deny every shell command in print mode.
    args.push('--permission-mode', 'bypassPermissions');
    if (request.role === 'critic') args.push('--disallowedTools', CRITIC_DISALLOWED_TOOLS);
    if (request.model) args.push('--model', request.model);
    if (request.resumeSessionId) args.push('--resume', request.resumeSessionId);
    return { args, stdin: request.prompt, env: { CLAUDE_CODE_MAX_RETRIES: String(CLAUDE_MAX_RETRIES) } };
  },

  createParser(): StreamParser {
    let result: { isError: boolean; detail: string; text: string; apiStatus: number | null; apiError: string | null } | undefined;
    // When the account's usage limit refused the turn, when it resets (epoch seconds).
    let limitResetsAt: number | null = null;
    // Each model call's usage as its messages arrive (a call's blocks share its id): the running total of the turn.
    const calls = new Map<string, Usage>();
    let model: string | undefined;
    return jsonLineParser({
      known: KNOWN_EVENTS,
      schema: claudeLine,
      nameOf: claudeEventName,
      read(event, events) {
        switch (event.type) {
          case 'system':
            if (event.subtype === 'init' && event.session_id) events.push({ kind: 'session', agentSessionId: event.session_id });
            break;
          case 'rate_limit_event':
            if (event.rate_limit_info?.status === 'rejected') limitResetsAt = event.rate_limit_info.resetsAt ?? limitResetsAt;
            break;
          case 'assistant':
            if (event.message.usage) {
              model = event.message.model ?? model;
              calls.set(event.message.id ?? `call-${calls.size}`, usageOf(event.message.usage));
              events.push({ kind: 'usage', total: [...calls.values()].reduce(addUsage), ...(model ? { model } : {}) });
            }
            for (const part of Array.isArray(event.message.content) ? event.message.content : []) {
              if (part.type === 'text' && part.text) events.push({ kind: 'text', text: part.text });
              if (part.type === 'tool_use') {
                events.push({ kind: 'tool_use', id: part.id, name: part.name ?? 'tool', summary: summarizeToolInput(part.input) });
              }
            }
            break;
          case 'user':
            for (const part of Array.isArray(event.message.content) ? event.message.content : []) {
              if (part.type === 'tool_result') {
                events.push({ kind: 'tool_result', id: part.tool_use_id, isError: part.is_error === true, summary: clip(contentText(part.content)) });
              }
            }
            break;
          case 'result': {
            if (event.session_id) events.push({ kind: 'session', agentSessionId: event.session_id });
            // The turn's own account: its whole usage, and what it cost.
            events.push({ kind: 'usage', total: { ...usageOf(event.usage), costUsd: event.total_cost_usd }, ...(model ? { model } : {}) });
            const isError = event.is_error === true || (event.subtype !== undefined && event.subtype !== 'success');
            result = {
              isError,
              detail: event.subtype ?? '',
              text: event.result ?? '',
              apiStatus: event.api_error_status ?? null,
              apiError: event.api_error ?? null,
            };
            events.push({ kind: 'result', text: event.result ?? '', isError, detail: event.subtype });
            break;
          }
        }
      },
      finish(exitCode) {
        if (!result) {
          return {
            succeeded: false,
            failureReason: `Claude Code exited (code ${exitCode ?? 'none'}) without a final result event: its output ended before the turn did`,
            finalText: null,
          };
        }
        if (result.isError) {
          return {
            succeeded: false,
            failureReason: `Claude Code reported an error (${result.detail || 'is_error'}): ${clip(result.text)}`,
            finalText: result.text,
            limit: claudeLimit({ ...result, resetsAt: limitResetsAt }, Date.now()),
          };
        }
        return { succeeded: true, failureReason: null, finalText: result.text };
      },
    });
  },
};

/** The name KNOWN_EVENTS gives a line: `system/init` for the one `system` subtype whose fields are checked. */
function claudeEventName(json: unknown): string {
  const type = eventType(json);
  return type === 'system' && (json as { subtype?: unknown }).subtype === 'init' ? 'system/init' : type;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : '')).join(' ');
  }
  return '';
}

/** What Claude Code's failed turn said, as its `result` event (and a `rate_limit_event` before it) carry it. */
export interface ClaudeFailure {
  /** The result's text: `You've hit your 5-hour limit · resets 6:23am (Europe/Paris)`, `API Error: 529 Overloaded. …`. */
  text: string;
  /** `api_error_status`: the API's HTTP status, null when the turn never reached it. */
  apiStatus: number | null;
  /** `api_error`: `usage_limit_reached` when the account's usage limit refused the turn. */
  apiError: string | null;
  /** The rejected `rate_limit_event`'s `resetsAt` (epoch seconds), when there was one. */
  resetsAt: number | null;
}

/**
 * Claude Code's failed turn as a limit (2.1.330; docs/agent-limits.md): its usage
 * limit (`api_error: usage_limit_reached`, `You've hit your … limit · resets …`),
 * reset at the `rate_limit_event`'s `resetsAt` or the time in its words; else the
 * API's status; else a login it refused or a network that failed.
 */
export function claudeLimit(failure: ClaudeFailure, now: number): AgentLimit | null {
  const { text } = failure;
  if (failure.apiError === 'usage_limit_reached' || /^You've hit your .*limit/.test(text) || /usage limit reached/i.test(text)) {
    // Older versions: `Claude AI usage limit reached|1766502000` (epoch seconds), `Your limit will reset at 9am (America/Chicago).`
    const epoch = /\|(\d{10})\b/.exec(text)?.[1];
    const stated = epoch !== undefined ? Number(epoch) * 1000 : parseWallClock(/\breset(?:s| at)\b(.*)$/m.exec(text)?.[1] ?? '', now);
    const until = failure.resetsAt !== null ? failure.resetsAt * 1000 : stated;
    return agentLimit('usage_limit', text, until);
  }
  const kind = failure.apiStatus === null ? null : limitKindOfStatus(failure.apiStatus);
  if (kind) return agentLimit(kind, text);
  if (/^(Invalid API key|Not logged in|OAuth token (has expired|revoked))|Please run \/login|authentication_error/i.test(text)) return agentLimit('auth', text);
  if (/^API Error: (Request timed out|Connection error)/.test(text) || NETWORK_FAILURE.test(text)) return agentLimit('outage', text);
  return null;
}

/** Known stderr messages, explained with the fix. */
export function diagnoseClaude(stderr: string): string | null {
  if (/cannot be used with root\/sudo/i.test(stderr) || /dangerously-skip-permissions.*root/i.test(stderr)) {
    return 'Claude Code refuses to skip permission prompts as root. If this machine is a disposable sandbox, set IS_SANDBOX = "1" under [agents.claude.env] in the config; otherwise run codeloops as a normal user.';
  }
  if (/CLAUDECODE|nested/i.test(stderr) && /session/i.test(stderr)) {
    return 'Claude Code refused to start inside another Claude Code session.';
  }
  return null;
}
