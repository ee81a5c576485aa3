/**
 * Scripted model APIs: one responder per test answers the real agent CLIs, whatever
 * wire protocol they speak. A `WireProtocol` digests its requests into a
 * `ModelRequest` and turns a `ScriptedReply` into its own answers; this file joins
 * the two over the HTTP core in `http.ts`.
 *
 * Recognising side requests: besides agent turns, CLIs ask the model for session
 * titles and summaries. Those offer no tools (`toolNames` is empty) while agent
 * turns always list theirs, so a responder can answer `toolNames.length === 0` with
 * plain text and script only the requests that have tools.
 *
 * Adding a protocol (the OpenAI Responses API for Codex, the Gemini API for Gemini
 * CLI) is one more module that exports a `WireProtocol`: Gemini's model sits in the
 * path, which a `RegExp` route matches and `digest` reads from `request.pathname`.
 */
import { randomBytes } from 'node:crypto';
import { startServer, StatusError, type Answer, type ErrorAnswer, type JsonRequest, type ReceivedRequest, type SsePause } from './http.js';

/** A request of any protocol, pre-digested so responders stay short. */
export interface ModelRequest {
  /** Request path including the query string, e.g. `/v1/messages?beta=true`. */
  path: string;
  /** The JSON body exactly as the CLI sent it. */
  body: JsonObject;
  model: string;
  stream: boolean;
  /** The system prompt flattened to text. */
  system: string;
  /** Text of the last user message, without tool results. */
  lastUserText: string;
  /** Text of every user message joined by newlines, without tool results. */
  allUserText: string;
  /** Names of the tools offered to the model (empty for side requests such as titles). */
  toolNames: string[];
  /** True when the conversation ends with tool results, i.e. this is a follow-up turn. */
  hasToolResult: boolean;
}

export interface ScriptedToolCall {
  name: string;
  input: Record<string, unknown>;
}

/**
 * What the scripted model says: optional text, then optional tool calls. `error`
 * instead answers with an API error of that HTTP status (the vendor's own body and
 * headers when given: `vendorLimits.ts`). The CLIs retry 429 and 5xx with backoff
 * for minutes unless their retries are bounded (as the test environments do), so
 * use a 4xx such as 400 for a quick failure.
 */
export interface ScriptedReply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  error?: { status: number; message: string } & ErrorAnswer;
  /** Input tokens to report instead of the estimate: a turn that reads a lot, for budget tests. */
  inputTokens?: number;
  /**
   * Streams the text first and the tool calls only after this pause (a model still
   * producing its turn); a client that hangs up meanwhile never gets them.
   */
  toolCallsAfter?: SsePause;
}

/** May answer later (a promise): a model that is still thinking, for tests that interrupt. */
export type Responder = (request: ModelRequest) => ScriptedReply | Promise<ScriptedReply>;

/** A reply ready for a protocol to put on the wire: arguments serialised, usage estimated. */
export interface PlannedReply {
  text: string;
  toolCalls: (ScriptedToolCall & { argumentsJson: string })[];
  inputTokens: number;
  outputTokens: number;
  toolCallsAfter?: SsePause;
}

/** What a protocol reads from its request; `scripted.ts` derives the rest of `ModelRequest`. */
export interface Digest {
  model: string;
  stream: boolean;
  system: string;
  /** Text of each user message in order, `''` for one that holds only tool results. */
  userTexts: string[];
  toolNames: string[];
  hasToolResult: boolean;
}

export interface WireProtocol {
  /** What the CLI's base URL adds to the server's origin: `''` for Anthropic, `'/v1'` for OpenAI's clients. */
  basePath: string;
  /** Where the model turns arrive. */
  route: { method: string; path: string | RegExp };
  digest(request: JsonRequest, body: JsonObject): Digest;
  answer(request: ModelRequest, reply: PlannedReply): Answer;
  /** The protocol's error body for a status, so the CLI classifies the error as usual. */
  errorBody(status: number, message: string): unknown;
}

export interface ModelApi {
  /** The base URL to give the CLI: the origin plus the protocol's `basePath`. */
  url: string;
  /** Every model turn, digested, in order of arrival. */
  requests: ModelRequest[];
  /** Requests to any other path (answered 404): for diagnostics. */
  unexpected: ReceivedRequest[];
  close(): Promise<void>;
}

export async function startModelApi(protocol: WireProtocol, responder: Responder): Promise<ModelApi> {
  const requests: ModelRequest[] = [];
  const server = await startServer({
    errorBody: protocol.errorBody,
    routes: [
      {
        ...protocol.route,
        answer: async (request) => {
          if (!isObject(request.body)) throw new StatusError(400, 'the body must be a JSON object');
          const { userTexts, ...digest } = protocol.digest(request, request.body);
          const digested: ModelRequest = {
            path: request.path,
            body: request.body,
            ...digest,
            lastUserText: userTexts[userTexts.length - 1] ?? '',
            allUserText: userTexts.filter((text) => text !== '').join('\n'),
          };
          requests.push(digested);
          let reply: ScriptedReply;
          try {
            reply = await responder(digested);
          } catch (error) {
            // A throwing responder is a test bug: 400, because a 5xx would have the CLI retry for minutes.
            throw new StatusError(400, `the scripted responder threw: ${String(error)}`);
          }
          if (reply.error) throw new StatusError(reply.error.status, reply.error.message, reply.error);
          return protocol.answer(digested, plan(reply, request.rawBody));
        },
      },
    ],
  });
  return { url: server.origin + protocol.basePath, requests, unexpected: server.unexpected, close: server.close };
}

function plan(reply: ScriptedReply, rawBody: string): PlannedReply {
  const text = reply.text ?? '';
  const toolCalls = (reply.toolCalls ?? []).map((call) => ({ ...call, argumentsJson: JSON.stringify(call.input) }));
  return {
    text,
    toolCalls,
    inputTokens: reply.inputTokens ?? estimateTokens(rawBody),
    outputTokens: estimateTokens(text + toolCalls.map((call) => call.name + call.argumentsJson).join('')),
    toolCallsAfter: reply.toolCallsAfter,
  };
}

/** Roughly four characters a token: usage only needs to be plausible and deterministic. */
function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function fakeId(prefix: string): string {
  return `${prefix}_fake${randomBytes(12).toString('hex')}`;
}

// Small guards for the CLIs' JSON, which is `unknown` until narrowed.

export type JsonObject = { readonly [key: string]: unknown };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectsIn(value: unknown): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

export function stringsIn(values: readonly unknown[]): string[] {
  return values.filter((value): value is string => typeof value === 'string');
}

/** Message content as both Anthropic and Chat Completions send it: a string, or parts of which `{type: "text"}` count. */
export function textParts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  return stringsIn(objectsIn(content).map((part) => (part.type === 'text' ? part.text : undefined)));
}
