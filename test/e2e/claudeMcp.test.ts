import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { claudeEnvironment, anthropicMessages } from '../support/modelApi/anthropicMessages.js';
import { objectsIn, startModelApi, textParts, type ModelApi, type ModelRequest, type ScriptedReply } from '../support/modelApi/scripted.js';
import { cliPath } from '../support/cliProcess.js';
import { stopDetachedRunners } from '../support/mcpClient.js';
import { agentBinary } from '../support/realAgents.js';
import { carryOnNaming, done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

const TASK = 'Use Codeloops to get hello.txt saying Hello into the repository, and tell me how it went.';

/** The text of every tool result in the conversation so far, oldest first. */
function toolResults(request: ModelRequest): string[] {
  return objectsIn(request.body.messages).flatMap((message) =>
    objectsIn(message.content)
      .filter((block) => block.type === 'tool_result')
      .flatMap((block) => textParts(block.content)),
  );
}

/**
 * The model Claude Code talks to: it calls `run_loop` on the repository, then
 * `wait_session` with the session id the first result named, then says how it ended.
 */
function mcpCallingModel(repo: string): (request: ModelRequest) => ScriptedReply {
  return (request) => {
    if (request.toolNames.length === 0) return { text: 'Codeloops run' };
    assert.ok(request.toolNames.includes('mcp__codeloops__run_loop'), `tools offered: ${request.toolNames.join(', ')}`);
    const results = toolResults(request);
    if (results.length === 0) {
      return { toolCalls: [{ name: 'mcp__codeloops__run_loop', input: { prompt: 'Write Hello into hello.txt', working_dir: repo, max_iterations: 3 } }] };
    }
    if (results.length === 1) {
      const sessionId = /"session_id":\s*"([^"]+)"/.exec(results[0]!)?.[1];
      if (!sessionId) return { text: `run_loop failed: ${results[0]}` };
      return { toolCalls: [{ name: 'mcp__codeloops__wait_session', input: { session_id: sessionId, timeout_secs: 300 } }] };
    }
    const outcome = /"outcome":\s*"([a-z_]+)"/.exec(results[1]!)?.[1] ?? 'unknown';
    return { text: `The loop ended: ${outcome}.` };
  };
}

function runClaude(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(agentBinary('claude'), args, { ...options, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

describe('end to end: the real Claude Code CLI with codeloops mcp in its MCP configuration', () => {
  let api: ModelApi | undefined;
  const repos: string[] = [];
  afterEach(async () => {
    await api?.close();
    await stopDetachedRunners(repos.splice(0));
  });
  after(removeTempDirs);

  it('calls run_loop then wait_session; the loop (scripted agents) runs in the repository and ends there', async () => {
    const {
      env: codeloopsEnv,
      repo,
      home,
    } = scriptedCliSetup({
      actor: [[{ write: { path: 'hello.txt', content: 'Helo\n' } }], [{ write: { path: 'hello.txt', content: 'Hello\n' } }]],
      critic: [[carryOnNaming('hello.txt says Helo', ['typo'], { file: 'hello.txt', line: 1 })], [done('hello.txt says Hello')]],
    });
    repos.push(repo);
    api = await startModelApi(anthropicMessages, mcpCallingModel(repo));
    const claudeHome = tempDir('codeloops-claude-home-');
    const mcpConfig = path.join(claudeHome, 'mcp.json');
    fs.writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { codeloops: { command: process.execPath, args: [cliPath(), 'mcp'], env: codeloopsEnv } } }));
    const env: NodeJS.ProcessEnv = { ...process.env, ...claudeEnvironment(api, claudeHome), ...codeloopsEnv };
    delete env.CLAUDECODE;
    delete env.CLAUDE_CODE_ENTRYPOINT;

    const result = await runClaude(
      [
        '-p',
        TASK,
        '--mcp-config',
        mcpConfig,
        '--strict-mcp-config',
        '--allowedTools',
        'mcp__codeloops__run_loop,mcp__codeloops__wait_session',
        '--output-format',
        'json',
      ],
      { cwd: tempDir('codeloops-claude-cwd-'), env },
    );
    assert.equal(result.code, 0, `${result.stderr}\n${result.stdout}`);
    assert.equal((JSON.parse(result.stdout) as { result: string }).result, 'The loop ended: success.');

    const turns = api.requests.filter((request) => request.toolNames.length > 0);
    assert.equal(toolResults(turns[turns.length - 1]!).length, 2, 'the model saw both tool results');
    assert.equal(fs.readFileSync(path.join(repo, 'hello.txt'), 'utf8'), 'Hello\n');
    const sessions = fs.readdirSync(home.sessionsDir);
    assert.equal(sessions.length, 1);
    const lines = fs
      .readFileSync(path.join(home.sessionsDir, sessions[0]!), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(lines[0]!.working_dir, repo);
    assert.deepEqual(
      lines.map((line) => line.type),
      ['session_start', 'iteration', 'iteration', 'session_end'],
    );
    assert.equal(lines[3]!.outcome, 'success');
  });
});
