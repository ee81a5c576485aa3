import assert from 'node:assert/strict';
import { adapterFor } from '../../src/agents/adapterRegistry.js';
import { runSummarySchema, type RunEventOf, type RunSummary } from '../../src/sessionFormat/runEvents.js';
import type { IterationLine, SessionStartLine } from '../../src/sessionFormat/sessionLines.js';
import { runCli } from './cliProcess.js';
import { anthropicMessages } from './modelApi/anthropicMessages.js';
import { geminiApi } from './modelApi/geminiApi.js';
import { openAiChat, writeOpenCodeProjectConfig } from './modelApi/openAiChat.js';
import { openAiResponses } from './modelApi/openAiResponses.js';
import { startModelApi, type ModelApi, type ModelRequest, type Responder, type ScriptedToolCall, type WireProtocol } from './modelApi/scripted.js';
import { stopRunners } from './processes.js';
import { agentRuns, installedVersion, realAgentHome, type RealAgent, type ScriptedApis } from './realAgents.js';
import { isCriticRequest } from './scriptedClaude.js';
import { assertValidSessionFile, type ValidSessionFile } from './sessionFormatCheck.js';
import { createRepo, git, removeTempDirs, treeOf, type IsolatedHome } from './testEnvironment.js';

/**
 * The end-to-end tests of the real agent CLIs, as one table: each agent's test file
 * holds only its scripted model and a row saying what its loop must show
 * (`describeRealAgent`); the aspects every agent is checked for are written once here.
 */

/** How each real CLI meets its scripted model API, and what the user sees it called. */
interface AgentWiring {
  /** Its name in the session file (`actor_agent`, `critic_agent`). */
  name: string;
  protocol: WireProtocol;
  /** Where the CLI finds its API: its environment (realAgentHome), or for OpenCode the project's own config. */
  connect(api: ModelApi, repo: string): ScriptedApis;
  /** A call of the CLI's shell tool, as its model makes one. */
  shell(command: string, description: string): ScriptedToolCall;
}

export const REAL_AGENTS: Readonly<Record<RealAgent, AgentWiring>> = {
  claude: {
    name: 'Claude Code',
    protocol: anthropicMessages,
    connect: (api) => ({ anthropic: api }),
    shell: (command, description) => ({ name: 'Bash', input: { command, description } }),
  },
  opencode: {
    name: 'OpenCode',
    protocol: openAiChat,
    connect: (api, repo) => {
      commitOpenCodeConfig(repo, api);
      return {};
    },
    shell: (command, description) => ({ name: 'bash', input: { command, description } }),
  },
  codex: {
    name: 'Codex',
    protocol: openAiResponses,
    connect: (api) => ({ responses: api }),
    shell: (command) => ({ name: 'exec_command', input: { cmd: command } }),
  },
  gemini: {
    name: 'Gemini CLI',
    protocol: geminiApi,
    connect: (api) => ({ gemini: api }),
    shell: (command, description) => ({ name: 'run_shell_command', input: { command, description } }),
  },
};

/** OpenCode's project config is the user's own file: committed, so it is no part of any diff. */
function commitOpenCodeConfig(repo: string, api: ModelApi): void {
  writeOpenCodeProjectConfig(repo, api);
  git(repo, 'add', 'opencode.json');
  git(repo, 'commit', '-q', '-m', 'opencode config');
}

/** An agent session id that is a UUID (Claude Code's, Codex's thread, Gemini CLI's). */
export const UUID = /^[0-9a-f-]{36}$/;

/** Whether a request is an agent's turn (it offers tools) rather than a side request such as a title. */
export const isAgentTurn = (request: ModelRequest): boolean => request.toolNames.length > 0;
/** The actor's turns: those with tools that are not the critic's. */
export const isActorTurn = (request: ModelRequest): boolean => isAgentTurn(request) && !isCriticRequest(request);

/** Starts a scripted model API speaking `protocol`, answered by `responder`. */
export type StartModelApi = (protocol: WireProtocol, responder: Responder) => Promise<ModelApi>;

