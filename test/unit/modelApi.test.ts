import assert from 'node:assert/strict';
import { startServer, StatusError, type ServerOptions } from '../support/modelApi/http.js';
import { anthropicMessages } from '../support/modelApi/anthropicMessages.js';
import { openAiChat } from '../support/modelApi/openAiChat.js';
import { isObject, objectsIn, startModelApi, type Responder, type ScriptedReply, type WireProtocol } from '../support/modelApi/scripted.js';

/** The scaffold the end-to-end tests script the real CLIs with, checked over real HTTP. */

interface ParsedEvent {
  event: string | undefined;
  data: string;
}

/** Server-Sent Events as a client reads them: blocks split by a blank line, `event:` and `data:` fields. */
function parseSse(text: string): ParsedEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const fields = new Map(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()] as const));
      return { event: fields.get('event'), data: fields.get('data') ?? '' };
    });
}

function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** A JSON value's field, for assertions on answers the test parsed itself. */
function field(value: unknown, ...path: (string | number)[]): unknown {
  return path.reduce<unknown>((current, key) => {
    if (typeof key === 'number') return Array.isArray(current) ? current[key] : undefined;
    return isObject(current) ? current[key] : undefined;
  }, value);
}

const WRITE_CALL: ScriptedReply = { text: 'Writing it.', toolCalls: [{ name: 'Write', input: { file_path: '/tmp/a.txt', content: 'hi\n' } }] };

