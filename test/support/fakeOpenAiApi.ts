/**
 * A scripted stand-in for the OpenAI-compatible Chat Completions API, so tests
 * can drive the real `opencode` CLI offline. Only `node:http`: no extra
 * dependencies.
 *
 * Every POST /v1/chat/completions is parsed, recorded in `requests` and
 * answered from the test's responder, streamed as `data: {…}` chunks when the
 * request asks for `stream: true`.
 *
 * Recognising side requests: OpenCode also asks the model for a session title
 * (first request of a new session; system prompt "You are a title generator",
 * skipped when `opencode run --title <t>` is given). That request offers no
 * tools (`toolNames` is empty), while the agent turn always lists its tools, so
 * a responder can answer `toolNames.length === 0` with plain text and script
 * only the requests that have tools.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** One POST /v1/chat/completions request, pre-digested so responders stay short. */
export interface RecordedChatRequest {
  /** Request path including any query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** The parsed JSON body exactly as the CLI sent it. */
  body: any;
  /** Every `system` (and `developer`) message joined by newlines. */
  system: string;
  /** Text of the last user message. */
  lastUserText: string;
  /** Text of every user message joined by newlines. */
  allUserText: string;
  /** Names of the functions offered to the model (empty for side requests such as titles). */
  toolNames: string[];
  /** True when the conversation ends with tool results, i.e. this is a follow-up turn. */
  hasToolResult: boolean;
}

export interface OpenAiToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * What the fake model says: optional text, then optional tool calls. `error`
 * instead answers with an API error of that HTTP status. OpenCode retries
 * 429/5xx with backoff (over a minute), so use a 4xx such as 400 for a quick failure.
 */
export interface OpenAiReply {
  text?: string;
  toolCalls?: OpenAiToolCall[];
  error?: { status: number; message: string };
}

export type OpenAiResponder = (request: RecordedChatRequest) => OpenAiReply;

/** Any request the fake answered that was not POST /v1/chat/completions, for diagnostics. */
export interface RecordedOtherRequest {
  method: string;
  path: string;
  body: string;
}

export interface FakeOpenAiApi {
  /** Base URL ending in `/v1`, ready for a provider's `baseURL`, e.g. `http://127.0.0.1:41234/v1`. */
  url: string;
  requests: RecordedChatRequest[];
  /** Everything else the CLI asked for (model lists, probes, …). */
  otherRequests: RecordedOtherRequest[];
  close(): Promise<void>;
}

/** The model id served by the fake and written into opencode.json. */
export const FAKE_OPENAI_MODEL_ID = "m";
/** The provider id written into opencode.json; pass `-m fakeapi/m` to `opencode run`. */
export const OPEN_CODE_PROVIDER_ID = "fakeapi";
export const OPEN_CODE_MODEL = `${OPEN_CODE_PROVIDER_ID}/${FAKE_OPENAI_MODEL_ID}`;

interface ChatMessage {
  role?: unknown;
  content?: unknown;
}

/** Content is either a string or an array of parts; only text parts count. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(
      (part): part is { type: "text"; text: string } =>
        typeof part === "object" && part !== null && part.type === "text" && typeof part.text === "string",
    )
    .map((part) => part.text)
    .join("\n");
}

function isChatMessage(value: unknown): value is ChatMessage {
  return typeof value === "object" && value !== null;
}

export function digestChatRequest(path: string, body: any): RecordedChatRequest {
  const messages: ChatMessage[] = Array.isArray(body?.messages) ? body.messages.filter(isChatMessage) : [];
  const userMessages = messages.filter((message) => message.role === "user");
  const lastUser = userMessages[userMessages.length - 1];
  const lastMessage = messages[messages.length - 1];
  const tools: unknown[] = Array.isArray(body?.tools) ? body.tools : [];
  return {
    path,
    body,
    system: messages
      .filter((message) => message.role === "system" || message.role === "developer")
      .map((message) => textOf(message.content))
      .join("\n"),
    lastUserText: lastUser ? textOf(lastUser.content) : "",
    allUserText: userMessages.map((message) => textOf(message.content)).filter((text) => text !== "").join("\n"),
    toolNames: tools
      .map((tool) => (typeof tool === "object" && tool !== null ? (tool as { function?: { name?: unknown } }).function?.name : undefined))
      .filter((name): name is string => typeof name === "string"),
    hasToolResult: lastMessage?.role === "tool",
  };
}

/** Roughly four characters a token: only needs to be plausible and deterministic. */
function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function newId(prefix: string): string {
  return `${prefix}_fake${randomBytes(12).toString("hex")}`;
}

