import * as vscode from 'vscode';
import { CHAT_PARTICIPANT_ID, MCP_PROVIDER_ID, SETTINGS_SECTION, TOOL_NAMES } from '../ids.js';
import { lazyBundle } from '../lazyBundle.js';
import type * as ChatFeatures from './chatFeatures.js';
import type { ChatOutcomeMetadata, ChatStream } from './chatPorts.js';
import type { LoopChat, LoopChatDeps } from './loopChat.js';
import type { GetSessionInput, ListSessionsInput, LoopTools, LoopToolsDeps, RunLoopInput } from './loopTools.js';
import { MCP_OFFER_SETTING } from '../settings.js';
import { offeredMcpServers } from './mcpServerDefinition.js';

type Folder = vscode.WorkspaceFolder;

export interface ChatRegistration {
  extensionUri: vscode.Uri;
  extensionPath: string;
  cliPath: string;
  nodePath: string;
  version: string;
  /** Whether `codeloops mcp` is offered too (`codeloops.mcpServer.offerInEditor`), read at each of VS Code's asks. */
  offerMcpServer: () => boolean;
  deps: LoopChatDeps<Folder> & LoopToolsDeps<Folder>;
}

/**
 * Codeloops where VS Code's agents are: `@codeloops` in the chat and the language model
 * tools, their one tool set; `codeloops mcp` as an MCP server only when the setting
 * asks for it (VS Code is told again when the setting changes). Registered at activation (VS
 * Code activates the extension for them); what they run is `dist/chat.js`, loaded at
 * the first request, so that activating costs nothing more. The VS Code side only
 * adapts: what is said and done is decided in `LoopChat` and `LoopTools`.
 */
export function registerChat(options: ChatRegistration): vscode.Disposable[] {
  const { deps } = options;
  const load = lazyBundle<typeof ChatFeatures>(options.extensionPath, 'chat');
  let chat: LoopChat<Folder> | undefined;
  let tools: LoopTools<Folder> | undefined;
  const loopChat = () => (chat ??= new (load().LoopChat)(deps));
  const loopTools = () => (tools ??= new (load().LoopTools)(deps));

  const participant = vscode.chat.createChatParticipant(CHAT_PARTICIPANT_ID, async (request, _context, response, token) => ({
    metadata: await loopChat().handle({ command: request.command, prompt: request.prompt }, chatStreamOf(response), token),
  }));
  participant.iconPath = vscode.Uri.joinPath(options.extensionUri, 'media', 'codeloops.svg');
  participant.followupProvider = { provideFollowups: (result) => loopChat().followups(result.metadata as ChatOutcomeMetadata) };
  const serversChanged = new vscode.EventEmitter<void>();
  const settingWatch = vscode.workspace.onDidChangeConfiguration((change) => {
    if (change.affectsConfiguration(`${SETTINGS_SECTION}.${MCP_OFFER_SETTING}`)) serversChanged.fire();
  });
  return [
    serversChanged,
    settingWatch,
    participant,
    vscode.lm.registerTool<RunLoopInput>(TOOL_NAMES.runLoop, {
      prepareInvocation: (invocation) => loopTools().prepareRunLoop(invocation.input),
      invoke: async (invocation, token) => textResult(await loopTools().runLoop(invocation.input, token)),
    }),
    vscode.lm.registerTool<GetSessionInput>(TOOL_NAMES.getSession, {
      invoke: async (invocation) => textResult(await loopTools().getSession(invocation.input)),
    }),
    vscode.lm.registerTool<ListSessionsInput>(TOOL_NAMES.listSessions, {
      invoke: async (invocation) => textResult(await loopTools().listSessions(invocation.input)),
    }),
    vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: serversChanged.event,
      provideMcpServerDefinitions: () =>
        offeredMcpServers(options, options.offerMcpServer()).map(
          (server) => new vscode.McpStdioServerDefinition(server.label, server.command, server.args, server.env, server.version),
        ),
    }),
  ];
}

/** The chat's response stream as the `ChatStream` port: Markdown whose `command:` links may run the commands named. */
function chatStreamOf(response: vscode.ChatResponseStream): ChatStream {
  return {
    markdown: (text, commands) => {
      if (!commands?.length) return response.markdown(text);
      const trusted = new vscode.MarkdownString(text);
      trusted.isTrusted = { enabledCommands: [...commands] };
      response.markdown(trusted);
    },
    progress: (text) => response.progress(text),
    button: (command) => response.button(command),
  };
}

function textResult(text: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}
