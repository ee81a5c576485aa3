import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import type { InvocationRequest } from '../../src/agents/agentAdapter.js';
import type { AgentEvent } from '../../src/sessionFormat/agentEvents.js';
import { AGENT_KINDS, type AgentKind } from '../../src/agents/agentKinds.js';
import { agentEventSchema } from '../../src/sessionFormat/agentEvents.js';
import { jsonLineParser } from '../../src/agents/jsonLineParser.js';
import * as z from '../../src/sessionFormat/zod.js';
import { repoRoot } from '../support/testEnvironment.js';
import { CriticEvidenceFold } from '../../src/critic/criticEvidence.js';

interface Replay {
  events: AgentEvent[];
  verdict: ReturnType<ReturnType<ReturnType<typeof adapterFor>['createParser']>['finish']>;
}

function cassetteLines(cassette: string): string[] {
  return fs
    .readFileSync(path.join(repoRoot(), 'test', 'fixtures', 'cassettes', cassette), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
}

/** Feeds stdout through an adapter's parser, line by line, as runAgent does. */
function replayLines(kind: AgentKind, lines: readonly string[], exitCode = 0): Replay {
  const parser = adapterFor(kind).createParser();
  const events = lines.flatMap((line) => parser.parseLine(line));
  for (const event of events) agentEventSchema.parse(event);
  return { events, verdict: parser.finish(exitCode) };
}

/** Feeds a recorded stdout through an adapter's parser. */
function replay(kind: AgentKind, cassette: string, exitCode = 0): Replay {
  return replayLines(kind, cassetteLines(cassette), exitCode);
}

/**
 * A successful run of each adapter with a structured stream, recorded from the real CLI where one can run here
 * (every agent but `command`, whose output is plain text: an agent missing here is a type error).
 */
const SUCCESSFUL_RUN: Readonly<Record<Exclude<AgentKind, 'command'>, string>> = {
  claude: 'claude-actor-write-and-bash.jsonl',
  opencode: 'opencode-actor-write.jsonl',
  codex: 'codex-actor-patch-and-shell.jsonl',
  gemini: 'gemini-actor-write-and-shell.jsonl',
  cursor: 'cursor-success.jsonl',
};
const SUCCESSFUL_RUNS = Object.entries(SUCCESSFUL_RUN) as [AgentKind, string][];

const NONE = { unknownEvents: 0, unknownFields: 0, examples: [] };
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
            assert.deepEqual([...invocation.args, ...(invocation.trailingArgs ?? [])].slice(-2), ['--', request.prompt], `${kind} puts it after --`);
            assert.ok(!invocation.args.includes(request.prompt), `${kind} keeps it last, after any extra arguments`);
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
      const argv = (kind: AgentKind, overrides: Partial<InvocationRequest>) => {
        const invocation = adapterFor(kind).invocation({ ...request, role: 'actor', ...overrides });
        return [...invocation.args, ...(invocation.trailingArgs ?? [])];
      };
      assert.deepEqual(argv('codex', {}), ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write', '-']);
      assert.deepEqual(argv('codex', { role: 'critic', model: 'gpt-5.5' }), [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '--sandbox',
        'read-only',
        '--model',
        'gpt-5.5',
        '-',
      ]);
      // 0.169.0 refuses exec's options after `resume`: they come first, the thread and the stdin prompt last.
      assert.deepEqual(argv('codex', { resumeSessionId: 't1' }), [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '--sandbox',
        'workspace-write',
        'resume',
        't1',
        '-',
      ]);
      assert.deepEqual(argv('gemini', {}), ['--output-format', 'stream-json', '--skip-trust', '--approval-mode', 'yolo']);
      assert.deepEqual(argv('gemini', { role: 'critic' }).slice(3), ['--approval-mode', 'plan']);
      // By id: `latest` may be the critic's session.
      assert.deepEqual(argv('gemini', { resumeSessionId: 's-1' }).slice(-2), ['--resume', 's-1']);
      assert.equal(adapterFor('gemini').canResume, true);
    });
  });

  describe('the shared opening of JSON-lines parsers', () => {
    /** A toy CLI: `ping` events with a count, read by the adapter's own `switch` (here, one case). */
    const toyParser = () => {
      const read: unknown[] = [];
      const parser = jsonLineParser({
        known: { ping: ['type', 'n'], note: null },
        schema: z.looseObject({ type: z.string(), n: z.optional(z.number()) }),
        read(line, events) {
          read.push(line);
          if (line.type === 'ping') events.push({ kind: 'text', text: `ping ${line.n ?? '?'}` });
        },
        finish: (exitCode) => ({ succeeded: exitCode === 0, failureReason: exitCode === 0 ? null : 'no', finalText: 'last' }),
      });
      return { parser, read };
    };

    it('keeps a line that is not JSON as text, drops a blank one, and gives the adapter only known, well-formed events', () => {
      const { parser, read } = toyParser();
      assert.deepEqual(parser.parseLine('Loading config…'), [{ kind: 'text', text: 'Loading config…' }]);
      assert.deepEqual(parser.parseLine('   '), []);
      assert.deepEqual(parser.parseLine('{"type":"ping","n":1}'), [{ kind: 'text', text: 'ping 1' }]);
      assert.deepEqual(parser.parseLine('{"type":"ping","n":"one"}'), [], 'a shape the schema refuses is skipped');
      assert.deepEqual(parser.parseLine('{"type":"pong"}'), [], 'an unknown event is skipped');
      assert.deepEqual(parser.parseLine('{"type":"note","anything":[1]}'), [], 'a known event the adapter reads nothing from');
      assert.deepEqual(parser.parseLine('{not json'), [{ kind: 'text', text: '{not json' }]);
      assert.deepEqual(read, [
        { type: 'ping', n: 1 },
        { type: 'note', anything: [1] },
      ]);
    });

    it("adds the drift it counted to the adapter's verdict", () => {
      const { parser } = toyParser();
      for (const line of ['{"type":"ping","n":1,"extra":true}', '{"type":"pong"}', '{"type":"note","whatever":1}']) parser.parseLine(line);
      assert.deepEqual(parser.finish(0), {
        succeeded: true,
        failureReason: null,
        finalText: 'last',
        drift: { unknownEvents: 1, unknownFields: 1, examples: ['field ping.extra', 'event pong'] },
      });
      assert.deepEqual(toyParser().parser.finish(2), { succeeded: false, failureReason: 'no', finalText: 'last', drift: NONE });
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
      assert.deepEqual(verdict, { succeeded: true, failureReason: null, finalText: 'Created greeting.txt and the build note.', drift: NONE });
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
      assert.deepEqual(verdict, { succeeded: true, failureReason: null, finalText: 'Done.', drift: NONE });
      assert.equal(replay('opencode', 'opencode-actor-write.jsonl', 1).verdict.succeeded, false, 'exit 1 is a failure');
    });

    it('codex (recorded from the real CLI): messages, commands and file changes; success only with turn.completed; usage replaced not summed', () => {
      const { events, verdict } = replay('codex', 'codex-actor-patch-and-shell.jsonl');
      assert.deepEqual(kinds(events), ['session', 'text', 'tool_use', 'tool_use', 'tool_result', 'text', 'usage', 'result']);
      assert.deepEqual(
        events.filter((event) => event.kind === 'tool_use').map((event) => event.kind === 'tool_use' && [event.name, event.summary]),
        [
          ['file_change', 'add /repo/greeting.txt'],
          ['shell', `/bin/bash -lc 'echo "noted by a shell" > build-note.txt'`],
        ],
      );
      const usage = events.find((event) => event.kind === 'usage');
      assert.ok(usage?.kind === 'usage' && usage.total.inputTokens! > 0 && usage.total.outputTokens! > 0);
      assert.equal(verdict.succeeded, true);
      assert.equal(verdict.finalText, 'Created greeting.txt and the build note.');
      assert.match(replay('codex', 'codex-critic-read-only.jsonl').verdict.finalText!, /<decision>\{"type":"continue"/);
      assert.equal(replay('codex', 'codex-reconnect.jsonl').verdict.succeeded, true, 'a passing error before turn.completed is not a failure');
      const failed = replay('codex', 'codex-failed.jsonl');
      assert.equal(failed.verdict.succeeded, false);
      assert.match(failed.verdict.failureReason!, /stream disconnected/);
    });

    it('gemini (recorded from the real CLI): tool calls and results, streamed text joined into the final message', () => {
      const { events, verdict } = replay('gemini', 'gemini-actor-write-and-shell.jsonl');
      assert.deepEqual(kinds(events), ['session', 'text', 'tool_use', 'tool_result', 'tool_use', 'tool_result', 'text', 'usage', 'result']);
      assert.equal(verdict.finalText, 'Created greeting.txt and the build note.', 'the last message, not every message joined');
      assert.equal(verdict.succeeded, true);
      const critic = replay('gemini', 'gemini-critic-plan.jsonl');
      const refused = critic.events.find((event) => event.kind === 'tool_result');
      assert.ok(refused?.kind === 'tool_result' && refused.isError && /plans directory/.test(refused.summary));
      assert.equal(critic.verdict.succeeded, true);
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

  describe('drift: what a newer or older CLI prints', () => {
    it('none in output recorded from the versions each adapter was tested with', () => {
      for (const [kind, cassette] of SUCCESSFUL_RUNS) assert.deepEqual(replay(kind, cassette).verdict.drift, NONE, kind);
    });

    it('an unknown event type and an unknown field are ignored and counted, never fatal', () => {
      for (const [kind, cassette] of SUCCESSFUL_RUNS) {
        const [first, ...rest] = cassetteLines(cassette);
        const withNewField = JSON.stringify({ ...(JSON.parse(first!) as object), brand_new_field: { nested: true } });
        const plain = replayLines(kind, [first!, ...rest]);
        const drifted = replayLines(kind, [withNewField, '{"type":"brand_new_event","payload":[1,2]}', ...rest]);
        assert.deepEqual(kinds(drifted.events), kinds(plain.events), `${kind}: the same events`);
        assert.deepEqual({ ...drifted.verdict, drift: NONE }, plain.verdict, `${kind}: the same verdict`);
        assert.equal(drifted.verdict.drift.unknownEvents, 1, kind);
        assert.ok(drifted.verdict.drift.examples.includes('event brand_new_event'), `${kind}: ${drifted.verdict.drift.examples.join(', ')}`);
        // Cursor's shapes are unverified (no version could run here): only its event types are checked.
        if (kind !== 'cursor') {
          assert.equal(drifted.verdict.drift.unknownFields, 1, kind);
          assert.ok(
            drifted.verdict.drift.examples.some((example) => example.endsWith('.brand_new_field')),
            kind,
          );
        }
      }
    });

    it('a stream that ends before its final event is a failure that says so, whatever the exit code', () => {
      for (const [kind, cassette] of SUCCESSFUL_RUNS) {
        const { verdict } = replayLines(kind, cassetteLines(cassette).slice(0, -1), 0);
        assert.equal(verdict.succeeded, false, kind);
        assert.match(verdict.failureReason!, /without (a final result|a result event|completing its turn)|before its final step/, kind);
        assert.match(verdict.failureReason!, /exited \(code 0\)/, kind);
      }
    });
  });
});

describe("the critic's evidence, folded from each agent's recorded stream", () => {
  const fold = (events: readonly AgentEvent[]) => {
    const evidence = new CriticEvidenceFold();
    for (const event of events) evidence.add(event);
    return evidence.result();
  };

  it("takes each agent's shell command and how it went, by the tool call's id", () => {
    for (const [kind, cassette, command] of [
      ['claude', 'claude-actor-write-and-bash.jsonl', 'echo "noted by a shell" > build-note.txt'],
      ['codex', 'codex-actor-patch-and-shell.jsonl', `/bin/bash -lc 'echo "noted by a shell" > build-note.txt'`],
      ['gemini', 'gemini-actor-write-and-shell.jsonl', 'echo "noted by a shell" > build-note.txt'],
    ] as const) {
      assert.deepEqual(
        fold(replay(kind, cassette).events).commands.map(({ command, ok }) => [command, ok]),
        [[command, true]],
        cassette,
      );
    }
  });

  it('counts no write as evidence', () => {
    for (const [kind, cassette] of [
      ['gemini', 'gemini-critic-plan.jsonl'],
      ['opencode', 'opencode-actor-write.jsonl'],
      ['cursor', 'cursor-success.jsonl'],
    ] as const) {
      assert.deepEqual(fold(replay(kind, cassette).events), { commands: [], reads: [] }, cassette);
    }
  });

  it('a result marked as an error is a failed command; a command without a result says nothing of how it went; reads are kept once', () => {
    const evidence = fold([
      { kind: 'tool_use', id: 'a', name: 'Bash', summary: 'npm test' },
      { kind: 'tool_use', id: 'b', name: 'bash', summary: 'npm run lint' },
      { kind: 'tool_result', id: 'a', isError: true, summary: '1 failing' },
      { kind: 'tool_use', name: 'Read', summary: 'src/sum.js' },
      { kind: 'tool_use', name: 'read_file', summary: 'src/sum.js' },
      { kind: 'tool_use', name: 'Write', summary: 'src/sum.js' },
    ]);
    assert.deepEqual(evidence, {
      commands: [
        { tool: 'Bash', command: 'npm test', ok: false },
        { tool: 'bash', command: 'npm run lint', ok: null },
      ],
      reads: ['src/sum.js'],
    });
  });
});
