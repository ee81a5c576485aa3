import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { HunkReview } from '../../src/extension/review/reviewCommands.js';
import { CodeloopsError, failureReportOf, isCodeloopsError } from '../../src/sessionFormat/failures.js';
import { parseRecordedDiffQuery, parseSnapshotQuery, snapshotQuery } from '../../src/extension/diffs/snapshotUris.js';
import { spendText } from '../../src/extension/runs/runController.js';
import { CODEX_FORECAST, SHOP_FORECAST } from '../support/forecastSessions.js';
import { AGENT_KINDS } from '../../src/agents/agentKinds.js';
import {
  CHAT_COMMANDS,
  CHAT_PARTICIPANT_ID,
  COMMANDS,
  COMPARISON_PANEL_TYPE,
  MCP_PROVIDER_ID,
  SETTINGS_SECTION,
  STATS_PANEL_TYPE,
  TOOL_NAMES,
  TREE_ITEM_KINDS,
  VIEWER_PANEL_TYPE,
  VIEWS,
} from '../../src/extension/ids.js';
import { fileNodes, iterationNodes, moreNode, sessionNode } from '../../src/extension/sessionsTree/sessionsTreeModel.js';
import type { SessionView } from '../../src/sessionView/sessionView.js';
import type { SessionSummary } from '../../src/sessionFormat/sessionSummaries.js';
import { repoRoot } from '../support/testEnvironment.js';

const NOW = Date.parse('2025-01-27T16:00:00Z');

function summary(overrides: Partial<SessionSummary> = {}): SessionSummary {
  return {
    id: '2025-01-27T15-30-45Z_a3f2c1',
    timestamp: '2025-01-27T15:30:45Z',
    prompt_preview: 'Add validation 🔐',
    working_dir: '/home/user/app',
    project: 'app',
    outcome: 'success',
    iterations: 2,
    duration_secs: 95,
    confidence: 0.9,
    actor_agent: 'Claude Code',
    critic_agent: 'Claude Code',
    total_cost_usd: 0.42,
    verification: 'verified',
    ...overrides,
  };
}

describe('sessions tree model', () => {
  it('shows each session with its outcome icon, age, iterations and duration', () => {
    const node = sessionNode(summary(), false, false, NOW);
    assert.equal(node.label, 'Add validation 🔐');
    assert.equal(node.description, '29 minutes ago · 2 iterations · 1m 35s');
    assert.deepEqual(node.icon, { id: 'pass-filled', color: 'testing.iconPassed' });
    assert.equal(node.contextValue, TREE_ITEM_KINDS.session);
    assert.equal(
      sessionNode(summary(), false, true, NOW).contextValue,
      TREE_ITEM_KINDS.resumableSession,
      'a finished session with your feedback can be carried on',
    );
    assert.match(node.tooltip.lines.join('\n'), /Outcome: success \(confidence 90%\)/);
    const others = (['failed', 'interrupted', 'max_iterations_reached', null] as const).map((outcome) =>
      sessionNode(summary({ outcome, duration_secs: null }), false, false, NOW),
    );
    assert.deepEqual(
      others.map((other) => other.icon.id),
      ['error', 'debug-pause', 'warning', 'circle-large-outline'],
    );
    assert.deepEqual(
      others.map((other) => other.description.split(' · ')[0]),
      ['failed', 'interrupted', 'iteration limit reached', 'not finished'],
    );
  });

  it('says "unverified" of a success that nothing but the critic’s word stands behind, in the description and the tooltip', () => {
    const node = sessionNode(summary({ verification: 'unverified' }), false, false, NOW);
    assert.equal(node.description, 'unverified · 29 minutes ago · 2 iterations · 1m 35s');
    assert.match(node.tooltip.lines.join('\n'), /Outcome: success, unverified: no required check passed/);
    assert.equal(
      sessionNode(summary({ verification: null }), false, false, NOW).description,
      '29 minutes ago · 2 iterations · 1m 35s',
      'an older record says nothing',
    );
  });

  it('marks a running session: a spinner, "running", and its own context menu', () => {
    const node = sessionNode(summary({ outcome: null, iterations: 1, duration_secs: null }), true, false, NOW);
    assert.equal(node.icon.id, 'sync~spin');
    assert.match(node.description, /^running · /);
    assert.equal(node.contextValue, TREE_ITEM_KINDS.runningSession);
  });

  it('lists iterations with their decision and the critic’s feedback as tooltip, and files sorted by path', () => {
    const view = {
      id: 's',
      iterations: [
        {
          iteration_number: 1,
          critic_decision: 'CONTINUE',
          feedback: 'Fix **this**',
          remaining_issues: ['one'],
          summary: null,
          git_files_changed: 2,
          git_insertions: 5,
          git_deletions: 1,
          actor_duration_secs: 30,
          files: [],
        },
        {
          iteration_number: 2,
          critic_decision: 'DONE',
          feedback: null,
          remaining_issues: [],
          summary: 'Done well',
          git_files_changed: 0,
          git_insertions: 0,
          git_deletions: 0,
          actor_duration_secs: 5,
          files: [],
        },
      ],
    } as unknown as SessionView;
    const nodes = iterationNodes(view);
    assert.deepEqual(
      nodes.map((node) => [node.label, node.description, node.icon.id]),
      [
        ['Iteration 1', 'CONTINUE · 2 files +5 −1 · 30.0s', 'debug-continue'],
        ['Iteration 2', 'DONE · 0 files +0 −0 · 5.0s', 'pass'],
      ],
    );
    assert.equal(nodes[0]!.tooltip.markdown, 'Fix **this**');
    assert.deepEqual(nodes[0]!.tooltip.lines, ['• one']);
    assert.equal(nodes[1]!.tooltip.markdown, 'Done well');
    const files = fileNodes('s', 1, [
      { path: 'src/z.ts', status: 'modified', insertions: 1, deletions: 1 },
      { path: 'README.md', status: 'added', insertions: 3, deletions: 0 },
      { path: 'img/logo.png', status: 'renamed', oldPath: 'logo.png', insertions: null, deletions: null },
    ]);
    assert.deepEqual(
      files.map((file) => [file.label, file.description]),
      [
        ['logo.png', 'img · renamed · binary'],
        ['README.md', 'added · +3 −0'],
        ['z.ts', 'src · modified · +1 −1'],
      ],
    );
    assert.equal(moreNode(450).label, 'Show 200 more (450 older)');
  });
});

