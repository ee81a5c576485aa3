/**
 * The Anthropic Messages API (POST /v1/messages, any query string: Claude Code
 * sends `?beta=true`), as a `WireProtocol`, and the environment that points the
 * real `claude` CLI at it.
 *
 * When answered with a 400, claude 2.1.330 re-sends the same turn a few times with
 * different tool lists before giving up, so count requests with care in error tests.
 */
import { join } from 'node:path';
import type { SseEvent } from './http.js';
import { fakeId, objectsIn, stringsIn, textParts, type JsonObject, type ModelApi, type WireProtocol } from './scripted.js';

/**
 * Claude Code prepends whole text blocks of `<system-reminder>…</system-reminder>`
 * (git status, attribution rules) to the user's prompt. They are not what the user
 * typed, so leaving them out lets responders match on the prompt itself.
 */
function isInjectedReminder(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.startsWith('<system-reminder>') && trimmed.endsWith('</system-reminder>');
}

/** The `error.type` the real API uses for each status, so the CLI classifies the error as usual. */
function errorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

type ContentBlock = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** The events of one content block: the real API streams tool input as JSON fragments after an empty object. */
function blockEvents(block: ContentBlock, index: number): SseEvent[] {
  const start = block.type === 'text' ? { ...block, text: '' } : { ...block, input: {} };
  const delta = block.type === 'text' ? { type: 'text_delta', text: block.text } : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
  return [
    event('content_block_start', { index, content_block: start }),
    event('content_block_delta', { index, delta }),
    event('content_block_stop', { index }),
  ];
}

/** Every Messages event repeats its name as `type` in the data. */
function event(type: string, fields: JsonObject = {}): SseEvent {
  return { event: type, data: { type, ...fields } };
}

export const anthropicMessages: WireProtocol = {
  basePath: '',
  route: { method: 'POST', path: '/v1/messages' },

  digest(_request, body) {
    const messages = objectsIn(body.messages);
    const userMessages = messages.filter((message) => message.role === 'user');
    const lastUser = userMessages[userMessages.length - 1];
    // Claude Code 2.1.330 also puts part of its system prompt (environment, agent list)
    // in `role: "system"` entries of `messages`, so both places count.
    const systemTexts = [body.system, ...messages.filter((message) => message.role === 'system').map((message) => message.content)].flatMap(textParts);
    return {
      model: typeof body.model === 'string' ? body.model : 'claude-fake',
      stream: body.stream === true,
      system: systemTexts.filter((text) => text !== '').join('\n'),
      userTexts: userMessages.map((message) =>
        textParts(message.content)
          .filter((text) => !isInjectedReminder(text))
          .join('\n'),
      ),
      toolNames: stringsIn(objectsIn(body.tools).map((tool) => tool.name)),
      hasToolResult: objectsIn(lastUser?.content).some((block) => block.type === 'tool_result'),
    };
  },

  answer(request, reply) {
    const content: ContentBlock[] = reply.toolCalls.map((call) => ({ type: 'tool_use', id: fakeId('toolu'), name: call.name, input: call.input }));
    // The API never returns an empty message: an empty text block keeps the CLI's parser happy.
    if (reply.text !== '' || content.length === 0) content.unshift({ type: 'text', text: reply.text });
    const stopReason = reply.toolCalls.length > 0 ? 'tool_use' : 'end_turn';
    const usage = (outputTokens: number) => ({
      input_tokens: reply.inputTokens,
      output_tokens: outputTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    const message = { id: fakeId('msg'), type: 'message', role: 'assistant', model: request.model, content, stop_reason: stopReason, stop_sequence: null };
    if (!request.stream) return { json: { ...message, usage: usage(reply.outputTokens) } };
    return {
      events: [
        // Like the real API: input tokens are known at the start, output tokens only at the end.
        event('message_start', { message: { ...message, content: [], stop_reason: null, usage: usage(1) } }),
        ...content.flatMap((block, index) => [
          ...(block.type === 'tool_use' && index === content.length - reply.toolCalls.length && reply.toolCallsAfter ? [reply.toolCallsAfter] : []),
          ...blockEvents(block, index),
        ]),
        event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: reply.outputTokens } }),
        event('message_stop'),
      ],
    };
  },

  errorBody: (status, message) => ({ type: 'error', error: { type: errorType(status), message } }),
};

/**
 * Environment for running the real `claude` against `api`, offline and isolated
 * from the machine's own Claude config. Merge it over process.env after removing
 * `CLAUDECODE` and `CLAUDE_CODE_ENTRYPOINT` (claude refuses to run nested when
 * they are set). `home` must be an existing, test-owned folder: sessions are
 * stored under `<home>/.claude/projects/<cwd as a slug>/<session id>.jsonl`, so
 * reuse the same `home` (and working directory) for `--resume`.
 * Checked against claude 2.1.330.
 */
export function claudeEnvironment(api: ModelApi, home: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: api.url,
    // Required: without a key `claude -p` makes no request and reports "Not logged in".
    ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-tests',
    // Keeps the user's ~/.claude.json, settings, hooks, plugins and sessions out of the run.
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, '.claude'),
    // Stops telemetry, error reporting and update checks, and the `HEAD /api/hello`
    // connectivity probe otherwise sent to the base URL.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    // Required as root: bypassPermissions is otherwise refused ("cannot be used with root/sudo").
    IS_SANDBOX: '1',
    // Its own retries of a 429 or a 5xx (ten by default, backing off for minutes) left out when it runs by itself;
    // run by codeloops, it gets the adapter's own (`CLAUDE_MAX_RETRIES`), which wins.
    CLAUDE_CODE_MAX_RETRIES: '0',
    NO_COLOR: '1',
  };
}