/**
 * Starts scripted model APIs for the tests of a describe block: every runner and agent
 * is stopped after each test (one that fails halfway leaves nothing holding the cores
 * for the tests after it), and when the block ends its APIs close and its temporary
 * folders go. Call it once, at the top of the block.
 */
export function scriptedApis(): StartModelApi {
  const started: ModelApi[] = [];
  afterEach(stopRunners);
  after(async () => {
    await Promise.all(started.splice(0).map((api) => api.close()));
    removeTempDirs();
  });
  return async (protocol, responder) => {
    const api = await startModelApi(protocol, responder);
    started.push(api);
    return api;
  };
}

/** A role's agent and the scripted model its API answers with. */
export interface ScriptedRole {
  agent: RealAgent;
  model: Responder;
}

/** A repository and a home in which the real CLIs of these roles reach their scripted APIs, one API an agent. */
export interface RealAgentSetup {
  repo: string;
  /** The APIs in the order of the roles given. */
  apis: ModelApi[];
  env: Record<string, string>;
  home: IsolatedHome;
  /** The files as the loop found them: what it leaves is compared against this. */
  treeBefore: Record<string, string>;
}

/** Starts each role's scripted API and wires its CLI to it, for loops in `repo`. */
export async function setUpRealAgents(startApi: StartModelApi, repo: string, roles: readonly ScriptedRole[]): Promise<RealAgentSetup> {
  const apis: ModelApi[] = [];
  let wired: ScriptedApis = {};
  for (const { agent, model } of roles) {
    const api = await startApi(REAL_AGENTS[agent].protocol, model);
    apis.push(api);
    wired = { ...wired, ...REAL_AGENTS[agent].connect(api, repo) };
  }
  const { env, home } = realAgentHome(
    wired,
    roles.map((role) => role.agent),
  );
  return { repo, apis, env, home, treeBefore: treeOf(repo) };
}

/** A repository holding a README, in which the row's agent plays both roles. */
async function setUpRow(startApi: StartModelApi, row: RealAgentRow): Promise<RealAgentSetup> {
  const repo = createRepo({ files: { 'README.md': '# demo\n' } });
  return setUpRealAgents(startApi, repo, [{ agent: row.agent, model: row.model(repo) }]);
}

/** A loop run to its end with `--json-output`, and what it recorded. */
export interface FinishedLoop extends RealAgentSetup {
  outcome: RunSummary;
  session: ValidSessionFile;
  /** The `agent_finished` events of its sidecar record, in order. */
  runs: RunEventOf<'agent_finished'>[];
}

/** Runs `codeloops <args> --json-output` in the repository; it must end with exit code 0 (else its stderr is the failure). */
export async function runToTheEnd(setup: RealAgentSetup, args: readonly string[]): Promise<FinishedLoop> {
  const result = await runCli([...args, '--json-output'], { cwd: setup.repo, env: setup.env });
  assert.equal(result.code, 0, `stderr:\n${result.stderr}`);
  const outcome = runSummarySchema.parse(JSON.parse(result.stdout));
  return { ...setup, outcome, session: assertValidSessionFile(outcome.session_file), runs: agentRuns(setup.home, outcome.session_id) };
}

/** What one iteration's line must hold: the fields as recorded, and what its diff and the actor's output show. */
export interface IterationCheck {
  fields: Partial<IterationLine>;
  diff: RegExp[];
  actorOutput?: RegExp;
}

