/**
 * The OpenAI Responses API (POST /v1/responses, streamed), as a `WireProtocol`, and
 * the configuration that points the real `codex` CLI at it as a model provider.
 *
 * Codex sends the whole conversation in `input` on every turn: its system prompt as
 * the first `developer` message, context it generates (`<environment_context>`,
 * `<user_instructions>`) as user messages, then the turn's own items. Tool results
 * come back as `function_call_output` (the shell tool, `exec_command`) or
 * `custom_tool_call_output` (the freeform `apply_patch` tool). Checked against
 * codex 0.169.0.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SseEvent } from './http.js';
import { fakeId, objectsIn, stringsIn, type JsonObject, type ModelApi, type WireProtocol } from './scripted.js';

/** A model in Codex's bundled catalogue, so it offers its `apply_patch` tool (an unknown model gets none). */
export const CODEX_MODEL = 'gpt-5.5';

/** Context Codex adds to the conversation as user messages: not what the user typed. */
function isGeneratedContext(text: string): boolean {
  const trimmed = text.trim();
  return (
    /^<(environment_context|user_instructions|permissions instructions|apps_instructions|skills_instructions)>/.test(trimmed) ||
    trimmed.startsWith('# AGENTS.md')
  );
}

/** The texts of a message item: `input_text` and `output_text` parts, or a plain string. */
function messageTexts(item: JsonObject): string[] {
  if (typeof item.content === 'string') return [item.content];
  return stringsIn(objectsIn(item.content).map((part) => (part.type === 'input_text' || part.type === 'output_text' ? part.text : undefined)));
}