interface ReplyCompletion {
  id: string;
  created: number;
  model: string;
  text: string;
  toolCalls: { id: string; name: string; argumentsJson: string }[];
  finishReason: "tool_calls" | "stop";
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

function buildReplyCompletion(request: RecordedChatRequest, rawBody: string, reply: OpenAiReply): ReplyCompletion {
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({
    id: newId("call"),
    name: call.name,
    argumentsJson: JSON.stringify(call.arguments),
  }));
  const text = reply.text ?? "";
  const promptTokens = estimateTokens(rawBody);
  const completionTokens = estimateTokens(text + toolCalls.map((call) => call.name + call.argumentsJson).join(""));
  return {
    id: newId("chatcmpl"),
    created: Math.floor(Date.now() / 1000),
    model: typeof request.body?.model === "string" ? request.body.model : FAKE_OPENAI_MODEL_ID,
    text,
    toolCalls,
    finishReason: toolCalls.length > 0 ? "tool_calls" : "stop",
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

function sendJsonCompletion(response: http.ServerResponse, completion: ReplyCompletion): void {
  sendJson(response, 200, {
    id: completion.id,
    object: "chat.completion",
    created: completion.created,
    model: completion.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: completion.text === "" && completion.toolCalls.length > 0 ? null : completion.text,
          ...(completion.toolCalls.length > 0
            ? {
                tool_calls: completion.toolCalls.map((call) => ({
                  id: call.id,
                  type: "function",
                  function: { name: call.name, arguments: call.argumentsJson },
                })),
              }
            : {}),
        },
        finish_reason: completion.finishReason,
      },
    ],
    usage: completion.usage,
  });
}

function sendStreamedCompletion(response: http.ServerResponse, completion: ReplyCompletion): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const sendChunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}): void => {
    const chunk = {
      id: completion.id,
      object: "chat.completion.chunk",
      created: completion.created,
      model: completion.model,
      choices: [{ index: 0, delta, finish_reason: null }],
      ...extra,
    };
    response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  sendChunk({ role: "assistant", content: "" });
  if (completion.text !== "") sendChunk({ content: completion.text });
  completion.toolCalls.forEach((call, index) => {
    // Like the real API: the first fragment names the function, later ones carry the arguments.
    sendChunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] });
    sendChunk({ tool_calls: [{ index, function: { arguments: call.argumentsJson } }] });
  });
  const finalChunk = {
    id: completion.id,
    object: "chat.completion.chunk",
    created: completion.created,
    model: completion.model,
    choices: [{ index: 0, delta: {}, finish_reason: completion.finishReason }],
    usage: completion.usage,
  };
  response.write(`data: ${JSON.stringify(finalChunk)}\n\n`);
  response.write("data: [DONE]\n\n");
  response.end();
}

function sendJson(response: http.ServerResponse, status: number, value: unknown): void {
  const payload = JSON.stringify(value);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  response.end(payload);
}

function sendError(response: http.ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { error: { message, type, code: null, param: null } });
}

