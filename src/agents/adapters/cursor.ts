import * as z from '../../sessionFormat/zod.js';
import { clip, summarizeToolInput } from '../agentEventHelpers.js';
import type { AgentAdapter, StreamParser } from '../agentAdapter.js';
import { jsonLineParser } from '../jsonLineParser.js';
import type { KnownEvents } from '../streamDrift.js';

/**
 * Cursor (`cursor-agent -p --output-format stream-json`). Without `--force` print
 * mode only proposes edits and writes nothing: the original adapter's bug. Closed
 * source, so the shapes are read tolerantly. No token or cost data.
 */

const cursorLine = z.looseObject({
  type: z.string(),
  subtype: z.optional(z.string()),
  session_id: z.optional(z.string()),
  message: z.optional(z.looseObject({ content: z.optional(z.array(z.looseObject({ type: z.string(), text: z.optional(z.string()) }))) })),
  tool_call: z.optional(z.record(z.string(), z.unknown())),
  call_id: z.optional(z.string()),
  is_error: z.optional(z.boolean()),
  result: z.optional(z.string()),
});

/**
 * The events Cursor documents for `--output-format stream-json`. No version could
 * be run here: fields are not checked (`null`), only event types.
 */
const KNOWN_EVENTS: KnownEvents = { system: null, user: null, assistant: null, tool_call: null, result: null, thinking: null };

export const cursorAdapter: AgentAdapter = {
  kind: 'cursor',
  displayName: 'Cursor',
  defaultBinary: 'cursor-agent',
  installHint: 'see https://cursor.com/cli',
  permissionFlags: ['--force', '-f', '--yolo', '--mode', '--sandbox', '--approve-mcps', '--workspace', '--trust'],
  canResume: true,
  // No package to run here: proven only against recorded output (test/fixtures/cassettes/cursor-*.jsonl).
  testedVersions: [],
  costCoversAgentSession: false,
  diagnose: () => null,

  invocation(request) {
    const args = ['-p', '--output-format', 'stream-json', '--trust'];
    args.push(...(request.role === 'actor' ? ['--force'] : ['--mode', 'ask']));
    if (request.model) args.push('--model', request.model);
    if (request.resumeSessionId) args.push('--resume', request.resumeSessionId);
    // cursor-agent takes the prompt as an argument; after `--` it cannot be read as a flag.
    return { args, trailingArgs: ['--', request.prompt], stdin: null, env: {} };
  },

  createParser(): StreamParser {
    let result: { isError: boolean; text: string } | undefined;
    return jsonLineParser({
      known: KNOWN_EVENTS,
      schema: cursorLine,
      read(event, events) {
        if (event.session_id && (event.type === 'system' || event.type === 'result')) {
          events.push({ kind: 'session', agentSessionId: event.session_id });
        }
        if (event.type === 'assistant') {
          for (const part of event.message?.content ?? []) if (part.text) events.push({ kind: 'text', text: part.text });
        } else if (event.type === 'tool_call' && event.tool_call) {
          // `{ "<name>ToolCall": { args, result } }`
          const [key, value] = Object.entries(event.tool_call)[0] ?? ['tool', undefined];
          const name = key.replace(/ToolCall$/, '');
          const body = (value ?? {}) as { args?: unknown; result?: unknown };
          if (event.subtype === 'started') events.push({ kind: 'tool_use', id: event.call_id, name, summary: summarizeToolInput(body.args) });
          if (event.subtype === 'completed') {
            const failed = body.result !== null && typeof body.result === 'object' && 'error' in body.result;
            events.push({ kind: 'tool_result', id: event.call_id, isError: failed, summary: clip(JSON.stringify(body.result ?? '')) });
          }
        } else if (event.type === 'result') {
          result = { isError: event.is_error === true || (event.subtype !== undefined && event.subtype !== 'success'), text: event.result ?? '' };
          events.push({ kind: 'result', text: result.text, isError: result.isError, detail: event.subtype });
        }
      },
      finish(exitCode) {
        if (!result)
          return {
            succeeded: false,
            failureReason: `cursor-agent exited (code ${exitCode ?? 'none'}) without a final result event: its output ended before the turn did`,
            finalText: null,
          };
        if (result.isError) return { succeeded: false, failureReason: `cursor-agent reported an error: ${clip(result.text)}`, finalText: result.text };
        return { succeeded: true, failureReason: null, finalText: result.text };
      },
    });
  },
};
