import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { parseRetryAfter, parseRetryDelay, parseWallClock, type AgentLimit } from '../../src/agents/agentLimits.js';
import type { AgentKind } from '../../src/agents/agentKinds.js';
import { claudeLimit } from '../../src/agents/adapters/claude.js';
import { codexLimit } from '../../src/agents/adapters/codex.js';
import { geminiLimit } from '../../src/agents/adapters/gemini.js';
import { openCodeLimit } from '../../src/agents/adapters/opencode.js';
import {
  BACKOFF_CAP_SECS,
  BACKOFF_FIRST_SECS,
  MAX_STATED_WAIT_SECS,
  retryAt,
  USAGE_LIMIT_DEFAULT_WAIT_SECS,
  USAGE_LIMIT_BACKOFF_FIRST_SECS,
} from '../../src/loop/outlastLimits.js';
import { repoRoot } from '../support/testEnvironment.js';

/** A recorded run (test/fixtures/cassettes, recorded from the real CLIs: docs/agent-limits.md) through its adapter's parser. */
function failedRun(kind: AgentKind, cassette: string): { limit: AgentLimit | null; unknown: number } {
  const parser = adapterFor(kind).createParser();
  const text = fs.readFileSync(path.join(repoRoot(), 'test', 'fixtures', 'cassettes', cassette), 'utf8');
  for (const line of text.split('\n').filter((each) => each !== '')) parser.parseLine(line);
  const verdict = parser.finish(1);
  return { limit: verdict.limit ?? null, unknown: verdict.drift.unknownEvents + verdict.drift.unknownFields };
}

const HOUR = 3_600_000;
/** 2026-11-26 05:21 UTC: 06:21 in Paris, 00:21 in New York. */
const NOW = Date.UTC(2026, 10, 26, 5, 21, 46);
const local = (hour: number, minute: number, dayOffset = 0) => {
  const today = new Date(NOW);
  return new Date(today.getFullYear(), today.getMonth(), today.getDate() + dayOffset, hour, minute).getTime();
};

