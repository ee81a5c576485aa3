import type { Usage } from '../src/agents/agentEvents.js';
import { formatCount } from '../src/text/humanize.js';

export { formatCount, formatDuration, relativeTime } from '../src/text/humanize.js';

export function formatCost(usd: number | null | undefined): string | null {
  if (usd === null || usd === undefined) return null;
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function usageText(usage: Usage | null): string | null {
  if (!usage) return null;
  const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  const parts = [formatCost(usage.costUsd), tokens > 0 ? `${formatCount(tokens)} tokens` : null].filter(Boolean);
  return parts.length > 0 ? parts.join(' · ') : null;
}

export function formatTimestamp(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