/** The `error.type` OpenAI uses for each status, so clients classify the error as usual. */
function errorTypeForStatus(status: number): string {
  if (status === 401) return "invalid_api_key";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

export async function startFakeOpenAiApi(responder: OpenAiResponder): Promise<FakeOpenAiApi> {
  const requests: RecordedChatRequest[] = [];
  const otherRequests: RecordedOtherRequest[] = [];

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    const method = request.method ?? "GET";
    const path = request.url ?? "/";
    const pathname = path.split("?")[0] ?? "/";
    const rawBody = await readBody(request);

    if (method === "POST" && pathname === "/v1/chat/completions") {
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        sendError(response, 400, "invalid_request_error", "body is not JSON");
        return;
      }
      const recorded = digestChatRequest(path, body);
      requests.push(recorded);
      let reply: OpenAiReply;
      try {
        reply = responder(recorded);
      } catch (error) {
        // A failing responder is a test bug. 400 is not retried, so the CLI stops at once
        // instead of backing off as it does on 5xx.
        sendError(response, 400, "invalid_request_error", `fake responder threw: ${String(error)}`);
        return;
      }
      if (reply.error) {
        sendError(response, reply.error.status, errorTypeForStatus(reply.error.status), reply.error.message);
        return;
      }
      const completion = buildReplyCompletion(recorded, rawBody, reply);
      if (recorded.body?.stream === true) sendStreamedCompletion(response, completion);
      else sendJsonCompletion(response, completion);
      return;
    }

    otherRequests.push({ method, path, body: rawBody });
    if (method === "GET" && pathname === "/v1/models") {
      sendJson(response, 200, {
        object: "list",
        data: [{ id: FAKE_OPENAI_MODEL_ID, object: "model", created: 0, owned_by: "fake" }],
      });
    } else if (method === "HEAD" || (method === "GET" && pathname === "/")) {
      response.writeHead(200);
      response.end();
    } else {
      sendError(response, 404, "not_found", `fake OpenAI API does not serve ${method} ${pathname}`);
    }
  };

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, "server_error", String(error));
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    otherRequests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Keep-alive sockets from the CLI would otherwise hold close() open.
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * Writes `<dir>/opencode.json` declaring the fake as an OpenAI-compatible
 * provider, so `opencode run -m fakeapi/m` run in `dir` talks to `api`.
 * opencode 1.18.33 has `@ai-sdk/openai-compatible` built into its binary, so
 * using this provider downloads nothing.
 *
 * No `permission` block: codeloops' adapter grants the actor everything through
 * OPENCODE_PERMISSION and denies the critic edits the same way. A project file
 * that allowed edits would win over that variable in opencode 1.18.33 and hand
 * the plan agent its edit and write tools back.
 */
export function writeOpenCodeProjectConfig(dir: string, api: FakeOpenAiApi): void {
  const config = {
    $schema: "https://opencode.ai/config.json",
    provider: {
      [OPEN_CODE_PROVIDER_ID]: {
        npm: "@ai-sdk/openai-compatible",
        name: "Fake API",
        options: { baseURL: api.url, apiKey: "fake-key-for-tests" },
        // A price (USD per million tokens) makes step_finish report a non-zero `cost`.
        models: { [FAKE_OPENAI_MODEL_ID]: { name: "Fake model", cost: { input: 3, output: 15 } } },
      },
    },
    model: OPEN_CODE_MODEL,
    // The title generator uses small_model: point it at the fake too.
    small_model: OPEN_CODE_MODEL,
    autoupdate: false,
    share: "disabled",
  };
  writeFileSync(join(dir, "opencode.json"), `${JSON.stringify(config, null, 2)}\n`);
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
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    ...(workingDirectory === undefined ? {} : { PWD: workingDirectory }),
    // `run` rejects permission prompts it cannot show; allow everything instead.
    // This also lifts `--agent plan`'s edit ban (see writeOpenCodeProjectConfig).
    OPENCODE_PERMISSION: JSON.stringify({ "*": "allow" }),
    // Network features that would otherwise reach out of the sandbox.
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    // Keep the user's ~/.claude prompts and skills out of the system prompt.
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_EXTERNAL_SKILLS: "1",
    NO_COLOR: "1",
  };
}
