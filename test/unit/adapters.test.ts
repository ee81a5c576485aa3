import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import type { AgentEvent } from '../../src/sessionFormat/agentEvents.js';
import { AGENT_KINDS, type AgentKind } from '../../src/agents/agentKinds.js';
import { agentEventSchema } from '../../src/sessionFormat/agentEvents.js';
import { repoRoot } from '../support/testEnvironment.js';

interface Replay {
  events: AgentEvent[];
  verdict: ReturnType<ReturnType<ReturnType<typeof adapterFor>['createParser']>['finish']>;
}

/** Feeds a recorded stdout through an adapter's parser, line by line, as runAgent does. */
function replay(kind: AgentKind, cassette: string, exitCode = 0): Replay {
  const parser = adapterFor(kind).createParser();
  const text = fs.readFileSync(path.join(repoRoot(), 'test', 'fixtures', 'cassettes', cassette), 'utf8');
  const events = text.split('\n').flatMap((line) => parser.parseLine(line));
  for (const event of events) agentEventSchema.parse(event);
  return { events, verdict: parser.finish(exitCode) };
}

const kinds = (events: AgentEvent[]) => events.map((event) => event.kind);
const request = { prompt: '-n "rm -rf" 🎉', model: null, resumeSessionId: null };

describe('agent adapters', () => {
  describe('command lines', () => {
    it('never put the prompt where it can be read as a flag', () => {
      for (const kind of AGENT_KINDS) {
        for (const role of ['actor', 'critic'] as const) {
          const invocation = adapterFor(kind).invocation({ ...request, role });
          if (invocation.stdin !== null) {
            assert.equal(invocation.stdin, request.prompt, kind);
            assert.ok(!invocation.args.includes(request.prompt), `${kind} does not also pass it as an argument`);
          } else {
            assert.deepEqual(invocation.args.slice(-2), ['--', request.prompt], `${kind} puts it after --`);
          }
        }
      }
    });

    it('claude: print mode, stream-json with --verbose, edits allowed for the actor, edit tools denied to the critic', () => {
      const actor = adapterFor('claude').invocation({ ...request, role: 'actor', model: 'opus', resumeSessionId: 'abc' });
      assert.deepEqual(actor.args, [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        'bypassPermissions',
        '--model',
        'opus',
        '--resume',
        'abc',
      ]);
      const critic = adapterFor('claude').invocation({ ...request, role: 'critic' });
      assert.deepEqual(critic.args.slice(-2), ['--disallowedTools', 'Edit,MultiEdit,Write,NotebookEdit']);
    });

    it('opencode: run --format json; permissions for the actor, the plan agent for the critic', () => {
      const actor = adapterFor('opencode').invocation({ ...request, role: 'actor', model: 'p/m' });
      assert.deepEqual(actor.args, ['run', '--format', 'json', '--model', 'p/m']);
      assert.equal(actor.env.OPENCODE_PERMISSION, '{"*":"allow"}');
      const critic = adapterFor('opencode').invocation({ ...request, role: 'critic' });
      assert.deepEqual(critic.args, ['run', '--format', 'json', '--agent', 'plan']);
      assert.deepEqual(JSON.parse(critic.env.OPENCODE_PERMISSION!), { '*': 'allow', edit: 'deny' });
    });

    it('cursor: --force for the actor (without it print mode writes nothing), ask mode for the critic', () => {
      const actor = adapterFor('cursor').invocation({ ...request, role: 'actor' });
      assert.ok(actor.args.includes('--force'));
      const critic = adapterFor('cursor').invocation({ ...request, role: 'critic' });
      assert.ok(!critic.args.includes('--force'));
      assert.deepEqual(critic.args.slice(critic.args.indexOf('--mode'), critic.args.indexOf('--mode') + 2), ['--mode', 'ask']);
    });

    it('codex and gemini: a writable sandbox or yolo for the actor, read-only or plan for the critic', () => {
      assert.deepEqual(adapterFor('codex').invocation({ ...request, role: 'actor' }).args, [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '--sandbox',
        'workspace-write',
        '-',
      ]);
      assert.ok(
        adapterFor('codex')
          .invocation({ ...request, role: 'critic' })
          .args.includes('read-only'),
      );
      assert.deepEqual(
        adapterFor('codex')
          .invocation({ ...request, role: 'actor', resumeSessionId: 't1' })
          .args.slice(0, 3),
        ['exec', 'resume', 't1'],
      );
      assert.ok(
        adapterFor('gemini')
          .invocation({ ...request, role: 'actor' })
          .args.join(' ')
          .includes('--approval-mode yolo'),
      );
      assert.ok(
        adapterFor('gemini')
          .invocation({ ...request, role: 'critic' })
          .args.join(' ')
          .includes('--approval-mode plan'),
      );
    });
  });

  describe('stream parsing (cassettes)', () => {
    it('claude (recorded from the real CLI): text, tool calls, results, session id, tokens and cost', () => {
      const { events, verdict } = replay('claude', 'claude-actor-write-and-bash.jsonl');
      const withoutUsage = events.filter((event) => event.kind !== 'usage');
      assert.deepEqual(kinds(withoutUsage), ['session', 'text', 'tool_use', 'tool_use', 'tool_result', 'tool_result', 'text', 'session', 'result']);
      // Usage while the turn runs (so a budget is enforced mid-turn), then the result's own total with its cost.
      const usages = events.filter((event) => event.kind === 'usage');
      assert.ok(usages.length > 2, 'running usage from the assistant messages');
      const tokens = usages.map((event) => (event.kind === 'usage' ? (event.total.inputTokens ?? 0) + (event.total.outputTokens ?? 0) : 0));
      assert.deepEqual(
        tokens.slice(0, -1),
        [...tokens.slice(0, -1)].sort((a, b) => a - b),
        'running usage never goes down',
      );
      assert.equal(usages.at(-1)?.kind === 'usage' && usages.at(-1)!.total.costUsd! > 0, true);
      assert.deepEqual(
        events.filter((event) => event.kind === 'tool_use').map((event) => event.kind === 'tool_use' && [event.name, event.summary]),
        [
          ['Write', '/repo/greeting.txt'],
          ['Bash', 'echo "noted by a shell" > build-note.txt'],
        ],
      );
      const usage = usages.at(-1);
      assert.ok(usage?.kind === 'usage' && usage.total.costUsd! > 0 && usage.total.inputTokens! > 0 && usage.total.outputTokens! > 0);
      assert.deepEqual(verdict, { succeeded: true, failureReason: null, finalText: 'Created greeting.txt and the build note.' });
      const critic = replay('claude', 'claude-critic-continue.jsonl');
      assert.match(critic.verdict.finalText!, /<decision>\{"type":"continue"/);
    });

    it('claude: an error result is a failure even with subtype "success" and exit 0', () => {
      const parser = adapterFor('claude').createParser();
      parser.parseLine('{"type":"result","subtype":"success","is_error":true,"result":"API Error: 400 bad request","session_id":"s"}');
      const verdict = parser.finish(0);
      assert.equal(verdict.succeeded, false);
      assert.match(verdict.failureReason!, /API Error: 400/);
    });

    it('opencode (recorded from the real CLI): tool call and result, text, cost summed over steps', () => {
      const { events, verdict } = replay('opencode', 'opencode-actor-write.jsonl');
      assert.deepEqual(kinds(events), ['session', 'tool_use', 'tool_result', 'usage', 'text', 'usage']);
      const session = events[0];
      assert.match(session?.kind === 'session' ? session.agentSessionId : '', /^ses_/);
      const [firstStep, lastStep] = events.filter((event) => event.kind === 'usage');
      assert.ok(firstStep?.kind === 'usage' && lastStep?.kind === 'usage');
      assert.ok(lastStep.total.costUsd! > firstStep.total.costUsd!, 'the second step adds to the first');
      assert.deepEqual(verdict, { succeeded: true, failureReason: null, finalText: 'Done.' });
      assert.equal(replay('opencode', 'opencode-actor-write.jsonl', 1).verdict.succeeded, false, 'exit 1 is a failure');
    });

    it('codex: messages, commands and file changes; success only with turn.completed; usage replaced not summed', () => {
      const { events, verdict } = replay('codex', 'codex-success.jsonl');
      assert.deepEqual(kinds(events), ['session', 'tool_use', 'tool_result', 'tool_use', 'text', 'usage', 'result']);
      assert.deepEqual(
        events.find((event) => event.kind === 'usage'),
        { kind: 'usage', total: { inputTokens: 24763, outputTokens: 122, cacheReadTokens: 24448 } },
      );
      assert.deepEqual(verdict, { succeeded: true, failureReason: null, finalText: 'Created hello.txt.' });
      assert.equal(replay('codex', 'codex-reconnect.jsonl').verdict.succeeded, true, 'a passing error before turn.completed is not a failure');
      const failed = replay('codex', 'codex-failed.jsonl');
      assert.equal(failed.verdict.succeeded, false);
      assert.match(failed.verdict.failureReason!, /stream disconnected/);
    });

    it('gemini: streamed deltas joined into the final message', () => {
      const { events, verdict } = replay('gemini', 'gemini-success.jsonl');
      assert.deepEqual(kinds(events), ['session', 'tool_use', 'tool_result', 'text', 'text', 'usage', 'result']);
      assert.equal(verdict.finalText, 'I created hello.txt.');
      assert.equal(verdict.succeeded, true);
    });

    it('cursor: tool calls and the result', () => {
      const { events, verdict } = replay('cursor', 'cursor-success.jsonl');
      assert.deepEqual(kinds(events), ['session', 'tool_use', 'tool_result', 'text', 'session', 'result']);
      assert.deepEqual(events[1], { kind: 'tool_use', id: 'toolu_1', name: 'write', summary: 'hello.txt' });
      assert.equal(verdict.succeeded, true);
    });

    it('every adapter survives garbage, blank lines and unknown events without throwing', () => {
      for (const kind of AGENT_KINDS) {
        const parser = adapterFor(kind).createParser();
        for (const line of [
          '',
          '   ',
          'plain text',
          '{',
          '{"type":"mystery","x":1}',
          '{"type":"assistant","message":{"content":"not an array"}}',
          '[1,2]',
          '\u0000\u00ff',
          '{"type":"result","is_error":"yes"}',
        ]) {
          for (const event of parser.parseLine(line)) agentEventSchema.parse(event);
        }
        const verdict = parser.finish(0);
        if (kind !== 'command') assert.equal(verdict.succeeded, false, `${kind} does not call garbage a success`);
      }
    });
  });
});
