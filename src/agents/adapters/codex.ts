import * as z from '../../sessionFormat/zod.js';
import type { Usage } from '../../sessionFormat/agentEvents.js';
import { clip } from '../agentEventHelpers.js';
import type { AgentAdapter, StreamParser } from '../agentAdapter.js';
import { jsonLineParser } from '../jsonLineParser.js';
import type { KnownEvents } from '../streamDrift.js';
import { agentLimit, limitKindOfStatus, NETWORK_FAILURE, parseWallClock, type AgentLimit } from '../agentLimits.js';

/**
 * Codex (`codex exec --json`). Exit 0 does not prove the turn finished: success
 * needs `turn.completed`. Its usage is the thread's running total, so it replaces
 * rather than adds. Tokens only, no money.
 */

const item = z.looseObject({
  id: z.optional(z.string()),
  type: z.string(),
  text: z.optional(z.string()),
  command: z.optional(z.string()),
  aggregated_output: z.optional(z.string()),
  exit_code: z.optional(z.nullable(z.number())),
  status: z.optional(z.string()),
  changes: z.optional(z.array(z.looseObject({ path: z.string(), kind: z.optional(z.string()) }))),
  server: z.optional(z.string()),
  tool: z.optional(z.string()),
});

const codexLine = z.looseObject({
  type: z.string(),
  thread_id: z.optional(z.string()),
  item: z.optional(item),
  usage: z.optional(
    z.looseObject({ input_tokens: z.optional(z.number()), cached_input_tokens: z.optional(z.number()), output_tokens: z.optional(z.number()) }),
  ),
  error: z.optional(z.looseObject({ message: z.optional(z.string()) })),
  message: z.optional(z.string()),
});

/** `codex exec --json` as 0.169.0 prints it (its exec event types and item types). */
const KNOWN_EVENTS: KnownEvents = {
  'thread.started': ['type', 'thread_id'],
  'turn.started': ['type'],
  'turn.completed': ['type', 'usage'],
  'turn.failed': ['type', 'error'],
  'item.started': ['type', 'item'],
  'item.updated': ['type', 'item'],
  'item.completed': ['type', 'item'],
  error: ['type', 'message'],
};
const KNOWN_ITEM_TYPES = new Set([
  'agent_message',
  'reasoning',
  'command_execution',
  'file_change',
  'mcp_tool_call',
  'collab_tool_call',
  'web_search',
  'todo_list',
  'error',
]);