describe('scripted model APIs', () => {
  const running: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const server of running.splice(0)) await server.close();
  });
  const start = async (protocol: WireProtocol, responder: Responder) => {
    const api = await startModelApi(protocol, responder);
    running.push(api);
    return api;
  };
  const serve = async (options: ServerOptions) => {
    const server = await startServer(options);
    running.push(server);
    return server;
  };

  describe('the HTTP core', () => {
    it('routes by method and a path pattern, streams data-only events and logs every request', async () => {
      const server = await serve({
        errorBody: (status, message) => ({ status, message }),
        routes: [
          { method: 'POST', path: /^\/v1beta\/models\/[^/:]+:streamGenerateContent$/, answer: () => ({ events: [{ data: { n: 1 } }, { data: '[END]' }] }) },
        ],
      });
      assert.match(server.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
      const response = await post(`${server.origin}/v1beta/models/gemini-x:streamGenerateContent?alt=sse`, { contents: [] });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-type'), 'text/event-stream');
      assert.equal(await response.text(), 'data: {"n":1}\n\ndata: [END]\n\n');
      const wrongMethod = await fetch(`${server.origin}/v1beta/models/gemini-x:streamGenerateContent`);
      assert.equal(wrongMethod.status, 404);
      assert.deepEqual(
        server.received.map((request) => `${request.method} ${request.path}`),
        ['POST /v1beta/models/gemini-x:streamGenerateContent?alt=sse', 'GET /v1beta/models/gemini-x:streamGenerateContent'],
      );
    });

    it('answers a thrown StatusError with its status in the protocol’s error body, and other throws with 500', async () => {
      const server = await serve({
        errorBody: (status, message) => ({ status, message }),
        routes: [
          {
            method: 'POST',
            path: '/teapot',
            answer: () => {
              throw new StatusError(418, 'short and stout');
            },
          },
          {
            method: 'POST',
            path: '/bug',
            answer: () => {
              throw new Error('a bug');
            },
          },
        ],
      });
      const teapot = await post(`${server.origin}/teapot`, {});
      assert.equal(teapot.status, 418);
      assert.deepEqual(await teapot.json(), { status: 418, message: 'short and stout' });
      const bug = await post(`${server.origin}/bug`, {});
      assert.equal(bug.status, 500);
      assert.deepEqual(await bug.json(), { status: 500, message: 'a bug' });
    });

    it('answers a body that is not JSON with 400, and records requests no route expected', async () => {
      const api = await start(anthropicMessages, () => ({ text: 'unused' }));
      const garbage = await post(`${api.url}/v1/messages`, '{"model": "claude", oops');
      assert.equal(garbage.status, 400);
      const error = await garbage.json();
      assert.equal(field(error, 'error', 'type'), 'invalid_request_error');
      assert.match(String(field(error, 'error', 'message')), /not JSON/);
      const notAnObject = await post(`${api.url}/v1/messages`, [1, 2]);
      assert.equal(notAnObject.status, 400);
      assert.equal(api.requests.length, 0, 'neither reached the responder');

      const unknown = await post(`${api.url}/v1/messages/count_tokens`, { model: 'claude' });
      assert.equal(unknown.status, 404);
      assert.equal(field(await unknown.json(), 'error', 'type'), 'not_found_error');
      assert.deepEqual(api.unexpected, [
        { method: 'POST', path: '/v1/messages/count_tokens', pathname: '/v1/messages/count_tokens', rawBody: '{"model":"claude"}' },
      ]);
    });

    it('close() cuts off an answer that never comes, and can be called again', async () => {
      let asked = (): void => {};
      const reached = new Promise<void>((resolve) => (asked = resolve));
      const api = await start(openAiChat, () => {
        asked();
        return new Promise<ScriptedReply>(() => {});
      });
      const pending = post(`${api.url}/chat/completions`, { model: 'm', messages: [], stream: true });
      await reached;
      const started = Date.now();
      await api.close();
      assert.ok(Date.now() - started < 1000, 'close() did not wait for the answer');
      await assert.rejects(pending);
      await api.close();
    });
  });

  describe('the Anthropic Messages API', () => {
    const request = {
      model: 'claude-sonnet-fake',
      system: [{ type: 'text', text: 'You are Claude Code.' }],
      tools: [{ name: 'Write' }, { name: 'Bash' }],
      messages: [
        { role: 'system', content: 'Environment: linux' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>git status</system-reminder>' },
            { type: 'text', text: 'Create a.txt' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
      ],
    };

    it('digests a request: system text from both places, user text without reminders or tool results, tools', async () => {
      const api = await start(anthropicMessages, () => ({ text: 'ok' }));
      assert.equal((await post(`${api.url}/v1/messages?beta=true`, request)).status, 200);
      const [digested] = api.requests;
      assert.ok(digested);
      assert.equal(digested.path, '/v1/messages?beta=true');
      assert.equal(digested.model, 'claude-sonnet-fake');
      assert.equal(digested.stream, false);
      assert.equal(digested.system, 'You are Claude Code.\nEnvironment: linux');
      assert.equal(digested.lastUserText, '');
      assert.equal(digested.allUserText, 'Create a.txt');
      assert.deepEqual(digested.toolNames, ['Write', 'Bash']);
      assert.equal(digested.hasToolResult, true);
    });

    it('streams text and a tool call as the documented events, with usage', async () => {
      const api = await start(anthropicMessages, () => WRITE_CALL);
      const response = await post(`${api.url}/v1/messages?beta=true`, { ...request, stream: true });
      assert.equal(response.headers.get('content-type'), 'text/event-stream');
      const events = parseSse(await response.text());
      assert.deepEqual(
        events.map((event) => event.event),
        [
          'message_start',
          ...['content_block_start', 'content_block_delta', 'content_block_stop'],
          ...['content_block_start', 'content_block_delta', 'content_block_stop'],
          'message_delta',
          'message_stop',
        ],
      );
      const data = events.map((event): unknown => JSON.parse(event.data));
      data.forEach((value, index) => assert.equal(field(value, 'type'), events[index]!.event, 'each event repeats its name as type'));
      assert.equal(field(data[0], 'message', 'model'), 'claude-sonnet-fake');
      assert.ok(Number(field(data[0], 'message', 'usage', 'input_tokens')) > 0);
      assert.equal(field(data[2], 'delta', 'text'), 'Writing it.');
      assert.deepEqual(field(data[4], 'content_block'), { type: 'tool_use', id: field(data[4], 'content_block', 'id'), name: 'Write', input: {} });
      assert.match(String(field(data[4], 'content_block', 'id')), /^toolu_/);
      assert.deepEqual(JSON.parse(String(field(data[5], 'delta', 'partial_json'))), WRITE_CALL.toolCalls![0]!.input);
      assert.equal(field(data[7], 'delta', 'stop_reason'), 'tool_use');
      assert.ok(Number(field(data[7], 'usage', 'output_tokens')) > 0);
    });

    it('answers without streaming as one message; a reply with neither text nor tools is an empty text block', async () => {
      const replies: ScriptedReply[] = [WRITE_CALL, {}];
      const api = await start(anthropicMessages, () => replies.shift()!);
      const message = await (await post(`${api.url}/v1/messages`, request)).json();
      assert.equal(field(message, 'type'), 'message');
      assert.equal(field(message, 'stop_reason'), 'tool_use');
      assert.deepEqual(
        objectsIn(field(message, 'content')).map((block) => block.type),
        ['text', 'tool_use'],
      );
      assert.deepEqual(field(message, 'content', 1, 'input'), WRITE_CALL.toolCalls![0]!.input);
      assert.ok(Number(field(message, 'usage', 'output_tokens')) > 0);
      const empty = await (await post(`${api.url}/v1/messages`, request)).json();
      assert.deepEqual(field(empty, 'content'), [{ type: 'text', text: '' }]);
      assert.equal(field(empty, 'stop_reason'), 'end_turn');
    });

    it('answers a scripted error with its status and the API’s error type, and a throwing responder with 400', async () => {
      const api = await start(anthropicMessages, (digested) => {
        if (digested.toolNames.length === 0) throw new Error('unscripted');
        return { error: { status: 429, message: 'slow down' } };
      });
      const limited = await post(`${api.url}/v1/messages`, request);
      assert.equal(limited.status, 429);
      assert.deepEqual(await limited.json(), { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } });
      const thrown = await post(`${api.url}/v1/messages`, { ...request, tools: [] });
      assert.equal(thrown.status, 400);
      assert.match(String(field(await thrown.json(), 'error', 'message')), /responder threw: Error: unscripted/);
    });
  });

  describe('the OpenAI Chat Completions API', () => {
    const request = {
      model: 'm',
      tools: [
        { type: 'function', function: { name: 'write' } },
        { type: 'function', function: { name: 'bash' } },
      ],
      messages: [
        { role: 'system', content: 'You are OpenCode.' },
        { role: 'user', content: [{ type: 'text', text: 'Add a VERSION file' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'Wrote file' },
      ],
    };

    it('serves its base URL under /v1 and digests a request', async () => {
      const api = await start(openAiChat, () => ({ text: 'ok' }));
      assert.match(api.url, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      assert.equal((await post(`${api.url}/chat/completions`, request)).status, 200);
      const [digested] = api.requests;
      assert.ok(digested);
      assert.equal(digested.system, 'You are OpenCode.');
      assert.equal(digested.lastUserText, 'Add a VERSION file');
      assert.equal(digested.allUserText, 'Add a VERSION file');
      assert.deepEqual(digested.toolNames, ['write', 'bash']);
      assert.equal(digested.hasToolResult, true);
    });

    it('streams text and a tool call as chunks that reassemble, ending with usage and [DONE]', async () => {
      const api = await start(openAiChat, () => WRITE_CALL);
      const events = parseSse(await (await post(`${api.url}/chat/completions`, { ...request, stream: true })).text());
      assert.ok(events.every((event) => event.event === undefined));
      assert.equal(events.pop()?.data, '[DONE]');
      const chunks = events.map((event): unknown => JSON.parse(event.data));
      assert.ok(chunks.every((chunk) => field(chunk, 'object') === 'chat.completion.chunk'));
      const deltas = chunks.map((chunk) => field(chunk, 'choices', 0, 'delta'));
      assert.equal(deltas.map((delta) => field(delta, 'content') ?? '').join(''), 'Writing it.');
      const calls = deltas.flatMap((delta) => objectsIn(field(delta, 'tool_calls')));
      assert.equal(field(calls[0], 'function', 'name'), 'Write');
      assert.match(String(field(calls[0], 'id')), /^call_/);
      const argumentsJson = calls.map((call) => String(field(call, 'function', 'arguments'))).join('');
      assert.deepEqual(JSON.parse(argumentsJson), WRITE_CALL.toolCalls![0]!.input);
      const last = chunks[chunks.length - 1];
      assert.equal(field(last, 'choices', 0, 'finish_reason'), 'tool_calls');
      assert.equal(
        Number(field(last, 'usage', 'total_tokens')),
        Number(field(last, 'usage', 'prompt_tokens')) + Number(field(last, 'usage', 'completion_tokens')),
      );
      assert.ok(Number(field(last, 'usage', 'completion_tokens')) > 0);
    });

    it('answers without streaming as one completion: content null beside tool calls', async () => {
      const replies: ScriptedReply[] = [{ toolCalls: WRITE_CALL.toolCalls! }, { text: 'Done.' }];
      const api = await start(openAiChat, () => replies.shift()!);
      const calling = await (await post(`${api.url}/chat/completions`, request)).json();
      assert.equal(field(calling, 'object'), 'chat.completion');
      assert.equal(field(calling, 'choices', 0, 'message', 'content'), null);
      assert.equal(field(calling, 'choices', 0, 'message', 'tool_calls', 0, 'function', 'name'), 'Write');
      assert.equal(field(calling, 'choices', 0, 'finish_reason'), 'tool_calls');
      const done = await (await post(`${api.url}/chat/completions`, request)).json();
      assert.deepEqual(field(done, 'choices', 0, 'message'), { role: 'assistant', content: 'Done.' });
      assert.equal(field(done, 'choices', 0, 'finish_reason'), 'stop');
      assert.ok(Number(field(done, 'usage', 'prompt_tokens')) > 0);
    });

    it('answers a scripted error in OpenAI’s error body', async () => {
      const api = await start(openAiChat, () => ({ error: { status: 400, message: 'bad tool' } }));
      const response = await post(`${api.url}/chat/completions`, request);
      assert.equal(response.status, 400);
      assert.deepEqual(await response.json(), { error: { message: 'bad tool', type: 'invalid_request_error', code: null, param: null } });
    });
  });
});
