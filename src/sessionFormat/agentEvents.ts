import * as z from './zod.js';

/**
 * One event model for every agent CLI: whatever each prints, the runner, the
 * console, the editor and the sidecar record see these.
 */

const tokens = z.optional(z.number().check(z.nonnegative()));

export const usageSchema = z.object({
  inputTokens: tokens,
  outputTokens: tokens,
  cacheReadTokens: tokens,
  cacheWriteTokens: tokens,
  /** Only some agents report money (Claude Code, OpenCode). */
  costUsd: tokens,
});
export type Usage = z.infer<typeof usageSchema>;

export const agentEventSchema = z.discriminatedUnion('kind', [
  /** Assistant text; `delta` when it continues the previous text without a break. */
  z.object({ kind: z.literal('text'), text: z.string(), delta: z.optional(z.boolean()) }),
  z.object({ kind: z.literal('tool_use'), id: z.optional(z.string()), name: z.string(), summary: z.string() }),
  z.object({ kind: z.literal('tool_result'), id: z.optional(z.string()), isError: z.boolean(), summary: z.string() }),
  /** Running totals for this agent run so far, and the model that used them when the agent says. */
  z.object({ kind: z.literal('usage'), total: usageSchema, model: z.optional(z.string()) }),
  z.object({ kind: z.literal('session'), agentSessionId: z.string() }),
  z.object({ kind: z.literal('result'), text: z.string(), isError: z.boolean(), detail: z.optional(z.string()) }),
  z.object({ kind: z.literal('error'), message: z.string() }),
]);
export type AgentEvent = z.infer<typeof agentEventSchema>;

/**
 * What an agent's stream held that its adapter did not know (a newer or older CLI):
 * events of unknown types, and unknown fields of known ones, ignored and counted.
 */
export const streamDriftSchema = z.object({
  unknownEvents: z.int().check(z.nonnegative()),
  unknownFields: z.int().check(z.nonnegative()),
  /** A few of them by name (`event turn.diff`, `field result.new_field`). */
  examples: z.array(z.string()),
});
export type StreamDrift = z.infer<typeof streamDriftSchema>;
