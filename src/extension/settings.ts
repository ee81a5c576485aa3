import * as vscode from 'vscode';
import { AGENT_KINDS, type AgentKind } from '../agents/agentKinds.js';
import { SETTINGS_SECTION } from './ids.js';

/**
 * The extension's settings mirror the TOML config. They reach the runner as one
 * config layer (`--editor-settings`), ranked between the global config and the
 * project's `codeloops.toml`, so a project's file still applies. Empty means unset.
 */
export function editorSettingsJson(folder: vscode.WorkspaceFolder): string | undefined {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, folder.uri);
  const agent = (key: string): AgentKind | undefined => {
    const value = config.get<string>(key);
    return value && (AGENT_KINDS as readonly string[]).includes(value) ? (value as AgentKind) : undefined;
  };
  const text = (key: string): string | undefined => config.get<string>(key)?.trim() || undefined;
  const positive = (key: string): number | undefined => {
    const value = config.get<number | null>(key);
    return typeof value === 'number' && value > 0 ? value : undefined;
  };
  const role = (name: 'actor' | 'critic') =>
    prune({ agent: agent(`${name}.agent`), model: text(`${name}.model`), timeout_secs: positive(`${name}.timeoutSecs`) });
  const paths = config.get<Record<string, string>>('agentPaths') ?? {};
  const agents = Object.fromEntries(
    Object.entries(paths)
      .filter(([kind, path]) => (AGENT_KINDS as readonly string[]).includes(kind) && kind !== 'command' && typeof path === 'string' && path.trim())
      .map(([kind, path]) => [kind, { path: path.trim() }]),
  );
  const maxIterations = config.get<number | null>('maxIterations');
  const review = config.get<string>('review');
  const stallAfter = config.get<number | null>('stallAfter');
  const checks = (config.get<unknown[]>('checks') ?? []).flatMap((entry) => {
    const check = entry as { name?: unknown; run?: unknown; timeoutSecs?: unknown; required?: unknown };
    if (typeof check.name !== 'string' || typeof check.run !== 'string' || !check.name.trim() || !check.run.trim()) return [];
    return [
      prune({
        name: check.name.trim(),
        run: check.run,
        timeout_secs: typeof check.timeoutSecs === 'number' && check.timeoutSecs > 0 ? check.timeoutSecs : undefined,
        required: typeof check.required === 'boolean' ? check.required : undefined,
      }),
    ];
  });
  const layer = prune({
    agent: agent('agent'),
    model: text('model'),
    max_iterations: typeof maxIterations === 'number' && maxIterations >= 0 ? Math.floor(maxIterations) : undefined,
    max_cost_usd: positive('maxCostUsd'),
    max_tokens: positive('maxTokens') === undefined ? undefined : Math.floor(positive('maxTokens')!),
    max_duration_secs: positive('maxDurationSecs'),
    stall: typeof stallAfter === 'number' && stallAfter >= 0 ? { unchanged_iterations: Math.floor(stallAfter) } : undefined,
    checks: checks.length > 0 ? checks : undefined,
    review: review === 'pause' || review === 'off' ? review : undefined,
    actor: role('actor'),
    critic: role('critic'),
    agents: Object.keys(agents).length > 0 ? agents : undefined,
  });
  return layer ? JSON.stringify(layer) : undefined;
}

/** The setting that offers `codeloops mcp` to VS Code's agents besides the language model tools (off: one tool set in the editor). */
export const MCP_OFFER_SETTING = 'mcpServer.offerInEditor';

export function offerMcpServerInEditor(): boolean {
  return vscode.workspace.getConfiguration(SETTINGS_SECTION).get<boolean>(MCP_OFFER_SETTING) ?? false;
}

export function openViewerOnRun(): boolean {
  return vscode.workspace.getConfiguration(SETTINGS_SECTION).get<boolean>('openViewerOnRun') ?? true;
}

export function showAgentText(): boolean {
  return vscode.workspace.getConfiguration(SETTINGS_SECTION).get<boolean>('showAgentOutput') ?? true;
}

/** Review before continuing, on or off for this workspace. */
export async function toggleReviewPause(): Promise<void> {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION);
  const next = config.get<string>('review') === 'pause' ? 'off' : 'pause';
  await config.update('review', next, vscode.ConfigurationTarget.Workspace);
  void vscode.window.showInformationMessage(
    next === 'pause' ? 'Codeloops: loops now wait for your review after each iteration that goes on.' : 'Codeloops: loops no longer wait for your review.',
  );
}

/** Drops unset keys; undefined when nothing is left. */
function prune<T extends Record<string, unknown>>(value: T): Partial<T> | undefined {
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  return entries.length > 0 ? (Object.fromEntries(entries) as Partial<T>) : undefined;
}