describe("agents' limits, read from what each CLI prints", () => {
  describe('Claude Code', () => {
    it('its usage limit: the reset from the rate_limit_event, exactly; every field of the recording known', () => {
      const { limit, unknown } = failedRun('claude', 'claude-usage-limit.jsonl');
      assert.equal(limit?.kind, 'usage_limit');
      assert.equal(limit?.until, 1_795_670_625_000);
      assert.equal(limit?.message, "You've hit your 5-hour limit · resets 6:23am (Europe/Paris)");
      assert.equal(unknown, 0);
    });

    it('its usage limit without the event: the reset read from its words, in the zone it names, today or on the date it gives', () => {
      const words = (text: string) => claudeLimit({ text, apiStatus: 429, apiError: 'usage_limit_reached', resetsAt: null }, NOW);
      assert.equal(words("You've hit your 5-hour limit · resets 6:23am (Europe/Paris)")?.until, Date.UTC(2026, 10, 26, 5, 23));
      assert.equal(words("You've hit your 5-hour limit · resets 2:31am (America/New_York)")?.until, Date.UTC(2026, 10, 26, 7, 31));
      assert.equal(words("You've hit your weekly limit · resets Nov 29, 12:31am (America/New_York)")?.until, Date.UTC(2026, 10, 29, 5, 31));
      // 06:00 in Paris has passed at 06:21: the next one is tomorrow's.
      assert.equal(words("You've hit your session limit · resets 6am (Europe/Paris)")?.until, Date.UTC(2026, 10, 27, 5, 0));
      assert.equal(words("You've hit your session limit")?.until, null);
      // As earlier versions said it (anthropics/claude-code#15064, slopus/happy#465).
      const older = (text: string) => claudeLimit({ text, apiStatus: null, apiError: null, resetsAt: null }, NOW);
      assert.deepEqual(older('Claude AI usage limit reached|1795672800'), {
        kind: 'usage_limit',
        until: 1_795_672_800_000,
        message: 'Claude AI usage limit reached|1795672800',
      });
      assert.equal(older('Claude usage limit reached. Your limit will reset at 9am (America/Chicago).')?.until, Date.UTC(2026, 10, 26, 15, 0));
      assert.equal(older("You've hit your limit · resets 1pm (Europe/Lisbon)")?.until, Date.UTC(2026, 10, 26, 13, 0));
    });

    it('a 529, a 500, a refused key: overloaded, outage, auth; a 429 without the usage limit is a rate limit', () => {
      assert.equal(failedRun('claude', 'claude-overloaded.jsonl').limit?.kind, 'overloaded');
      assert.equal(failedRun('claude', 'claude-outage.jsonl').limit?.kind, 'outage');
      const auth = failedRun('claude', 'claude-auth.jsonl');
      assert.equal(auth.limit?.kind, 'auth');
      assert.equal(auth.unknown, 0);
      const rateLimited = claudeLimit(
        {
          text: "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
          apiStatus: 429,
          apiError: null,
          resetsAt: null,
        },
        NOW,
      );
      assert.equal(rateLimited?.kind, 'rate_limited');
      assert.equal(claudeLimit({ text: 'API Error: Connection error.', apiStatus: null, apiError: null, resetsAt: null }, NOW)?.kind, 'outage');
      assert.equal(claudeLimit({ text: 'The tests fail.', apiStatus: null, apiError: null, resetsAt: null }, NOW), null);
    });

    it('a run that succeeded or failed at its work has no limit', () => {
      assert.equal(failedRun('claude', 'claude-critic-continue.jsonl').limit, null);
    });
  });

  describe('Codex', () => {
    it('its usage limit: "try again at 6:23 AM." in local time, today or on the date it gives', () => {
      const { limit, unknown } = failedRun('codex', 'codex-usage-limit.jsonl');
      assert.equal(limit?.kind, 'usage_limit');
      assert.match(limit!.message, /^You’ve hit your usage limit\./);
      assert.equal(unknown, 0);
      const words = (at: string) =>
        codexLimit(
          `You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at ${at}.`,
          NOW,
        );
      const inAnHour = new Date(NOW + HOUR);
      const hour12 = inAnHour.getHours() % 12 || 12;
      const clock = `${hour12}:${String(inAnHour.getMinutes()).padStart(2, '0')} ${inAnHour.getHours() < 12 ? 'AM' : 'PM'}`;
      assert.equal(words(clock)?.until, local(inAnHour.getHours(), inAnHour.getMinutes(), inAnHour.getDate() === new Date(NOW).getDate() ? 0 : 1));
      assert.equal(words('Nov 28th, 2026 6:23 AM')?.until, new Date(2026, 10, 28, 6, 23).getTime());
    });

    it('a 429 it gave up on, a 503, a refused key: rate_limited, overloaded, auth', () => {
      assert.equal(failedRun('codex', 'codex-rate-limited.jsonl').limit?.kind, 'rate_limited');
      assert.equal(failedRun('codex', 'codex-outage.jsonl').limit?.kind, 'overloaded');
      assert.equal(failedRun('codex', 'codex-auth.jsonl').limit?.kind, 'auth');
      assert.equal(codexLimit('unexpected status 502 Bad Gateway: upstream, url: https://api.openai.com/v1/responses', NOW)?.kind, 'outage');
      assert.equal(codexLimit('stream disconnected before completion: error sending request', NOW)?.kind, 'outage');
      // Billing, not a limit that resets: a failure like any other.
      assert.equal(codexLimit('Quota exceeded. Check your plan and billing details.', NOW), null);
      // Its documented failed turn is a stream cut short: an outage.
      assert.equal(failedRun('codex', 'codex-failed.jsonl').limit?.kind, 'outage');
    });
  });

  describe('Gemini CLI', () => {
    it('a quota it gave up on (RESOURCE_EXHAUSTED): a usage limit until the delay it states', () => {
      const { limit } = failedRun('gemini', 'gemini-quota.jsonl');
      assert.equal(limit?.kind, 'usage_limit');
      const message = limit!.message;
      assert.equal(geminiLimit(message, NOW)?.until, NOW + 3500);
      assert.equal(
        geminiLimit('[API Error: {"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]', NOW)?.kind,
        'auth',
      );
      assert.equal(
        geminiLimit('[API Error: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}]', NOW)?.kind,
        'overloaded',
      );
      assert.equal(geminiLimit('The tool failed.', NOW), null);
    });

    it('its daily quota ("You have exhausted your daily quota on this model.", no delay): a usage limit until the next midnight Pacific time', () => {
      const { limit } = failedRun('gemini', 'gemini-daily-quota.jsonl');
      assert.equal(limit?.kind, 'usage_limit');
      assert.match(limit!.message, /^\[API Error: You have exhausted your daily quota on this model\.\]/);
      // 2026-11-26 05:21 UTC is 21:21 on the 25th in California (PST, UTC−8): the day ends at 08:00 UTC.
      assert.equal(geminiLimit(limit!.message, NOW)?.until, Date.UTC(2026, 10, 26, 8, 0));
      // In summer (PDT, UTC−7).
      assert.equal(geminiLimit(limit!.message, Date.UTC(2026, 6, 1, 12, 0))?.until, Date.UTC(2026, 6, 2, 7, 0));
    });

    it('a model out of capacity is an overloaded API; any other 429 a rate limit, "Suggested retry after 60s." its delay', () => {
      assert.deepEqual(geminiLimit('[API Error: MODEL_CAPACITY_EXHAUSTED]\nPlease wait and try again later.', NOW), {
        kind: 'overloaded',
        until: null,
        message: '[API Error: MODEL_CAPACITY_EXHAUSTED]\nPlease wait and try again later.',
      });
      const perMinute =
        '[API Error: Resource has been exhausted (e.g. check quota).\nSuggested retry after 60s.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method';
      assert.deepEqual(geminiLimit(perMinute, NOW), { kind: 'rate_limited', until: NOW + 60_000, message: perMinute });
    });
  });

  describe('OpenCode', () => {
    it("a provider's APIError by its status and retry-after; a refused key is auth", () => {
      assert.equal(failedRun('opencode', 'opencode-auth.jsonl').limit?.kind, 'auth');
      const apiError = (statusCode: number, headers: Record<string, string> = {}) => ({
        name: 'APIError',
        data: { message: 'Rate limit reached for requests', statusCode, isRetryable: true, responseHeaders: headers },
      });
      assert.deepEqual(openCodeLimit(apiError(429, { 'retry-after': '2' }), NOW), {
        kind: 'rate_limited',
        until: NOW + 2000,
        message: 'Rate limit reached for requests',
      });
      assert.equal(openCodeLimit(apiError(503), NOW)?.kind, 'overloaded');
      assert.equal(openCodeLimit(apiError(500), NOW)?.kind, 'outage');
      assert.equal(openCodeLimit({ name: 'UnknownError', data: { message: 'something else' } }, NOW), null);
    });
  });

  describe('times', () => {
    it('wall clocks: minutes optional, a.m. and p.m., 12 o’clock, a zone unknown refused', () => {
      assert.equal(parseWallClock('3pm (UTC)', NOW), Date.UTC(2026, 10, 26, 15, 0));
      assert.equal(parseWallClock('12:05am (UTC)', NOW), Date.UTC(2026, 10, 27, 0, 5));
      assert.equal(parseWallClock('12:30 PM', NOW), local(12, 30, new Date(NOW).getHours() * 60 + new Date(NOW).getMinutes() > 12 * 60 + 31 ? 1 : 0));
      assert.equal(parseWallClock('6am (Not/AZone)', NOW), null);
      assert.equal(parseWallClock('soon', NOW), null);
    });

    it('delays: "Please retry in 3.5s", "250ms"; retry-after in seconds or as a date', () => {
      assert.equal(parseRetryDelay('Please retry in 3.5s.', NOW), NOW + 3500);
      assert.equal(parseRetryDelay('retry in 250ms', NOW), NOW + 250);
      assert.equal(parseRetryDelay('no delay here', NOW), null);
      assert.equal(parseRetryDelay('Suggested retry after 60s.', NOW), NOW + 60_000);
      assert.equal(parseRetryDelay('Retrying after 22073ms...', NOW), null);
      assert.equal(parseRetryAfter('7', NOW), NOW + 7000);
      assert.equal(parseRetryAfter('Thu, 26 Nov 2026 06:00:00 GMT', NOW), Date.UTC(2026, 10, 26, 6, 0));
      assert.equal(parseRetryAfter(undefined, NOW), null);
    });

    it('when to try again: a usage limit at its reset (else the default wait); the others after a stated delay, else a doubling back-off up to its cap', () => {
      const limit = (kind: AgentLimit['kind'], until: number | null = null): AgentLimit => ({ kind, until, message: '' });
      assert.equal(retryAt(limit('usage_limit', NOW + HOUR), 1, NOW), NOW + HOUR);
      assert.equal(retryAt(limit('usage_limit'), 1, NOW), NOW + USAGE_LIMIT_DEFAULT_WAIT_SECS * 1000);
      // A reset stated to the minute, or by a clock that differs, already past: soon, then less often.
      assert.equal(retryAt(limit('usage_limit', NOW - 30_000), 1, NOW), NOW + USAGE_LIMIT_BACKOFF_FIRST_SECS * 1000);
      assert.equal(retryAt(limit('usage_limit', NOW - 30_000), 2, NOW), NOW + 2 * USAGE_LIMIT_BACKOFF_FIRST_SECS * 1000);
      assert.equal(retryAt(limit('rate_limited', NOW + 2000), 1, NOW), NOW + 2000);
      assert.equal(retryAt(limit('overloaded'), 1, NOW), NOW + BACKOFF_FIRST_SECS * 1000);
      assert.equal(retryAt(limit('outage'), 3, NOW), NOW + 4 * BACKOFF_FIRST_SECS * 1000);
      assert.equal(retryAt(limit('rate_limited'), 30, NOW), NOW + BACKOFF_CAP_SECS * 1000);
    });

    it('a stated time is no promise: refused again, the loop backs off, never before the stated time; a time past a year is taken as a year', () => {
      const limit = (kind: AgentLimit['kind'], until: number | null = null): AgentLimit => ({ kind, until, message: '' });
      assert.equal(retryAt(limit('usage_limit', NOW + 3500), 1, NOW), NOW + 3500);
      assert.equal(retryAt(limit('usage_limit', NOW + 3500), 2, NOW), NOW + 2 * USAGE_LIMIT_BACKOFF_FIRST_SECS * 1000);
      assert.equal(retryAt(limit('usage_limit', NOW + 3500), 3, NOW), NOW + 4 * USAGE_LIMIT_BACKOFF_FIRST_SECS * 1000);
      assert.equal(retryAt(limit('usage_limit', NOW + HOUR), 2, NOW), NOW + HOUR, 'a later reset stands');
      assert.equal(retryAt(limit('rate_limited', NOW + 2000), 2, NOW), NOW + 2 * BACKOFF_FIRST_SECS * 1000);
      for (const garbage of [1e300, Infinity, Number.NaN, -Infinity]) {
        const at = retryAt(limit('usage_limit', garbage), 1, NOW);
        assert.ok(at > NOW && at <= NOW + MAX_STATED_WAIT_SECS * 1000, `${garbage}: ${at}`);
        assert.doesNotThrow(() => new Date(at).toISOString());
      }
    });
  });
});
