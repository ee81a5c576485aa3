/**
 * `codeloops mcp` as the extension offers it to VS Code (an `McpStdioServerDefinition`):
 * the bundled CLI run by the editor's own Node, so an agent in VS Code's chat can
 * run and read loops with nothing to install or configure.
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
