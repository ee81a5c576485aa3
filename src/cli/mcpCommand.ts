import path from 'node:path';
import type * as McpServerModule from './mcp/mcpServer.js';

/**
 * `codeloops mcp`: loads the MCP server's own bundle (`dist/mcp.js`, built from
 * `mcp/mcpServer.ts`) and serves. The SDK it holds (with the full zod it needs) is
 * hundreds of kilobytes that no other command should read or compile at its start:
 * the runner's bundle only names the file, at run time, so the bundler leaves it out.
 */
export async function mcpCommand(): Promise<number> {
  const bundle = path.join(__dirname, 'mcp.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file beside this bundle, loaded only by this command
  const server = require(bundle) as typeof McpServerModule;
  return server.serveMcp();
}
