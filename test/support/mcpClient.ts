import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { parseLockOwner } from '../../src/sessionFormat/loopLock.js';
import { cliPath } from './cliProcess.js';
import { waitUntilGone } from './processes.js';

/**
 * `codeloops mcp` driven by the MCP SDK's own client over stdio, as an agent CLI
 * drives it: the built CLI started as a child, its tools called by name.
 */
export interface McpSession {
  client: Client;
  /** Calls a tool; its structured content, and whether it is a failure. */
  call(name: string, args: Record<string, unknown>, onprogress?: (progress: Progress) => void): Promise<{ isError: boolean; content: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startMcpServer(env: Record<string, string>): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliPath(), 'mcp'],
    env: { ...(process.env as Record<string, string>), NO_COLOR: '1', ...env },
    stderr: 'inherit',
  });
  const client = new Client({ name: 'codeloops-tests', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    async call(name, args, onprogress) {
      const result = (await client.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress, timeout: 120_000 } : {})) as CallToolResult;
      return { isError: result.isError === true, content: (result.structuredContent ?? {}) as Record<string, unknown> };
    },
    close: () => client.close(),
  };
}

/**
 * Stops the loops an MCP server started in these repositories: their runners run
 * detached, children of no test, so `stopRunners` does not see them. The lock names
 * the runner (its own process group) and its agents' groups.
 */
export async function stopDetachedRunners(repos: readonly string[]): Promise<void> {
  for (const repo of repos) {
    let owner;
    try {
      owner = parseLockOwner(fs.readFileSync(path.join(repo, '.git', 'codeloops.lock'), 'utf8'));
    } catch {
      continue;
    }
    if (!owner) continue;
    // The runner's group (its own, as it runs detached), its agents' groups, and the runner itself should it share a group.
    for (const target of [-owner.pid, ...(owner.processGroups ?? []).map((group) => -group), owner.pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await waitUntilGone(owner.pid);
  }
}
