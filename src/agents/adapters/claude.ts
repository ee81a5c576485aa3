import { z } from 'zod';
import { summarizeToolInput, clip, type AgentEvent } from '../agentEvents.js';
import { parseJsonLine, unstructuredLine, type AgentAdapter, type InvocationRequest, type StreamParser } from '../agentAdapter.js';

/**
 * Claude Code (`claude -p --output-format stream-json --verbose`). The prompt goes
 * on stdin, which is then closed (`-p` waits forever on an open pipe).
 */

const block = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  content: z.unknown().optional(),
  is_error: z.boolean().optional(),
});

const claudeLine = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('system'), subtype: z.string().optional(), session_id: z.string().optional() }),
  z.looseObject({
    type: z.literal('assistant'),
    session_id: z.string().optional(),
    message: z.looseObject({ content: z.array(block).or(z.string()).optional() }),
  }),
  z.looseObject({
    type: z.literal('user'),
    message: z.looseObject({ content: z.array(block).or(z.string()).optional() }),
  }),
  z.looseObject({
    type: z.literal('result'),
    subtype: z.string().optional(),
    is_error: z.boolean().optional(),
    result: z.string().optional(),
    session_id: z.string().optional(),
    total_cost_usd: z.number().optional(),
    usage: z
      .looseObject({
        input_tokens: z.number().optional(),
        output_tokens: z.number().optional(),
        cache_creation_input_tokens: z.number().optional(),
        cache_read_input_tokens: z.number().optional(),
      })
      .optional(),
  }),
]);

/**
 * Tools taken from the critic: it judges, it does not edit. Shell commands stay, so
 * it can run the tests; whatever it changes anyway is reverted by the runner.
 */
export const CRITIC_DISALLOWED_TOOLS = 'Edit,MultiEdit,Write,NotebookEdit';

export const claudeAdapter: AgentAdapter = {
  kind: 'claude',
  displayName: 'Claude Code',
  defaultBinary: 'claude',
  installHint: 'npm install -g @anthropic-ai/claude-code',
  canResume: true,
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
    return { args, stdin: request.prompt, env: {} };
  },

  createParser(): StreamParser {
    let result: { isError: boolean; detail: string; text: string } | undefined;
    return {
      parseLine(line) {
        const json = parseJsonLine(line);
        if (json === undefined) return unstructuredLine(line);
        const parsed = claudeLine.safeParse(json);
        if (!parsed.success) return []; // other event types (stream_event, rate limits): not ours to show
        const event = parsed.data;
        const events: AgentEvent[] = [];
        switch (event.type) {
          case 'system':
            if (event.subtype === 'init' && event.session_id) events.push({ kind: 'session', agentSessionId: event.session_id });
            break;
          case 'assistant':
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
            const usage = event.usage;
            events.push({
              kind: 'usage',
              total: {
                inputTokens: usage?.input_tokens,
                outputTokens: usage?.output_tokens,
                cacheReadTokens: usage?.cache_read_input_tokens,
                cacheWriteTokens: usage?.cache_creation_input_tokens,
                costUsd: event.total_cost_usd,
              },
            });
            const isError = event.is_error === true || (event.subtype !== undefined && event.subtype !== 'success');
            result = { isError, detail: event.subtype ?? '', text: event.result ?? '' };
            events.push({ kind: 'result', text: event.result ?? '', isError, detail: event.subtype });
            break;
          }
        }
        return events;
      },
      finish(exitCode) {
        if (!result) {
          return { succeeded: false, failureReason: `Claude Code exited (code ${exitCode ?? 'none'}) without a final result event`, finalText: null };
        }
        if (result.isError) {
          return { succeeded: false, failureReason: `Claude Code reported an error (${result.detail || 'is_error'}): ${clip(result.text)}`, finalText: result.text };
        }
        return { succeeded: true, failureReason: null, finalText: result.text };
      },
    };
  },
};

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : '')).join(' ');
  }
  return '';
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
