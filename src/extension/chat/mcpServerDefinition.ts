/**
 * `codeloops mcp` as the extension can offer it to VS Code (an `McpStdioServerDefinition`):
 * the bundled CLI run by the editor's own Node. Offered only when the user asks
 * (`codeloops.mcpServer.offerInEditor`): in VS Code, the language model tools are the
 * agents' one tool set, and the MCP server's tools would be the same again under other
 * names (`run_loop{prompt, working_dir}` beside `codeloops_runLoop{task, folder}`), one
 * detaching and one not. Other clients start `codeloops mcp` themselves.
 */
export interface McpStdioServer {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  /** The extension's version: a new one tells VS Code the server's tools may have changed. */
  version: string;
}

export function mcpServerDefinition(options: { cliPath: string; nodePath: string; version: string }): McpStdioServer {
  return {
    label: 'Codeloops',
    command: options.nodePath,
    args: [options.cliPath, 'mcp'],
    // The editor's executable runs as plain Node with this variable (plain Node ignores it).
    env: { ELECTRON_RUN_AS_NODE: '1' },
    version: options.version,
  };
}

/** The definitions the provider gives VS Code: the server when the user asked for it, else none. */
export function offeredMcpServers(options: { cliPath: string; nodePath: string; version: string }, offerInEditor: boolean): McpStdioServer[] {
  return offerInEditor ? [mcpServerDefinition(options)] : [];
}