export const codexAdapter: AgentAdapter = {
  kind: 'codex',
  displayName: 'Codex',
  defaultBinary: 'codex',
  installHint: 'npm install -g @openai/codex',
  // A `-c` override or a profile can set the sandbox and the approval policy too.
  permissionFlags: [
    '--sandbox',
    '-s',
    '--full-auto',
    '--dangerously-bypass-approvals-and-sandbox',
    '--yolo',
    '--ask-for-approval',
    '-a',
    '--config',
    '-c',
    '--profile',
    '-p',
    '--add-dir',
    '--cd',
    '-C',
    '--enable',
    '--disable',
  ],
  canResume: true,
  testedVersions: ['0.169.0'],
  costCoversAgentSession: false,
  diagnose: () => null,

  invocation(request) {
    const args = ['exec', '--json', '--skip-git-repo-check'];
    // The actor may write inside the workspace; the critic only reads.
    args.push('--sandbox', request.role === 'actor' ? 'workspace-write' : 'read-only');
    if (request.model) args.push('--model', request.model);
    // `exec`'s options come before `resume`: 0.169.0 refuses --sandbox after it. The prompt comes on stdin (`-`).
    const trailingArgs = request.resumeSessionId ? ['resume', request.resumeSessionId, '-'] : ['-'];
    return { args, trailingArgs, stdin: request.prompt, env: {} };
  },

  createParser(): StreamParser {
    let completed = false;
    let failure: string | null = null;
    let lastError: string | null = null;
    let lastMessage = '';
    return jsonLineParser({
      known: KNOWN_EVENTS,
      schema: codexLine,
      read(event, events, drift) {
        if (event.type === 'item.completed' && event.item && !KNOWN_ITEM_TYPES.has(event.item.type)) drift.unknown(`item ${event.item.type}`);
        switch (event.type) {
          case 'thread.started':
            if (event.thread_id) events.push({ kind: 'session', agentSessionId: event.thread_id });
            break;
          case 'item.started':
          case 'item.completed': {
            const it = event.item;
            if (!it) break;
            const done = event.type === 'item.completed';
            if (it.type === 'agent_message' && done && it.text) {
              lastMessage = it.text;
              events.push({ kind: 'text', text: it.text });
            } else if (it.type === 'command_execution') {
              if (!done) events.push({ kind: 'tool_use', id: it.id, name: 'shell', summary: clip(it.command ?? '') });
              else events.push({ kind: 'tool_result', id: it.id, isError: (it.exit_code ?? 0) !== 0, summary: clip(it.aggregated_output ?? '') });
            } else if (it.type === 'file_change' && done) {
              const paths = (it.changes ?? []).map((change) => `${change.kind ?? 'edit'} ${change.path}`).join(', ');
              events.push({ kind: 'tool_use', id: it.id, name: 'file_change', summary: clip(paths) });
            } else if (it.type === 'mcp_tool_call' && !done) {
              events.push({ kind: 'tool_use', id: it.id, name: `${it.server ?? 'mcp'}.${it.tool ?? 'tool'}`, summary: '' });
            }
            break;
          }
          case 'turn.completed': {
            completed = true;
            const usage: Usage = {
              inputTokens: event.usage?.input_tokens,
              outputTokens: event.usage?.output_tokens,
              cacheReadTokens: event.usage?.cached_input_tokens,
            };
            events.push({ kind: 'usage', total: usage });
            events.push({ kind: 'result', text: lastMessage, isError: false });
            break;
          }
          case 'turn.failed': {
            failure = event.error?.message ?? event.message ?? 'unknown error';
            events.push({ kind: 'error', message: failure });
            break;
          }
          case 'error': {
            // Also sent for passing trouble ("Reconnecting… 2/5"): only fatal when the turn never completes.
            lastError = event.error?.message ?? event.message ?? 'unknown error';
            events.push({ kind: 'error', message: lastError });
            break;
          }
        }
      },
      finish(exitCode) {
        const verdict = { finalText: lastMessage || null };
        if (failure) return { ...verdict, succeeded: false, failureReason: `Codex reported an error: ${failure}`, limit: codexLimit(failure, Date.now()) };
        if (!completed) {
          const reason = lastError
            ? `Codex reported an error: ${lastError}`
            : `Codex exited (code ${exitCode ?? 'none'}) without completing its turn: its output ended before its final turn.completed event`;
          return { ...verdict, succeeded: false, failureReason: reason, limit: lastError ? codexLimit(lastError, Date.now()) : null };
        }
        return { ...verdict, succeeded: true, failureReason: null };
      },
    });
  },
};

/**
 * Codex's failed turn (its `turn.failed` or last `error` message) as a limit
 * (0.169.0; docs/agent-limits.md): `You’ve hit your usage limit. … try again at
 * 6:23 AM.` (local time; a later day as `Nov 27th, 2026 6:23 AM`), a status it gave
 * up on (`exceeded retry limit, last status: 429 Too Many Requests`, `unexpected
 * status 503 Service Unavailable: …`), or a network that failed.
 */
export function codexLimit(message: string, now: number): AgentLimit | null {
  if (/You[’']ve hit your usage limit/.test(message)) {
    const at = /try again at (.*?)\.?$/im.exec(message)?.[1];
    return agentLimit('usage_limit', message, at === undefined ? null : parseWallClock(at, now));
  }
  const status = /(?:last status|unexpected status):? (\d{3})\b/.exec(message)?.[1];
  const kind = status === undefined ? null : limitKindOfStatus(Number(status));
  if (kind) return agentLimit(kind, message);
  if (/^Server is busy|server_overloaded|Selected model is at capacity/i.test(message)) return agentLimit('overloaded', message);
  if (/stream disconnected before completion/i.test(message) || NETWORK_FAILURE.test(message)) return agentLimit('outage', message);
  return null;
}
