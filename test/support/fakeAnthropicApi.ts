/**
 * A scripted stand-in for the Anthropic Messages API, so tests can drive the
 * real `claude` CLI offline. Only `node:http`: no extra dependencies.
 *
 * Every POST /v1/messages (any query string, e.g. `?beta=true`) is parsed,
 * recorded in `requests` and answered from the test's responder, streamed as
 * Server-Sent Events when the request asks for `stream: true`.
 *
 * Recognising side requests: besides the main agent turn, Claude Code may send
 * small helper requests (title / summary / topic generation, quota probes).
 * They carry no `tools` (`toolNames` is empty) while the agent turn always
 * lists its tools, so a responder can answer `toolNames.length === 0` with
 * plain text and script only the requests that have tools. (claude 2.1.330
 * under `claudeEnvironment` sent none: a `-p` run was only agent turns.)
 *
 * When answered with a 400, claude 2.1.330 re-sends the same turn a few times
 * with different tool lists before giving up, so count requests with care in
 * error tests.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { join } from "node:path";

/** One POST /v1/messages request, pre-digested so responders stay short. */
export interface RecordedMessagesRequest {
  /** Request path including the query string, e.g. `/v1/messages?beta=true`. */
  path: string;
  /** The parsed JSON body exactly as the CLI sent it. */
  body: any;
  /** The system prompt flattened to text: `body.system` plus any `role: "system"` entries of `messages`. */
  system: string;
  /** Text of the last user message; tool_result contents and injected <system-reminder> blocks are excluded. */
  lastUserText: string;
  /** Text of every user message joined by newlines, with the same exclusions as lastUserText. */
  allUserText: string;
  /** Names of the tools offered to the model (empty for side requests such as titles). */
  toolNames: string[];
  /** True when the last user message carries a tool_result, i.e. this is a follow-up turn. */
  hasToolResult: boolean;
}

export interface AnthropicToolUse {
  name: string;
  input: Record<string, unknown>;
}

/**
 * What the fake model says: optional text, then optional tool calls. `error`
 * instead answers with an API error of that HTTP status. Claude Code retries
 * 429/5xx with backoff (a 500 kept it retrying for over two minutes), so use a
 * 4xx such as 400 for a quick failure.
 */
export interface AnthropicReply {
  text?: string;
  toolUses?: AnthropicToolUse[];
  error?: { status: number; message: string };
}

/** May answer later (a promise): a model that is still thinking, for tests that interrupt. */
export type AnthropicResponder = (request: RecordedMessagesRequest) => AnthropicReply | Promise<AnthropicReply>;

/** Any request the fake answered that was not POST /v1/messages, for diagnostics. */
export interface RecordedOtherRequest {
  method: string;
  path: string;
  body: string;
}

export interface FakeAnthropicApi {
  /** Base URL for ANTHROPIC_BASE_URL, e.g. `http://127.0.0.1:41234` (no trailing slash, no /v1). */
  url: string;
  requests: RecordedMessagesRequest[];
  /** Everything else the CLI asked for (token counting, HEAD probes, …). */
  otherRequests: RecordedOtherRequest[];
  close(): Promise<void>;
}

interface ContentBlock {
  type: string;
  text?: unknown;
  content?: unknown;
}

interface Message {
  role?: unknown;
  content?: unknown;
}

function blocksOf(content: unknown): ContentBlock[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (Array.isArray(content)) {
    return content.filter((block): block is ContentBlock => typeof block === "object" && block !== null);
  }
  return [];
}

/** Text blocks only: tool_result and images are deliberately left out. */
function textOf(content: unknown): string {
  return blocksOf(content)
    .filter((block) => block.type === "text" && typeof block.text === "string")
    .map((block) => block.text as string)
    .join("\n");
}

/**
 * Claude Code prepends whole text blocks of `<system-reminder>…</system-reminder>`
 * (git status, attribution rules) to the user's prompt. They are not what the
 * user typed, so leaving them out lets responders match on the prompt itself.
 */