/** A row of the table: one real CLI as actor and critic, and what its loops must show. */
export interface RealAgentRow {
  agent: RealAgent;
  title: string;
  /**
   * The scripted model, given the repository (for the paths its tools write): the actor's
   * turns and the critic's, told apart by the critic's prompt (`isCriticRequest`).
   */
  model: (repo: string) => Responder;
  /** `-p <task>` and the flags that choose the agent and its models (`--json-output` is added). */
  runArgs: string[];
  /** The files the finished loop adds or changes. */
  work: Record<string, string>;
  /** A loop that takes two iterations: CONTINUE with feedback, then DONE. */
  twoIterations: {
    title: string;
    /** Fields of the outcome beyond success in two iterations. */
    outcome?: Partial<RunSummary>;
    /** Fields of the session_start line: the agents and models chosen. */
    start: Partial<SessionStartLine>;
    iterations: [IterationCheck, IterationCheck];
    /** The form of the agent's own session id, which resume hands back to it. */
    agentSessionId: RegExp;
    /** Whether the CLI reports a cost (not only tokens) for each run. */
    reportsCost: boolean;
    /** The tool calls of the actor's first run. */
    actorToolCalls: number;
    /** The agent's own aspects, each a test: what it sent the model, how its critic was kept from writing. */
    checks: Record<string, (loop: FinishedLoop) => void>;
  };
  /** The loop stopped after its first iteration, then resumed: the actor carries on its own agent session. */
  resume: {
    title: string;
    /** Where the request holds the conversation so far (the body's messages, input or contents). */
    conversation: (request: ModelRequest) => unknown;
    /** What of the first iteration the resumed actor's conversation must hold. */
    carries: RegExp[];
    /** The critic's feedback, which the resumed actor's prompt must carry. */
    feedback: RegExp;
    /** The agent's own check of the resumed loop. */
    check?: (resumed: ResumedLoop) => void;
  };
}

/**
 * The end-to-end tests of one real agent CLI, from its row: its version is one the
 * adapter lists; a two-iteration loop, run once, checked one aspect a test; and a
 * stopped loop resumed in the actor's own agent session.
 */
export function describeRealAgent(row: RealAgentRow): void {
  describe(row.title, () => {
    const startApi = scriptedApis();

    it('is a version the adapter lists as tested', () => {
      const version = /\d+\.\d+\.\d+/.exec(installedVersion(row.agent))?.[0];
      assert.ok(version && adapterFor(row.agent).testedVersions.includes(version), `${row.agent} ${version}`);
    });

    describe(row.twoIterations.title, () => {
      let loop: FinishedLoop;
      before(async () => {
        loop = await runToTheEnd(await setUpRow(startApi, row), row.runArgs);
      });
      describeTwoIterations(row, () => loop);
    });

    it(row.resume.title, async () => {
      const setup = await setUpRow(startApi, row);
      const resumed = await stopThenResume(setup, row.runArgs);
      assert.match(resumed.actorSession, row.twoIterations.agentSessionId);
      assert.deepEqual(treeOf(setup.repo), { ...setup.treeBefore, ...row.work });
      const conversation = JSON.stringify(row.resume.conversation(resumed.actorRequest));
      for (const earlier of row.resume.carries) assert.match(conversation, earlier, 'the earlier conversation');
      assert.match(resumed.actorRequest.lastUserText, row.resume.feedback);
      row.resume.check?.(resumed);
    });
  });
}

