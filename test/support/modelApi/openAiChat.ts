/**
 * The OpenAI Chat Completions API (POST /v1/chat/completions), as a
 * `WireProtocol`, and the configuration that points the real `opencode` CLI at it
 * as an OpenAI-compatible provider.
 *
 * OpenCode's side request is the session title (first request of a new session,
 * system prompt "You are a title generator", skipped when `opencode run --title`
 * is given): it offers no tools, like the side requests `scripted.ts` describes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SseEvent } from './http.js';
import { fakeId, isObject, objectsIn, stringsIn, textParts, type ModelApi, type WireProtocol } from './scripted.js';

/** The model id written into opencode.json. */
const MODEL_ID = 'm';
/** The provider id written into opencode.json. */
const PROVIDER_ID = 'fakeapi';
/** What to pass to `opencode run -m` (and codeloops' `-m`) in a folder prepared by `writeOpenCodeProjectConfig`. */
export const OPEN_CODE_MODEL = `${PROVIDER_ID}/${MODEL_ID}`;

/** The `error.type` OpenAI uses for each status, so clients classify the error as usual. */
function errorType(status: number): string {
  if (status === 401) return 'invalid_api_key';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export const openAiChat: WireProtocol = {
  basePath: '/v1',
  route: { method: 'POST', path: '/v1/chat/completions' },

  digest(_request, body) {
    const messages = objectsIn(body.messages);
    const textsOf = (roles: readonly string[]) =>
      messages.filter((message) => typeof message.role === 'string' && roles.includes(message.role)).map((message) => textParts(message.content).join('\n'));
    return {
      model: typeof body.model === 'string' ? body.model : MODEL_ID,
      stream: body.stream === true,
      system: textsOf(['system', 'developer']).join('\n'),
      userTexts: textsOf(['user']),
      toolNames: stringsIn(objectsIn(body.tools).map((tool) => (isObject(tool.function) ? tool.function.name : undefined))),
      // Tool results are messages of their own, so a follow-up turn ends with one.
      hasToolResult: messages[messages.length - 1]?.role === 'tool',
    };
  },

  answer(request, reply) {
    const toolCalls = reply.toolCalls.map((call) => ({ id: fakeId('call'), type: 'function', function: { name: call.name, arguments: call.argumentsJson } }));
    const finishReason = toolCalls.length > 0 ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: reply.inputTokens, completion_tokens: reply.outputTokens, total_tokens: reply.inputTokens + reply.outputTokens };
    const head = { id: fakeId('chatcmpl'), created: Math.floor(Date.now() / 1000), model: request.model };
    if (!request.stream) {
      const message = {
        role: 'assistant',
        content: reply.text === '' && toolCalls.length > 0 ? null : reply.text,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      };
      return { json: { ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finishReason }], usage } };
    }
    const chunk = (delta: object, finish: string | null = null): SseEvent => ({
      data: { ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }], ...(finish ? { usage } : {}) },
    });
    return {
      events: [
        chunk({ role: 'assistant', content: '' }),
        ...(reply.text === '' ? [] : [chunk({ content: reply.text })]),
        // Like the real API: the first fragment of a call names the function, the next carries the arguments.
        ...toolCalls.flatMap(({ id, type, function: { name, arguments: args } }, index) => [
          chunk({ tool_calls: [{ index, id, type, function: { name, arguments: '' } }] }),
          chunk({ tool_calls: [{ index, function: { arguments: args } }] }),
        ]),
        chunk({}, finishReason),
        { data: '[DONE]' },
      ],
    };
  },

  errorBody: (status, message) => ({ error: { message, type: errorType(status), code: null, param: null } }),
};

/**
 * Writes `<dir>/opencode.json` declaring `api` as an OpenAI-compatible provider,
 * so `opencode run -m ${OPEN_CODE_MODEL}` run in `dir` talks to it. opencode
 * 1.18.33 has `@ai-sdk/openai-compatible` built into its binary, so using this
 * provider downloads nothing.
 *
 * No `permission` block: codeloops' adapter grants the actor everything through
 * OPENCODE_PERMISSION and denies the critic edits the same way. A project file
 * that allowed edits would win over that variable in opencode 1.18.33 and hand
 * the plan agent its edit and write tools back.
 */
export function writeOpenCodeProjectConfig(dir: string, api: ModelApi): void {
  const config = {
    $schema: 'https://opencode.ai/config.json',
    provider: {
      [PROVIDER_ID]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake API',
        options: { baseURL: api.url, apiKey: 'fake-key-for-tests' },
        // A price (USD per million tokens) makes step_finish report a non-zero `cost`.
        models: { [MODEL_ID]: { name: 'Fake model', cost: { input: 3, output: 15 } } },
      },
    },
    model: OPEN_CODE_MODEL,
    // The title generator uses small_model: point it at the scripted API too.
    small_model: OPEN_CODE_MODEL,
    autoupdate: false,
    share: 'disabled',
  };
  writeFileSync(join(dir, 'opencode.json'), `${JSON.stringify(config, null, 2)}\n`);
}

/**
 * Environment for running the real `opencode` offline and isolated from the
 * machine's own OpenCode config and data. Merge it over process.env. `home`
 * must be an existing, test-owned folder; sessions live in its
 * `.local/share/opencode/opencode.db`, so `--session` only finds a session when
 * the same `home` is used again.
 *
 * Pass `workingDirectory` (the child's cwd) whenever the child does not run in
 * this process's cwd: opencode takes its project directory from `$PWD`, not
 * from the real cwd, and spawn() keeps the parent's PWD. With a stale PWD it
 * opens the wrong project, misses opencode.json and fails with
 * "Unexpected server error". (`opencode run --dir <cwd>` also works.)
 * Checked against opencode 1.18.33.
 */
export function openCodeEnvironment(home: string, workingDirectory?: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    ...(workingDirectory === undefined ? {} : { PWD: workingDirectory }),
    // `run` rejects permission prompts it cannot show; allow everything instead.
    // This also lifts `--agent plan`'s edit ban (see writeOpenCodeProjectConfig).
    OPENCODE_PERMISSION: JSON.stringify({ '*': 'allow' }),
    // Network features that would otherwise reach out of the sandbox.
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    // Keep the user's ~/.claude prompts and skills out of the system prompt.
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
    OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
    NO_COLOR: '1',
  };
}