function errorCode(status: number): string {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export const openAiResponses: WireProtocol = {
  basePath: '/v1',
  route: { method: 'POST', path: '/v1/responses' },

  digest(_request, body) {
    const input = objectsIn(body.input);
    const messages = input.filter((item) => item.type === 'message' || (item.type === undefined && typeof item.role === 'string'));
    const textsOf = (role: string) =>
      messages
        .filter((message) => message.role === role)
        .map((message) =>
          messageTexts(message)
            .filter((text) => !isGeneratedContext(text))
            .join('\n'),
        );
    const last = input[input.length - 1];
    return {
      model: typeof body.model === 'string' ? body.model : 'codex-fake',
      stream: body.stream === true,
      system: [typeof body.instructions === 'string' ? body.instructions : '', ...textsOf('developer'), ...textsOf('system')]
        .filter((text) => text !== '')
        .join('\n'),
      userTexts: textsOf('user'),
      toolNames: stringsIn(objectsIn(body.tools).map((tool) => tool.name)),
      hasToolResult: last?.type === 'function_call_output' || last?.type === 'custom_tool_call_output',
    };
  },

  answer(request, reply) {
    // Freeform tools (apply_patch) take their input as text: the scripted call gives it as `input.input`.
    const customTools = new Set(stringsIn(objectsIn(request.body.tools).map((tool) => (tool.type === 'custom' ? tool.name : undefined))));
    const responseId = fakeId('resp');
    let sequence = 0;
    const event = (type: string, fields: JsonObject): SseEvent => ({ event: type, data: { type, sequence_number: sequence++, ...fields } });
    const items: { item: JsonObject; events: (done: JsonObject, index: number) => SseEvent[] }[] = [];
    if (reply.text !== '') {
      const id = fakeId('msg');
      const part = { type: 'output_text', text: reply.text, annotations: [] };
      items.push({
        item: { type: 'message', id, role: 'assistant', status: 'completed', content: [part] },
        events: (_done, index) => [
          event('response.content_part.added', { item_id: id, output_index: index, content_index: 0, part: { ...part, text: '' } }),
          event('response.output_text.delta', { item_id: id, output_index: index, content_index: 0, delta: reply.text }),
          event('response.output_text.done', { item_id: id, output_index: index, content_index: 0, text: reply.text }),
          event('response.content_part.done', { item_id: id, output_index: index, content_index: 0, part }),
        ],
      });
    }
    for (const call of reply.toolCalls) {
      const id = fakeId('fc');
      const callId = fakeId('call');
      if (customTools.has(call.name)) {
        const text = typeof call.input.input === 'string' ? call.input.input : call.argumentsJson;
        items.push({
          item: { type: 'custom_tool_call', id, call_id: callId, name: call.name, input: text, status: 'completed' },
          events: (_done, index) => [
            event('response.custom_tool_call_input.delta', { item_id: id, output_index: index, delta: text }),
            event('response.custom_tool_call_input.done', { item_id: id, output_index: index, input: text }),
          ],
        });
      } else {
        items.push({
          item: { type: 'function_call', id, call_id: callId, name: call.name, arguments: call.argumentsJson, status: 'completed' },
          events: (_done, index) => [
            event('response.function_call_arguments.delta', { item_id: id, output_index: index, delta: call.argumentsJson }),
            event('response.function_call_arguments.done', { item_id: id, output_index: index, arguments: call.argumentsJson }),
          ],
        });
      }
    }
    const usage = {
      input_tokens: reply.inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: reply.outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: reply.inputTokens + reply.outputTokens,
    };
    const response = (status: string, output: JsonObject[], extra: JsonObject = {}) => ({
      id: responseId,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model: request.model,
      status,
      output,
      ...extra,
    });
    if (!request.stream)
      return {
        json: response(
          'completed',
          items.map(({ item }) => item),
          { usage },
        ),
      };
    const started = (item: JsonObject): JsonObject =>
      item.type === 'message'
        ? { ...item, status: 'in_progress', content: [] }
        : { ...item, status: 'in_progress', ...(item.type === 'function_call' ? { arguments: '' } : { input: '' }) };
    return {
      events: [
        event('response.created', { response: response('in_progress', []) }),
        event('response.in_progress', { response: response('in_progress', []) }),
        ...items.flatMap(({ item, events }, index) => [
          ...(item.type !== 'message' && index === items.length - reply.toolCalls.length && reply.toolCallsAfter ? [reply.toolCallsAfter] : []),
          event('response.output_item.added', { output_index: index, item: started(item) }),
          ...events(item, index),
          event('response.output_item.done', { output_index: index, item }),
        ]),
        event('response.completed', {
          response: response(
            'completed',
            items.map(({ item }) => item),
            { usage },
          ),
        }),
      ],
    };
  },

  errorBody: (status, message) => ({ error: { message, type: errorCode(status), code: errorCode(status), param: null } }),
};

/**
 * An empty `CODEX_HOME` whose `config.toml` points Codex at `api`, with every
 * background call and retry switched off: its update check, analytics, plugins and
 * apps, and the request and stream retries (30 by default, for minutes, against a
 * server that answers with an error). Returns the environment for the real `codex`:
 * `CODEX_HOME` and the key `env_key` names (any value, sent as a Bearer token).
 * Sessions live under `<codexHome>/sessions`, so `codex exec resume` finds one only
 * with the same `CODEX_HOME`.
 */
export function codexEnvironment(api: ModelApi, codexHome: string): Record<string, string> {
  fs.mkdirSync(codexHome, { recursive: true });
  const config = [
    `model = "${CODEX_MODEL}"`,
    'model_provider = "scripted"',
    'check_for_update_on_startup = false',
    '',
    '[model_providers.scripted]',
    'name = "Scripted API"',
    `base_url = "${api.url}"`,
    'env_key = "CODEX_SCRIPTED_API_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'apps = false',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(codexHome, 'config.toml'), config);
  return { CODEX_HOME: codexHome, CODEX_SCRIPTED_API_KEY: 'sk-fake-key-for-tests', NO_COLOR: '1' };
}

/** Whether a Codex request's input holds a tool result whose output includes `text`. */
export function codexToolOutputIncludes(request: { body: JsonObject }, text: string): boolean {
  return objectsIn(request.body.input).some(
    (item) => (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') && JSON.stringify(item.output ?? '').includes(text),
  );
}
