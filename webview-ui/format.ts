import type { Usage } from '../src/sessionFormat/agentEvents.js';
import { formatCount } from '../src/text/humanize.js';

export { formatCount, formatDuration, relativeTime } from '../src/text/humanize.js';

export function formatCost(usd: number | null | undefined): string | null {
  if (usd === null || usd === undefined) return null;
  // Cents for dollars; three significant digits below a dollar, where runs usually cost.
  if (usd > 0 && usd < 0.0001) return '< $0.0001';
  return usd >= 1 ? `$${usd.toFixed(2)}` : `$${Number(usd.toPrecision(3))}`;
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
