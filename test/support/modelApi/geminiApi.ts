/**
 * The Gemini API's content generation (POST /v1beta/models/<model>:streamGenerateContent?alt=sse,
 * and :generateContent for the CLI's side requests), as a `WireProtocol`, and the
 * settings that point the real `gemini` CLI at it.
 *
 * The model sits in the path. Messages are `contents` of `role` user or model, each
 * a list of `parts`: `text`, `functionCall` (the model's tool calls) and
 * `functionResponse` (their results, sent back in a user message). The first user
 * message starts with a generated `<session_context>` part. Checked against
 * gemini-cli 0.61.0.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SseEvent } from './http.js';
import { isObject, objectsIn, stringsIn, type JsonObject, type ModelApi, type WireProtocol } from './scripted.js';

/** A model to name with `--model`: with `auto`, every prompt first gets a routing request. */
export const GEMINI_MODEL = 'gemini-2.5-flash';

const ROUTE = /^\/v1beta\/models\/([^/:]+):(streamGenerateContent|generateContent)$/;

/** Context the CLI adds to the first user message: not what the user typed. */
function isGeneratedContext(text: string): boolean {
  return text.trim().startsWith('<session_context>');
}

function partsOf(content: JsonObject | undefined): JsonObject[] {
  return objectsIn(content?.parts);
}

function statusName(status: number): string {
  if (status === 400) return 'INVALID_ARGUMENT';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  return 'INTERNAL';
}

export const geminiApi: WireProtocol = {
  basePath: '',
  route: { method: 'POST', path: ROUTE },

  digest(request, body) {
    const [, model = 'gemini-fake', method] = ROUTE.exec(request.pathname) ?? [];
    const contents = objectsIn(body.contents);
    const userContents = contents.filter((content) => content.role === 'user');
    const lastContent = contents[contents.length - 1];
    const system = isObject(body.systemInstruction) ? partsOf(body.systemInstruction) : [];
    return {
      model,
      stream: method === 'streamGenerateContent',
      system: stringsIn(system.map((part) => part.text)).join('\n'),
      userTexts: userContents.map((content) =>
        stringsIn(partsOf(content).map((part) => part.text))
          .filter((text) => !isGeneratedContext(text))
          .join('\n'),
      ),
      toolNames: stringsIn(objectsIn(body.tools).flatMap((tool) => objectsIn(tool.functionDeclarations).map((declaration) => declaration.name))),
      hasToolResult: lastContent?.role === 'user' && partsOf(lastContent).some((part) => isObject(part.functionResponse)),
    };
  },

  answer(request, reply) {
    const parts: JsonObject[] = [
      ...(reply.text === '' ? [] : [{ text: reply.text }]),
      ...reply.toolCalls.map((call) => ({ functionCall: { name: call.name, args: call.input } })),
    ];
    if (parts.length === 0) parts.push({ text: '' });
    const usageMetadata = {
      promptTokenCount: reply.inputTokens,
      candidatesTokenCount: reply.outputTokens,
      totalTokenCount: reply.inputTokens + reply.outputTokens,
    };
    const chunk = (chunkParts: JsonObject[], finished: boolean): JsonObject => ({
      candidates: [{ content: { role: 'model', parts: chunkParts }, index: 0, ...(finished ? { finishReason: 'STOP' } : {}) }],
      ...(finished ? { usageMetadata } : {}),
      modelVersion: request.model,
    });
    if (!request.stream) return { json: chunk(parts, true) };
    // Like the real API: text first, the function calls with the final chunk.
    const textParts = parts.filter((part) => 'text' in part);
    const callParts = parts.filter((part) => 'functionCall' in part);
    const events: SseEvent[] = [];
    if (textParts.length > 0 && callParts.length > 0) events.push({ data: chunk(textParts, false) });
    const finalParts = textParts.length > 0 && callParts.length > 0 ? callParts : parts;
    return {
      events: [...events, ...(callParts.length > 0 && reply.toolCallsAfter ? [reply.toolCallsAfter] : []), { data: chunk(finalParts, true) }],
    };
  },

  errorBody: (status, message) => ({ error: { code: status, message, status: statusName(status) } }),
};

/**
 * Settings and environment for running the real `gemini` against `api`, offline and
 * isolated from the machine's own Gemini config: `<home>/.gemini/settings.json`
 * selects API-key auth (else the base URL selects a gateway auth that headless mode
 * refuses), and turns off usage statistics, telemetry, auto-update and retries (a
 * broken server would be retried for minutes). `home` must be an existing,
 * test-owned folder; sessions are kept under it, so `--resume` finds one only with
 * the same `home` and working directory.
 */
export function geminiEnvironment(api: ModelApi, home: string): Record<string, string> {
  const settingsDir = path.join(home, '.gemini');
  fs.mkdirSync(settingsDir, { recursive: true });
  const settings = {
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts: 1 },
  };
  fs.writeFileSync(path.join(settingsDir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  return {
    // Not GEMINI_CLI_HOME: 0.61.0's launcher reads it as the .gemini folder, the rest of the CLI as the home above it.
    HOME: home,
    GOOGLE_GEMINI_BASE_URL: api.url,
    GEMINI_API_KEY: 'fake-key-for-tests',
    NO_COLOR: '1',
  };
}
