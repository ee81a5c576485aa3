import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import type { AgentExit } from '../../src/agents/agentProcess.js';
import { AgentRunFold, TRANSCRIPT_HEAD_CHARS, TRANSCRIPT_TAIL_CHARS, type AgentRunFoldOptions } from '../../src/agents/agentRunFold.js';
import type { AgentKind } from '../../src/agents/agentKinds.js';
import { GEMINI_FALLBACKS_ALLOWED } from '../../src/agents/adapters/gemini.js';
import type { AgentEvent } from '../../src/sessionFormat/agentEvents.js';
import { repoRoot } from '../support/testEnvironment.js';

/** A process that ran and exited 0 on its own, unless told otherwise. */
const exited = (overrides: Partial<AgentExit> = {}): AgentExit => ({
  startFailure: null,
  exitCode: 0,
  signal: null,
  stoppedFor: null,
  timeoutSecs: 60,
  stderr: '',
  durationSecs: 1.5,
  ...overrides,
});

/** A fold whose listener's events are kept, for the adapter of `kind`. */
function foldFor(kind: AgentKind, options: AgentRunFoldOptions = {}) {
  const heard: AgentEvent[] = [];
  const fold = new AgentRunFold(adapterFor(kind), { ...options, onEvent: (event) => heard.push(event) });
  return { fold, heard };
}

function cassette(name: string): string {
  return fs.readFileSync(path.join(repoRoot(), 'test', 'fixtures', 'cassettes', name), 'utf8');
}

const NONE = { unknownEvents: 0, unknownFields: 0, examples: [] };

