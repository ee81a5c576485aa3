/**
 * The model APIs' own answers when a limit is reached, as the vendors send them (the
 * bodies and headers docs/agent-limits.md cites), for scripted APIs to answer a
 * real CLI's request with: a usage limit with its reset, a quota, a refused key.
 */
import type { ScriptedReply } from './scripted.js';

const epochSeconds = (at: Date) => String(Math.ceil(at.getTime() / 1000));

/**
 * Anthropic's 429 when a subscription's usage limit is reached: the
 * `anthropic-ratelimit-unified-*` headers say it was rejected and when it resets.
 * Claude Code says so only when logged in with a subscription (`CLAUDE_CODE_OAUTH_TOKEN`).
 */
export function anthropicUsageLimit(resetsAt: Date): ScriptedReply {
  const reset = epochSeconds(resetsAt);
  return {
    error: {
      status: 429,
      message: "This request would exceed your account's rate limit. Please try again later.",
      body: { type: 'error', error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." } },
      headers: {
        'anthropic-ratelimit-unified-status': 'rejected',
        'anthropic-ratelimit-unified-reset': reset,
        'anthropic-ratelimit-unified-representative-claim': 'five_hour',
        'anthropic-ratelimit-unified-5h-status': 'rejected',
        'anthropic-ratelimit-unified-5h-reset': reset,
      },
    },
  };
}

/** Anthropic's 401 for a key it does not know. */
export function anthropicInvalidKey(): ScriptedReply {
  return {
    error: { status: 401, message: 'invalid x-api-key', body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } },
  };
}

/** The Responses API's 429 when a ChatGPT plan's usage limit is reached, with its reset (what Codex reads). */
export function openAiUsageLimit(resetsAt: Date): ScriptedReply {
  const message = 'The usage limit has been reached';
  const resetsInSeconds = Math.max(0, Math.ceil((resetsAt.getTime() - Date.now()) / 1000));
  return {
    error: {
      status: 429,
      message,
      body: {
        error: { type: 'usage_limit_reached', message, plan_type: 'plus', resets_at: Number(epochSeconds(resetsAt)), resets_in_seconds: resetsInSeconds },
      },
    },
  };
}

/**
 * The Gemini API's 429 `RESOURCE_EXHAUSTED` for a free-tier quota used up, as Google
 * sends it: the message with the delay it states (`Please retry in …s.`), a
 * `QuotaFailure` naming the quota, any other details, then `RetryInfo`.
 */
function geminiQuotaFailure(quota: { limit: number; model: string; retryInSecs: number; otherDetails?: unknown[] }): ScriptedReply {
  const metric = 'generativelanguage.googleapis.com/generate_content_free_tier_requests';
  const message =
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n' +
    `* Quota exceeded for metric: ${metric}, limit: ${quota.limit}, model: ${quota.model}\n` +
    `Please retry in ${quota.retryInSecs}s.`;
  return {
    error: {
      status: 429,
      message,
      body: {
        error: {
          code: 429,
          message,
          status: 'RESOURCE_EXHAUSTED',
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
              violations: [
                {
                  quotaMetric: metric,
                  quotaId: 'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
                  quotaDimensions: { location: 'global', model: quota.model },
                  quotaValue: String(quota.limit),
                },
              ],
            },
            ...(quota.otherDetails ?? []),
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${Math.floor(quota.retryInSecs)}s` },
          ],
        },
      },
    },
  };
}

/**
 * The Gemini API's 429 `RESOURCE_EXHAUSTED` for a quota with no requests left
 * (`limit: 0`), with the delay it states (`Please retry in …s.`, `RetryInfo`).
 */
export function geminiQuotaExhausted(retryInSecs: number): ScriptedReply {
  return geminiQuotaFailure({ limit: 0, model: 'gemini-2.5-pro', retryInSecs });
}

/**
 * The Gemini API's 429 `RESOURCE_EXHAUSTED` for a per-day quota used up (a
 * `QuotaFailure` whose `quotaId` says `PerDay`), as Google sends it: Gemini CLI
 * rewords it as "You have exhausted your daily quota on this model." and drops the
 * delay.
 */
export function geminiDailyQuotaExhausted(): ScriptedReply {
  const help = {
    '@type': 'type.googleapis.com/google.rpc.Help',
    links: [{ description: 'Learn more about Gemini API quotas', url: 'https://ai.google.dev/gemini-api/docs/rate-limits' }],
  };
  return geminiQuotaFailure({ limit: 250, model: 'gemini-2.5-flash', retryInSecs: 41.2, otherDetails: [help] });
}

/** Anthropic's 403 for a key that may not use the API (`permission_error`). */
export function anthropicForbidden(): ScriptedReply {
  const message = 'Your API key does not have permission to use the specified resource.';
  return { error: { status: 403, message, body: { type: 'error', error: { type: 'permission_error', message } } } };
}
