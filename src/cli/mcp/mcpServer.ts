import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { CodeloopsError, failureAnswer, failureOf, isCodeloopsError } from '../../sessionFormat/failures.js';
import * as z from '../../sessionFormat/zod.js';
import { cliHint } from '../failureHints.js';
import { TOOLS, type ToolContext, type ToolDefinition } from './mcpTools.js';

/**
 * `codeloops mcp`: an MCP server over stdio (the official SDK's low-level `Server`).
 * Built as a bundle of its own (`dist/mcp.js`), loaded only by this command: the SDK
 * and its full zod never cost `sessions list` a millisecond. The low-level server
 * rather than `McpServer`, so that every failure, a bad argument included, is one
 * shape: `isError` with the CLI's `--json` failure (`{"error": {code, message,
 * details, hint}}`) as structured content.
 */

declare const CODELOOPS_VERSION: string;
const VERSION = typeof CODELOOPS_VERSION === 'string' ? CODELOOPS_VERSION : '0.0.0-dev';

/** What an MCP client is told to do next; where the CLI's hint names a flag, the tool's argument instead. */
function mcpHint(error: CodeloopsError): string | null {
  switch (error.code) {
    case 'usage':
      return 'Call the tool again with the arguments its input schema asks for.';
    case 'directory_missing':
    case 'not_a_repository':
    case 'not_a_work_tree':
      return 'Give working_dir as the absolute path of a folder in a git repository (git init makes one).';
    case 'session_not_found':
    case 'session_ambiguous':
      return 'Call list_sessions to see the sessions and their ids.';
    case 'project_untrusted':
      return 'Only the user can trust a project: ask them to read its codeloops.toml and run "codeloops trust" in it (this server never trusts one itself).';
    case 'loop_running':
      return "One loop runs per repository: wait for it (wait_session) or stop it (interrupt_session), then start again. A loop's own agents cannot start another in its repository.";
    case 'iteration_not_found':
      return "Call get_session to see the session's iterations.";
    default:
      return cliHint(error) ?? null;
  }
}

export function failureResult(error: unknown): CallToolResult {
  const failure = failureAnswer(failureOf(error, isCodeloopsError(error) ? mcpHint(error) : null));
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(failure) }], structuredContent: failure };
}

function listedTool(definition: ToolDefinition): Tool {
  const schema = z.toJSONSchema(definition.arguments, { target: 'draft-7', io: 'input' }) as Tool['inputSchema'];
  delete (schema as { $schema?: string }).$schema;
  return {
    name: definition.name,
    title: definition.title,
    description: definition.description,
    inputSchema: schema,
    annotations: {
      title: definition.title,
      readOnlyHint: definition.effect === 'reads',
      // A loop's agents edit and delete files, run commands and reach the network; reading and interrupting do none of that.
      destructiveHint: definition.effect === 'edits',
      openWorldHint: definition.effect === 'edits',
    },
  };
}

/** Arguments that do not fit the tool's schema are a `usage` failure naming each wrong one. */
function parsedArguments(definition: ToolDefinition, args: unknown): unknown {
  const parsed = z.safeParse(definition.arguments, args ?? {});
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`);
  throw new CodeloopsError('usage', `${definition.name} cannot take these arguments: ${problems.join('; ')}.`, { tool: definition.name, problems });
}

export function createMcpServer(cliPath: string): Server {
  const server = new Server({ name: 'codeloops', title: 'Codeloops', version: VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS.map(listedTool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const definition = TOOLS.find((each) => each.name === request.params.name);
    try {
      if (!definition) throw new CodeloopsError('usage', `No tool "${request.params.name}": the tools are ${TOOLS.map((each) => each.name).join(', ')}.`, {});
      const token = extra._meta?.progressToken;
      const context: ToolContext = {
        cliPath,
        signal: extra.signal,
        progress: async (report) => {
          if (token === undefined) return;
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...report } }).catch(() => {});
        },
      };
      const result = (await definition.run(parsedArguments(definition, request.params.arguments) as never, context)) as Record<string, unknown>;
      return { content: [{ type: 'text', text: JSON.stringify(result, null, 2) }], structuredContent: result };
    } catch (error) {
      return failureResult(error);
    }
  });
  return server;
}

/** Serves MCP on stdin and stdout until the client closes stdin; the loops it started run on. */
export async function serveMcp(): Promise<number> {
  // This bundle sits beside the CLI's (`dist/`): a loop is started with the very CLI that serves it.
  const server = createMcpServer(path.join(__dirname, 'cli.js'));
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.connect(new StdioServerTransport());
  await closed;
  await server.close();
  return 0;
}