function isInjectedReminder(text: string): boolean {
  const trimmed = text.trim();
  return trimmed.startsWith("<system-reminder>") && trimmed.endsWith("</system-reminder>");
}

function userTextOf(content: unknown): string {
  return blocksOf(content)
    .filter((block) => block.type === "text" && typeof block.text === "string" && !isInjectedReminder(block.text))
    .map((block) => block.text as string)
    .join("\n");
}

function isMessage(value: unknown): value is Message {
  return typeof value === "object" && value !== null;
}

export function digestMessagesRequest(path: string, body: any): RecordedMessagesRequest {
  const messages: Message[] = Array.isArray(body?.messages) ? body.messages.filter(isMessage) : [];
  const userMessages = messages.filter((message) => message.role === "user");
  const lastUser = userMessages[userMessages.length - 1];
  // Claude Code 2.1.330 also puts part of its system prompt (environment, agent
  // list) in `role: "system"` entries inside `messages`, so both places count.
  const systemParts = [
    textOf(body?.system),
    ...messages.filter((message) => message.role === "system").map((message) => textOf(message.content)),
  ];
  const tools: unknown[] = Array.isArray(body?.tools) ? body.tools : [];
  return {
    path,
    body,
    system: systemParts.filter((text) => text !== "").join("\n"),
    lastUserText: lastUser ? userTextOf(lastUser.content) : "",
    allUserText: userMessages.map((message) => userTextOf(message.content)).filter((text) => text !== "").join("\n"),
    toolNames: tools
      .map((tool) => (typeof tool === "object" && tool !== null ? (tool as { name?: unknown }).name : undefined))
      .filter((name): name is string => typeof name === "string"),
    hasToolResult: lastUser ? blocksOf(lastUser.content).some((block) => block.type === "tool_result") : false,
  };
}

/** Roughly four characters a token: only needs to be plausible and deterministic. */
function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function newId(prefix: string): string {
  return `${prefix}_fake${randomBytes(12).toString("hex")}`;
}

type OutputBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

function outputBlocksOf(reply: AnthropicReply): OutputBlock[] {
  const blocks: OutputBlock[] = [];
  if (reply.text !== undefined && reply.text !== "") blocks.push({ type: "text", text: reply.text });
  for (const toolUse of reply.toolUses ?? []) {
    blocks.push({ type: "tool_use", id: newId("toolu"), name: toolUse.name, input: toolUse.input });
  }
  // The API never returns an empty message; an empty text block keeps the CLI's parser happy.
  if (blocks.length === 0) blocks.push({ type: "text", text: "" });
  return blocks;
}

interface ReplyMessage {
  id: string;
  model: string;
  blocks: OutputBlock[];
  stopReason: "tool_use" | "end_turn";
  inputTokens: number;
  outputTokens: number;
}

function buildReplyMessage(request: RecordedMessagesRequest, rawBody: string, reply: AnthropicReply): ReplyMessage {
  const blocks = outputBlocksOf(reply);
  return {
    id: newId("msg"),
    model: typeof request.body?.model === "string" ? request.body.model : "claude-fake",
    blocks,
    stopReason: blocks.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn",
    inputTokens: estimateTokens(rawBody),
    outputTokens: estimateTokens(JSON.stringify(blocks)),
  };
}

function usageOf(message: ReplyMessage, outputTokens: number) {
  return {
    input_tokens: message.inputTokens,
    output_tokens: outputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function sendJsonMessage(response: http.ServerResponse, message: ReplyMessage): void {
  sendJson(response, 200, {
    id: message.id,
    type: "message",
    role: "assistant",
    model: message.model,
    content: message.blocks,
    stop_reason: message.stopReason,
    stop_sequence: null,
    usage: usageOf(message, message.outputTokens),
  });
}

function sendStreamedMessage(response: http.ServerResponse, message: ReplyMessage): void {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "request-id": newId("req"),
  });
  const send = (event: string, data: unknown): void => {
    response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  send("message_start", {
    type: "message_start",
    message: {
      id: message.id,
      type: "message",
      role: "assistant",
      model: message.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usageOf(message, 1),
    },
  });
  message.blocks.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } });
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } });
    } else {
      // The real API streams tool input as JSON fragments starting from an empty object.
      send("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
      send("content_block_delta", {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
      });
    }
    send("content_block_stop", { type: "content_block_stop", index });
  });
  send("message_delta", {
    type: "message_delta",
    delta: { stop_reason: message.stopReason, stop_sequence: null },
    usage: { output_tokens: message.outputTokens },
  });
  send("message_stop", { type: "message_stop" });
  response.end();
}

