import type { Usage } from '../sessionFormat/agentEvents.js';
import { previewLine } from '../text/truncate.js';

/** Helpers for the adapters that turn each CLI's output into agent events (`sessionFormat/agentEvents.ts`). */

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