describe('diff addresses', () => {
  it('round-trip an iteration, a side and a path, and refuse anything else', () => {
    const file = { session: 's1', iteration: 2, side: 'pre' as const, path: 'src/ünï code.ts' };
    assert.deepEqual(parseSnapshotQuery(snapshotQuery(file)), file);
    for (const bad of [
      '',
      'not json',
      '{}',
      JSON.stringify({ ...file, side: 'both' }),
      JSON.stringify({ ...file, path: '../../etc/passwd' }),
      JSON.stringify({ ...file, path: '/etc/passwd' }),
      JSON.stringify({ ...file, iteration: 0 }),
    ]) {
      assert.throws(() => parseSnapshotQuery(bad), /./, bad);
    }
    assert.deepEqual(parseRecordedDiffQuery('{"session":"s","iteration":1}'), { session: 's', iteration: 1 });
  });
});

describe('the extension manifest', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8'));

  it('declares exactly the commands the code has, and every menu names a declared command', () => {
    const declared = (manifest.contributes.commands as Array<{ command: string }>).map((entry) => entry.command).sort();
    assert.deepEqual(declared, (Object.values(COMMANDS) as string[]).sort());
    const menus = Object.values(manifest.contributes.menus as Record<string, Array<{ command: string }>>).flat();
    for (const entry of menus) assert.ok(declared.includes(entry.command), entry.command);
  });

  it('names the view, the container, the viewer panel and the settings the code uses', () => {
    assert.equal(manifest.contributes.viewsContainers.activitybar[0].id, VIEWS.container);
    assert.equal(manifest.contributes.views[VIEWS.container][0].id, VIEWS.sessions);
    for (const panel of [VIEWER_PANEL_TYPE, COMPARISON_PANEL_TYPE, STATS_PANEL_TYPE]) {
      assert.ok(manifest.activationEvents.includes(`onWebviewPanel:${panel}`), `${panel} is restored after a reload`);
    }
    assert.ok(manifest.activationEvents.includes(`onView:${VIEWS.sessions}`));
    const settings = Object.keys(manifest.contributes.configuration.properties);
    const read = [
      'agent',
      'model',
      'maxIterations',
      'agentPaths',
      'showAgentOutput',
      'openViewerOnRun',
      'mcpServer.offerInEditor',
      'actor.agent',
      'actor.model',
      'actor.timeoutSecs',
      'critic.agent',
      'critic.model',
      'critic.timeoutSecs',
      'maxCostUsd',
      'maxTokens',
      'maxDurationSecs',
      'stallAfter',
      'review',
      'checks',
    ];
    assert.deepEqual(settings.sort(), read.map((key) => `${SETTINGS_SECTION}.${key}`).sort());
  });

  it('shows a running loop’s cost against its cap in the status bar text, marking estimates', () => {
    const guards = { checks: [], max_cost_usd: 5, max_tokens: null, max_duration_secs: null, stall_after: 3, stall_action: 'stop' as const };
    const spend = (cost: number | null, estimated = false) => ({ total_cost_usd: cost, total_tokens: 1000, cost_estimated: estimated, elapsed_secs: 3 });
    assert.equal(spendText({ guards, spend: null }), '$0.00 of $5.00', 'the cap shows before any cost');
    assert.equal(spendText({ guards, spend: spend(0.4213) }), '$0.42 of $5.00');
    assert.equal(spendText({ guards, spend: spend(1.5, true) }), '≈$1.50 of $5.00');
    assert.equal(spendText({ guards: { ...guards, max_cost_usd: null }, spend: spend(1.5) }), '$1.50');
    assert.equal(spendText({ guards: null, spend: null }), undefined, 'nothing to show');
    // Against the forecast's p90 as well, once it is known.
    const forecast = { ...SHOP_FORECAST };
    assert.equal(spendText({ guards, spend: spend(0.4213), forecast }), '$0.42 of $5.00 (p90 $2.43)');
    assert.equal(spendText({ guards: null, spend: spend(1.5, true), forecast }), '≈$1.50 (p90 $2.43)');
    assert.equal(spendText({ guards: null, spend: null, forecast }), '$0.00 (p90 $2.43)', 'the p90 shows before any cost');
    assert.equal(spendText({ guards, spend: spend(0.4213), forecast: CODEX_FORECAST }), '$0.42 of $5.00', 'no p90 to show');
  });

  it('declares @codeloops, the language model tools and the MCP server as the code registers them, for a VS Code that has all three', () => {
    const [participant, ...others] = manifest.contributes.chatParticipants;
    assert.equal(others.length, 0);
    assert.equal(participant.id, CHAT_PARTICIPANT_ID);
    assert.equal(participant.name, 'codeloops');
    assert.deepEqual(
      participant.commands.map((command: { name: string }) => command.name),
      Object.values(CHAT_COMMANDS),
    );
    const tools = manifest.contributes.languageModelTools as Array<
      Record<string, unknown> & { name: string; tags: string[]; inputSchema: { properties: object } }
    >;
    assert.deepEqual(
      tools.map((tool) => tool.name),
      Object.values(TOOL_NAMES),
    );
    for (const tool of tools) {
      // VS Code refuses a tool without these, and one referenced in prompts without its reference name.
      for (const field of ['displayName', 'modelDescription', 'userDescription', 'inputSchema']) assert.ok(tool[field], `${tool.name}.${field}`);
      assert.ok(!tool.canBeReferencedInPrompt || /^[\w-]+$/.test(String(tool.toolReferenceName)), tool.name);
      // The manifest has no read-only field: a tag says it, the model's description too, and only the run asks to be confirmed.
      const readOnly = tool.name !== TOOL_NAMES.runLoop;
      assert.equal(tool.tags.includes('read-only'), readOnly, tool.name);
      assert.equal(String(tool.modelDescription).startsWith('Read-only.'), readOnly, tool.name);
    }
    const runLoop = tools.find((tool) => tool.name === TOOL_NAMES.runLoop)!;
    assert.deepEqual(Object.keys(runLoop.inputSchema.properties), [
      'task',
      'actorAgent',
      'criticAgent',
      'actorModel',
      'criticModel',
      'maxIterations',
      'checks',
      'folder',
    ]);
    assert.deepEqual((runLoop.inputSchema.properties as { actorAgent: { enum: string[] } }).actorAgent.enum, [...AGENT_KINDS]);
    assert.deepEqual(manifest.contributes.mcpServerDefinitionProviders, [{ id: MCP_PROVIDER_ID, label: 'Codeloops' }]);
    // VS Code 1.101 is the first with all three stable (the MCP server definition provider came last); the types follow it.
    assert.equal(manifest.engines.vscode, '^1.101.0');
    assert.equal(manifest.devDependencies['@types/vscode'], '^1.101.0');
  });

  it('keeps loops out of untrusted workspaces and machine paths out of workspace settings', () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, 'limited');
    assert.equal(manifest.contributes.configuration.properties['codeloops.agentPaths'].scope, 'machine');
  });

  it('ships only the bundles and the images (.vscodeignore)', () => {
    const ignore = fs.readFileSync(path.join(repoRoot(), '.vscodeignore'), 'utf8');
    assert.match(ignore, /^\*\*$/m);
    assert.match(ignore, /^!dist\/\*\*$/m);
    assert.match(ignore, /^dist\/\*\*\/\*\.map$/m);
  });
});

describe('the parts of the extension loaded apart (dist/chat.js, dist/review.js)', () => {
  it('fail with errors the extension knows by their code: each bundle has its own copy of CodeloopsError', async () => {
    const review = createRequire(__filename)(path.join(repoRoot(), 'dist', 'review.js')) as HunkReview;
    const error = await review
      .rejectHunk({
        sessionId: 'gone',
        workingDir: path.join(repoRoot(), 'no-such-folder'),
        sidecarDir: path.join(repoRoot(), 'no-such-sidecar'),
        iteration: 1,
        hunk: 1,
        reason: null,
      })
      .then(
        () => assert.fail('a folder that is not there has no hunks'),
        (thrown: unknown) => thrown,
      );
    assert.ok(!(error instanceof CodeloopsError), 'another copy of the class');
    assert.ok(isCodeloopsError(error));
    assert.deepEqual(failureReportOf(error).code, (error as { code: string }).code);
    assert.notEqual(failureReportOf(error).code, 'internal');
    // A system error has a code too, but not one of ours.
    const missing = await fs.promises.readFile(path.join(repoRoot(), 'no-such-file')).catch((thrown: unknown) => thrown);
    assert.ok(!isCodeloopsError(missing));
  });
});