/** The aspects of a two-iteration loop every agent is checked for, then the agent's own. */
function describeTwoIterations(row: RealAgentRow, finished: () => FinishedLoop): void {
  const expected = row.twoIterations;
  it('ends in success after two iterations', () => {
    const { outcome } = finished();
    assert.equal(outcome.status, 'success');
    assert.equal(outcome.iterations, 2);
    for (const [field, value] of Object.entries(expected.outcome ?? {})) assert.deepEqual(outcome[field as keyof RunSummary], value, field);
  });

  it('leaves the work on disk, and nothing else', () => {
    const { repo, treeBefore } = finished();
    assert.deepEqual(treeOf(repo), { ...treeBefore, ...row.work });
  });

  it('records the agents and models chosen, and the success, in the session file', () => {
    const { start, end } = finished().session;
    for (const [field, value] of Object.entries(expected.start)) assert.deepEqual(start[field as keyof SessionStartLine], value, field);
    assert.equal(end?.outcome, 'success');
  });

  expected.iterations.forEach((check, index) => {
    const number = index + 1;
    it(`records iteration ${number}: the critic’s ${check.fields.critic_decision}, the diff${check.actorOutput ? ', the actor’s words and tool calls' : ''}`, () => {
      const iteration = finished().session.iterations[index]!;
      for (const [field, value] of Object.entries(check.fields)) assert.deepEqual(iteration[field as keyof IterationLine], value, field);
      for (const change of check.diff) assert.match(iteration.git_diff, change);
      if (check.actorOutput) assert.match(iteration.actor_output, check.actorOutput);
    });
  });

  it('records each agent run from the real stream: succeeded, its agent session, its usage, only events and fields the adapter knows', () => {
    const { runs } = finished();
    assert.equal(runs.length, 4, 'actor and critic, twice');
    for (const run of runs) {
      assert.equal(run.succeeded, true, run.failure_reason ?? '');
      assert.match(run.agent_session_id ?? '', expected.agentSessionId);
      assert.ok((run.usage?.inputTokens ?? 0) > 0, JSON.stringify(run.usage));
      if (expected.reportsCost) assert.ok((run.usage?.costUsd ?? 0) > 0, JSON.stringify(run.usage));
      assert.deepEqual(run.drift, { unknownEvents: 0, unknownFields: 0, examples: [] }, 'every event and field is one the adapter knows');
    }
    assert.equal(runs[0]!.tool_calls, expected.actorToolCalls);
  });

  it('asks the scripted API only for model turns', () => {
    assert.deepEqual(finished().apis[0]!.unexpected, [], 'the CLI asked only for model turns');
  });

  for (const [title, check] of Object.entries(expected.checks)) it(title, () => check(finished()));
}

/** A loop stopped after its first iteration and carried on with `codeloops resume`. */
export interface ResumedLoop {
  setup: RealAgentSetup;
  stoppedId: string;
  /** The actor's agent session, recorded in the first run and carried on in the second. */
  actorSession: string;
  /** The resumed actor's first request to the model: the conversation it carried on. */
  actorRequest: ModelRequest;
}

/**
 * Runs a loop for one iteration, then `codeloops resume` for the second: the resumed
 * loop finishes, is linked to the stopped one, numbers on from it, and its actor
 * carries on the agent session the first actor had.
 */
async function stopThenResume(setup: RealAgentSetup, runArgs: readonly string[]): Promise<ResumedLoop> {
  const { repo, env, home } = setup;
  const api = setup.apis[0]!;
  const first = await runCli([...runArgs, '--json-output', '-n', '1'], { cwd: repo, env });
  assert.equal(first.code, 1, `stderr:\n${first.stderr}`);
  const stopped = runSummarySchema.parse(JSON.parse(first.stdout));
  assert.equal(stopped.status, 'max_iterations_reached');
  const stoppedId = stopped.session_id;
  const actorSession = agentRuns(home, stoppedId).find((run) => run.role === 'actor')?.agent_session_id;
  assert.ok(actorSession, 'the actor’s agent session is recorded');
  const requestsBefore = api.requests.length;

  const resumed = await runCli(['resume', stoppedId, '--json-output', '-n', '2'], { cwd: repo, env });
  assert.equal(resumed.code, 0, `stderr:\n${resumed.stderr}`);
  const outcome = runSummarySchema.parse(JSON.parse(resumed.stdout));
  assert.equal(outcome.status, 'success');
  assert.equal(outcome.iterations, 2);
  const { lines } = assertValidSessionFile(outcome.session_file);
  assert.equal(lines[0]!.resumed_from, stoppedId);
  assert.deepEqual(
    lines.filter((line) => line.type === 'iteration').map((line) => line.iteration_number),
    [2],
  );
  const actorRun = agentRuns(home, outcome.session_id).find((run) => run.role === 'actor');
  assert.ok(actorRun?.succeeded, actorRun?.failure_reason ?? 'no actor run');
  assert.equal(actorRun.agent_session_id, actorSession, 'the actor’s own agent session, carried on');

  const actorRequest = api.requests.slice(requestsBefore).find(isActorTurn);
  assert.ok(actorRequest, 'the resumed actor reached the model');
  return { setup, stoppedId, actorSession, actorRequest };
}