describe('folding an agent run (no process)', () => {
  describe('events into the transcript and the counts', () => {
    it('lays out text, tool calls, failed tool results and errors, each tool call counted', () => {
      const { fold, heard } = foldFor('command');
      const events: AgentEvent[] = [
        { kind: 'text', text: 'Looking at ', delta: true },
        { kind: 'text', text: 'the code.', delta: true },
        { kind: 'tool_use', name: 'Read', summary: 'src/a.ts' },
        { kind: 'tool_result', isError: false, summary: 'fine, and not in the transcript' },
        { kind: 'tool_use', name: 'Bash', summary: '' },
        { kind: 'tool_result', isError: true, summary: 'exit 1' },
        { kind: 'error', message: 'rate limited' },
        { kind: 'text', text: 'Done.' },
      ];
      for (const event of events) fold.add(event);
      const result = fold.finish(exited());
      assert.equal(result.transcript, 'Looking at the code.\n→ Read: src/a.ts\n→ Bash\n  ✗ exit 1\n[error] rate limited\nDone.\n');
      assert.equal(result.toolCalls, 2);
      assert.deepEqual(heard, events, 'every event goes on to the listener as it came');
    });

    it('keeps the last session id, the last usage and the last model named, and the result as the final text when the parser has none', () => {
      const { fold } = foldFor('command');
      fold.add({ kind: 'session', agentSessionId: 'first' });
      fold.add({ kind: 'usage', total: { inputTokens: 10 }, model: 'model-a' });
      fold.add({ kind: 'session', agentSessionId: 'second' });
      fold.add({ kind: 'usage', total: { inputTokens: 30, outputTokens: 5 } });
      fold.add({ kind: 'result', text: 'the final word', isError: false });
      const result = fold.finish(exited());
      assert.equal(result.agentSessionId, 'second');
      assert.deepEqual(result.usage, { inputTokens: 30, outputTokens: 5 });
      assert.equal(result.model, 'model-a', 'a usage without a model keeps the one named before');
      assert.equal(result.finalText, 'the final word');
      assert.equal(result.succeeded, true);
    });

    it('keeps only the head and the tail of a long transcript, saying how much it left out', () => {
      const { fold } = foldFor('command');
      fold.add({ kind: 'text', text: 'FIRST' });
      const line = 'y'.repeat(999);
      for (let i = 0; i < 1000; i += 1) fold.add({ kind: 'text', text: line });
      fold.add({ kind: 'text', text: 'LAST' });
      const { transcript } = fold.finish(exited());
      assert.ok(transcript.startsWith('FIRST\n'));
      assert.ok(transcript.endsWith('\nLAST\n'));
      const omitted = /\[… ([\d,]+) characters omitted …\]/.exec(transcript);
      assert.ok(omitted, 'the middle is marked');
      const total = 'FIRST\n'.length + 1000 * (line.length + 1) + 'LAST\n'.length;
      assert.equal(transcript.length - omitted[0].length - 2 + Number(omitted[1]!.replace(/,/g, '')), total, 'what is kept and what is left out add up');
      assert.ok(transcript.length <= TRANSCRIPT_HEAD_CHARS + TRANSCRIPT_TAIL_CHARS + omitted[0].length + 2);
    });
  });

  describe('a resumed agent session that reports its whole cost', () => {
    it('counts only this run’s cost, never below zero, and tells the listener the same', () => {
      const { fold, heard } = foldFor('claude', { costAlreadyCounted: 0.25 });
      fold.add({ kind: 'usage', total: { inputTokens: 100, costUsd: 0.75 }, model: 'opus' });
      assert.deepEqual(heard.at(-1), { kind: 'usage', total: { inputTokens: 100, costUsd: 0.5 }, model: 'opus' });
      fold.add({ kind: 'usage', total: { inputTokens: 120, costUsd: 0.1 } });
      assert.deepEqual(fold.finish(exited()).usage, { inputTokens: 120, costUsd: 0 });
    });

    it('leaves the cost alone for an agent whose cost is its run’s own, or without a cost', () => {
      const opencode = foldFor('opencode', { costAlreadyCounted: 0.25 });
      opencode.fold.add({ kind: 'usage', total: { costUsd: 0.75 } });
      assert.deepEqual(opencode.fold.finish(exited()).usage, { costUsd: 0.75 });
      const claude = foldFor('claude', { costAlreadyCounted: 0.25 });
      claude.fold.add({ kind: 'usage', total: { inputTokens: 7 } });
      assert.deepEqual(claude.fold.finish(exited()).usage, { inputTokens: 7 });
    });
  });

  describe('stdout through the adapter’s parser', () => {
    it('sends whole lines of text that arrive together as one event, and keeps the order of structured events between them', () => {
      const { fold, heard } = foldFor('claude');
      fold.readStdout('a banner\nsecond line\n{"type":"system","subtype":"init","session_id":"s-1"}\nafter');
      fold.readStdout(' it\n');
      assert.deepEqual(heard, [
        { kind: 'text', text: 'a banner\nsecond line' },
        { kind: 'session', agentSessionId: 's-1' },
        { kind: 'text', text: 'after it' },
      ]);
    });

    it('hands on a line too long to be an event as text, without waiting for its end', () => {
      const { fold, heard } = foldFor('command');
      const long = 'x'.repeat(8 * 1024 * 1024);
      fold.readStdout(`${long}tail`);
      assert.deepEqual(
        heard.map((event) => event.kind === 'text' && [event.text.length, event.delta]),
        [[long.length, true]],
        'the first 8 MiB as a piece of text, before the line ends',
      );
      fold.readStdout('\n');
      assert.deepEqual(heard.at(-1), { kind: 'text', text: 'tail' });
      assert.ok(fold.finish(exited()).transcript.length < TRANSCRIPT_HEAD_CHARS + TRANSCRIPT_TAIL_CHARS + 100, 'and the transcript stays bounded');
    });

    it('folds a recorded run into its session id, tool calls, usage with cost, model and final text', () => {
      const { fold } = foldFor('claude');
      fold.readStdout(cassette('claude-actor-write-and-bash.jsonl'));
      const result = fold.finish(exited());
      assert.equal(result.succeeded, true);
      assert.equal(result.agentSessionId, '26790a09-dcad-4e6f-86e1-63ba5ef7f617');
      assert.equal(result.toolCalls, 2);
      assert.ok(result.usage!.costUsd! > 0 && result.usage!.inputTokens! > 0);
      assert.equal(result.model, 'claude-opus-5-5');
      assert.equal(result.finalText, 'Created greeting.txt and the build note.');
      assert.match(result.transcript, /→ Write: \/repo\/greeting\.txt\n→ Bash: echo "noted by a shell" > build-note\.txt\n/);
      assert.deepEqual(result.drift, NONE);
    });

    it('calls a stream that ends before its final event a failure that says so, keeping what it did fold', () => {
      const { fold } = foldFor('claude');
      const lines = cassette('claude-actor-write-and-bash.jsonl').trimEnd().split('\n');
      fold.readStdout(lines.slice(0, -1).join('\n'));
      const result = fold.finish(exited());
      assert.equal(result.succeeded, false);
      assert.match(result.failureReason!, /Claude Code exited \(code 0\) without a final result event/);
      assert.equal(result.finalText, null);
      assert.equal(result.toolCalls, 2);
      assert.equal(result.agentSessionId, '26790a09-dcad-4e6f-86e1-63ba5ef7f617');
    });

    it('counts the drift the stream held: unknown events and unknown fields, with examples', () => {
      const { fold, heard } = foldFor('gemini');
      fold.readStdout(
        [
          '{"type":"init","session_id":"g-1","model":"m","brand_new_field":1}',
          '{"type":"brand_new_event","x":1}',
          '{"type":"another_new_event"}',
          '{"type":"result","status":"success","stats":{"input_tokens":3}}',
        ].join('\n'),
      );
      const result = fold.finish(exited());
      assert.deepEqual(result.drift, {
        unknownEvents: 2,
        unknownFields: 1,
        examples: ['field init.brand_new_field', 'event brand_new_event', 'event another_new_event'],
      });
      assert.deepEqual(
        heard.map((event) => event.kind),
        ['session', 'usage', 'result'],
        'unknown events are skipped, a known one with a new field is still read',
      );
      assert.equal(result.succeeded, true, 'drift is never fatal');
    });
  });

  describe('how the process ended', () => {
    const succeededClaude = () => {
      const { fold } = foldFor('claude');
      fold.readStdout('{"type":"result","subtype":"success","result":"all done","session_id":"s"}\n');
      return fold;
    };

    it('the runner’s stop wins over anything the agent said: interrupted, or timed out after its time', () => {
      const interrupted = succeededClaude().finish(exited({ stoppedFor: 'interrupt', signal: 'SIGINT', exitCode: 130 }));
      assert.deepEqual([interrupted.succeeded, interrupted.interrupted, interrupted.timedOut, interrupted.failureReason], [false, true, false, 'interrupted']);
      const timedOut = succeededClaude().finish(exited({ stoppedFor: 'timeout', timeoutSecs: 5, signal: 'SIGKILL', exitCode: 137 }));
      assert.deepEqual(
        [timedOut.succeeded, timedOut.timedOut, timedOut.interrupted, timedOut.failureReason],
        [false, true, false, 'timed out after 5 s and was stopped'],
      );
      assert.equal(timedOut.finalText, 'all done', 'what it said before it was stopped is kept');
    });

    it('a signal nobody sent is a failure that names it, even after a successful result', () => {
      const result = succeededClaude().finish(exited({ signal: 'SIGABRT', exitCode: 134 }));
      assert.equal(result.succeeded, false);
      assert.equal(result.failureReason, 'Claude Code was killed by SIGABRT');
      assert.deepEqual([result.signal, result.exitCode], ['SIGABRT', 134]);
    });

    it('a program that never started says why, instead of what its parser makes of no output', () => {
      const result = foldFor('claude').fold.finish(exited({ startFailure: 'could not start claude: ENOENT', exitCode: 127 }));
      assert.deepEqual([result.started, result.succeeded, result.exitCode], [false, false, 127]);
      assert.equal(result.failureReason, 'could not start claude: ENOENT');
    });

    it('adds the adapter’s diagnosis of stderr when the agent did not succeed, and only then', () => {
      const stderr = 'Error: --dangerously-skip-permissions cannot be used with root/sudo privileges';
      const failed = foldFor('claude').fold.finish(exited({ stderr, exitCode: 1 }));
      assert.match(
        failed.failureReason!,
        /^Claude Code exited \(code 1\) without a final result event.*\. Claude Code refuses to skip permission prompts as root/,
      );
      assert.equal(failed.stderr, stderr);
      const succeeded = succeededClaude().finish(exited({ stderr }));
      assert.deepEqual([succeeded.succeeded, succeeded.failureReason], [true, null]);
    });

    it('carries the exit’s facts through: exit code, duration, stderr', () => {
      const result = foldFor('command').fold.finish(exited({ exitCode: 3, stderr: 'boom', durationSecs: 2.25 }));
      assert.deepEqual(
        [result.succeeded, result.exitCode, result.durationSecs, result.stderr, result.failureReason],
        [false, 3, 2.25, 'boom', 'the command exited with code 3'],
      );
    });
  });

  describe('a CLI its own log shows stuck retrying (Gemini CLI in plan mode, falling back between models)', () => {
    const fallback = (from: string, to: string) => `[2026-11-28T18:44:07.753Z] [LOG] Model fallback activated: switching from ${from} to ${to}\n`;

    it('is told to stop once it has switched models more than GEMINI_FALLBACKS_ALLOWED times; the run ends with a usage limit, not as interrupted', () => {
      const stuck: string[] = [];
      const { fold } = foldFor('gemini', { onStuck: (limit) => stuck.push(limit.kind) });
      fold.readStdout(cassette('gemini-daily-quota.jsonl').split('\n').slice(0, 2).join('\n') + '\n');
      // A line split across pieces is read whole.
      fold.readLog('[2026-11-28T18:44:07.741Z] [DEBUG] Experiments loaded {\n' + fallback('unknown', 'gemini-3-flash-preview').slice(0, 30));
      fold.readLog(fallback('unknown', 'gemini-3-flash-preview').slice(30));
      for (let switched = 2; switched <= GEMINI_FALLBACKS_ALLOWED; switched++) fold.readLog(fallback('gemini-3-flash-preview', 'gemini-3.1-pro-preview'));
      assert.deepEqual(stuck, [], 'a few switches are a fallback, not a loop');
      fold.readLog(fallback('gemini-3-flash-preview', 'gemini-3.1-pro-preview'));
      fold.readLog(fallback('gemini-3-flash-preview', 'gemini-3.1-pro-preview'));
      assert.deepEqual(stuck, ['usage_limit'], 'told once');
      const result = fold.finish(exited({ exitCode: 130, stoppedFor: 'interrupt' }));
      assert.equal(result.interrupted, false);
      assert.equal(result.succeeded, false);
      assert.equal(result.limit?.kind, 'usage_limit');
      assert.equal(result.limit?.until, null);
      assert.match(result.failureReason ?? '', /^Gemini CLI was stopped: Gemini CLI switched models 6 times in one run/);
    });

    it('the log of an adapter that does not read it, or lines that say nothing of it, change nothing', () => {
      const { fold } = foldFor('claude', { onStuck: () => assert.fail('not stuck') });
      for (let line = 0; line < 20; line++) fold.readLog(fallback('a', 'b'));
      const gemini = foldFor('gemini', { onStuck: () => assert.fail('not stuck') });
      for (let line = 0; line < 20; line++) gemini.fold.readLog('[DEBUG] Model fallback is a phrase\n');
      assert.equal(gemini.fold.finish(exited({ exitCode: 130, stoppedFor: 'interrupt' })).interrupted, true);
    });
  });
});