function sendJson(response: http.ServerResponse, status: number, value: unknown): void {
  const payload = JSON.stringify(value);
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  response.end(payload);
}

function sendError(response: http.ServerResponse, status: number, type: string, message: string): void {
  sendJson(response, status, { type: "error", error: { type, message } });
}

/** The `error.type` the real API uses for each status, so the CLI classifies it as usual. */
function errorTypeForStatus(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 529) return "overloaded_error";
  if (status >= 500) return "api_error";
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

export async function startFakeAnthropicApi(responder: AnthropicResponder): Promise<FakeAnthropicApi> {
  const requests: RecordedMessagesRequest[] = [];
  const otherRequests: RecordedOtherRequest[] = [];

  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    const method = request.method ?? "GET";
    const path = request.url ?? "/";
    const pathname = path.split("?")[0] ?? "/";
    const rawBody = await readBody(request);

    if (method === "POST" && pathname === "/v1/messages") {
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        sendError(response, 400, "invalid_request_error", "body is not JSON");
        return;
      }
      const recorded = digestMessagesRequest(path, body);
      requests.push(recorded);
      let reply: AnthropicReply;
      try {
        reply = await responder(recorded);
      } catch (error) {
        // A failing responder is a test bug. 400 is not retried, so the CLI stops at once
        // instead of backing off for minutes as it does on 5xx.
        sendError(response, 400, "invalid_request_error", `fake responder threw: ${String(error)}`);
        return;
      }
      if (reply.error) {
        sendError(response, reply.error.status, errorTypeForStatus(reply.error.status), reply.error.message);
        return;
      }
      const message = buildReplyMessage(recorded, rawBody, reply);
      if (recorded.body?.stream === true) sendStreamedMessage(response, message);
      else sendJsonMessage(response, message);
      return;
    }

    otherRequests.push({ method, path, body: rawBody });
    if (method === "POST" && pathname === "/v1/messages/count_tokens") {
      sendJson(response, 200, { input_tokens: estimateTokens(rawBody) });
    } else if (method === "HEAD" || (method === "GET" && pathname === "/")) {
      // Connectivity probes only care that something answers.
      response.writeHead(200);
      response.end();
    } else {
      sendError(response, 404, "not_found_error", `fake Anthropic API does not serve ${method} ${pathname}`);
    }
  };

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, "api_error", String(error));
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
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
 * Environment for running the real `claude` against `api`, offline and isolated
 * from the machine's own Claude config. Merge it over process.env after removing
 * `CLAUDECODE` and `CLAUDE_CODE_ENTRYPOINT` (claude refuses to run nested when
 * they are set). `home` must be an existing, test-owned folder: sessions are
 * stored under `<home>/.claude/projects/<cwd as a slug>/<session id>.jsonl`, so
 * reuse the same `home` (and working directory) for `--resume`.
 * Checked against claude 2.1.330.
 */
export function claudeEnvironment(api: FakeAnthropicApi, home: string): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: api.url,
    // Required: without a key `claude -p` makes no request and reports "Not logged in".
    ANTHROPIC_API_KEY: "sk-ant-fake-key-for-tests",
    // Keeps the user's ~/.claude.json, settings, hooks, plugins and sessions out of the run.
    HOME: home,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    // Stops telemetry, error reporting and update checks, and the `HEAD /api/hello`
    // connectivity probe otherwise sent to the base URL.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    // Required as root: bypassPermissions is otherwise refused ("cannot be used with root/sudo").
    IS_SANDBOX: "1",
    NO_COLOR: "1",
  };
}
