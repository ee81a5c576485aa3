import { z } from 'zod';
import { previewLine } from '../text/truncate.js';

/**
 * One event model for every agent CLI: whatever each prints, the runner, the
 * console, the editor and the sidecar record see these.
 */

export const usageSchema = z.object({
  inputTokens: z.number().nonnegative().optional(),
  outputTokens: z.number().nonnegative().optional(),
  cacheReadTokens: z.number().nonnegative().optional(),
  cacheWriteTokens: z.number().nonnegative().optional(),
  /** Only some agents report money (Claude Code, OpenCode). */
  costUsd: z.number().nonnegative().optional(),
});
export type Usage = z.infer<typeof usageSchema>;

export const agentEventSchema = z.discriminatedUnion('kind', [
  /** Assistant text; `delta` when it continues the previous text without a break. */
  z.object({ kind: z.literal('text'), text: z.string(), delta: z.boolean().optional() }),
  z.object({ kind: z.literal('tool_use'), id: z.string().optional(), name: z.string(), summary: z.string() }),
  z.object({ kind: z.literal('tool_result'), id: z.string().optional(), isError: z.boolean(), summary: z.string() }),
  /** Running totals for this agent run so far. */
  z.object({ kind: z.literal('usage'), total: usageSchema }),
  z.object({ kind: z.literal('session'), agentSessionId: z.string() }),
  z.object({ kind: z.literal('result'), text: z.string(), isError: z.boolean(), detail: z.string().optional() }),
  z.object({ kind: z.literal('error'), message: z.string() }),
]);
export type AgentEvent = z.infer<typeof agentEventSchema>;

/** A short, single-line description of a tool call's input: the path or command, not the file body. */
export function summarizeToolInput(input: unknown): string {
  if (input === null || typeof input !== 'object') return input === undefined ? '' : clip(String(input));
  const record = input as Record<string, unknown>;
  for (const key of ['file_path', 'filePath', 'path', 'command', 'cmd', 'pattern', 'url', 'query', 'description']) {
    const value = record[key];
    if (typeof value === 'string' && value.length > 0) return clip(value);
    if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return clip(value.join(' '));
  }
  return clip(JSON.stringify(input));
}

/** One line of at most `maxChars`, cut on a character boundary. */
export function clip(text: string, maxChars = 200): string {
  return previewLine(text, maxChars);
}

export function addUsage(a: Usage, b: Usage): Usage {
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  return {
    inputTokens: sum(a.inputTokens, b.inputTokens),
    outputTokens: sum(a.outputTokens, b.outputTokens),
    cacheReadTokens: sum(a.cacheReadTokens, b.cacheReadTokens),
    cacheWriteTokens: sum(a.cacheWriteTokens, b.cacheWriteTokens),
    costUsd: sum(a.costUsd, b.costUsd),
  };
}
