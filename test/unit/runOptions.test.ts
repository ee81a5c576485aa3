import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { runArguments } from '../../src/cli/mcp/detachedRun.js';
import { TOOLS } from '../../src/cli/mcp/mcpTools.js';
import { TOOL_INPUT_SCHEMAS } from '../../src/extension/chat/loopTools.js';
import { overrideArgs } from '../../src/extension/runner/loopProcess.js';
import {
  MODEL_RUN_OPTION_KEYS,
  QUEUED_RUN_OPTION_KEYS,
  RUN_OPTION_KEYS,
  RUN_OPTIONS,
  modelArgumentName,
  runOptionArgs,
  runOptionsOfModel,
  taskFlagsSchema,
  type RunOptionKey,
  type RunOptionSpec,
  type RunOptionValues,
} from '../../src/sessionFormat/runOptions.js';
import * as z from '../../src/sessionFormat/zod.js';
import { repoRoot } from '../support/testEnvironment.js';

/** A value other than the default for each option, one that starts with "-" where a text can: it must stay a value. */
function sampleValue(key: RunOptionKey): unknown {
  const spec: RunOptionSpec = RUN_OPTIONS[key];
  switch (spec.value.kind) {
    case 'agent':
      return 'codex';
    case 'text':
      return '-model-x';
    case 'number':
      return 2;
    case 'commands':
      return ['npm test', '-x weird'];
    case 'switch':
      return true;
    case 'negation':
      return false;
  }
}

const SAMPLES = Object.fromEntries(RUN_OPTION_KEYS.map((key) => [key, sampleValue(key)])) as RunOptionValues;

/** The options a CLI command parses from these arguments, its action replaced so that nothing runs. */
async function parsedOptions(commandPath: string[], args: string[]): Promise<Record<string, unknown>> {
  const program = buildProgram(() => {});
  let command: Command = program;
  for (const name of commandPath) command = command.commands.find((sub) => sub.name() === name)!;
  let parsed: Record<string, unknown> | undefined;
  command.action(() => {
    parsed = command.opts();
  });
  await program.parseAsync([...commandPath, ...args], { from: 'user' });
  return parsed!;
}

/** The options a command's parse gives that a run option declares, commander's `true` for a `--no-…` flag not given left out. */
function declaredOf(options: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(options).filter(
      ([key, value]) => key in RUN_OPTIONS && value !== undefined && !(RUN_OPTIONS[key as RunOptionKey].value.kind === 'negation' && value === true),
    ),
  );
}

describe('run options, declared once (sessionFormat/runOptions.ts)', () => {
  it("each option's key is commander's name for its flag: the CLI parses what the runner's arguments say back into the same values", async () => {
    // What the editor passes (overrideArgs) and the MCP server's detached runner (runArguments) are the declaration's arguments.
    assert.deepEqual(overrideArgs(SAMPLES), runOptionArgs(SAMPLES));
    const detached = runArguments({ prompt: 'x', workingDir: '/repo', options: SAMPLES }, '/tmp/prompt.md');
    assert.deepEqual(detached.slice(-runOptionArgs(SAMPLES).length), runOptionArgs(SAMPLES));
    assert.deepEqual(declaredOf(await parsedOptions(['run'], ['-p', 'x', ...runOptionArgs(SAMPLES)])), SAMPLES);
    assert.deepEqual(declaredOf(await parsedOptions(['resume'], [...runOptionArgs(SAMPLES), '--', 'latest'])), SAMPLES);
    // A queued task takes every option but those that need someone at the run.
    const queued = Object.fromEntries(QUEUED_RUN_OPTION_KEYS.map((key) => [key, SAMPLES[key]]));
    assert.deepEqual(declaredOf(await parsedOptions(['queue', 'add'], ['-p', 'x', ...runOptionArgs(queued)])), queued);
    assert.ok(!QUEUED_RUN_OPTION_KEYS.includes('review'));
  });

  it('the CLI refuses a value its schema refuses, with the words the declaration gives', async () => {
    const refused = async (args: string[]) =>
      parsedOptions(['run'], ['-p', 'x', ...args]).then(
        () => assert.fail(`${args.join(' ')} was taken`),
        (error: Error) => error.message,
      );
    const stderr = process.stderr.write;
    process.stderr.write = () => true;
    try {
      assert.match(await refused(['--max-iterations=1000001']), /expected a whole number from 0 \(no limit\) to 1,000,000/);
      assert.match(await refused(['--max-iterations=1e3']), /expected a whole number/);
      assert.match(await refused(['--max-tokens=01']), /expected a positive whole number/);
      assert.match(await refused(['--max-cost=0']), /expected a positive number/);
      assert.match(await refused(['--actor-agent=nobody']), /Allowed choices are claude/);
    } finally {
      process.stderr.write = stderr;
    }
  });

  it("a queued task's flags are the queued options' schemas: what the CLI parsed, the queue's file holds", () => {
    assert.deepEqual(Object.keys(taskFlagsSchema.shape), QUEUED_RUN_OPTION_KEYS);
    const queued = Object.fromEntries(QUEUED_RUN_OPTION_KEYS.map((key) => [key, SAMPLES[key]]));
    assert.deepEqual(taskFlagsSchema.parse(queued), queued);
    assert.equal(taskFlagsSchema.safeParse({ actorAgent: 'nobody' }).success, false);
  });

  it("the tools' argument names: the MCP server's a published contract in snake_case, the language model tool's the same words in camelCase", () => {
    const snake = MODEL_RUN_OPTION_KEYS.map((key) => modelArgumentName(key, 'snake'));
    assert.deepEqual(snake, ['actor_agent', 'critic_agent', 'actor_model', 'critic_model', 'max_iterations', 'checks']);
    assert.deepEqual(
      MODEL_RUN_OPTION_KEYS.map((key) => modelArgumentName(key, 'camel')),
      ['actorAgent', 'criticAgent', 'actorModel', 'criticModel', 'maxIterations', 'checks'],
    );
    const runLoop = TOOLS.find((tool) => tool.name === 'run_loop')!;
    assert.deepEqual(Object.keys(runLoop.arguments.shape), ['prompt', 'working_dir', ...snake]);
    // Back to values by key, whichever naming: `checks` is the key `check` (`--check`).
    const given = { actor_agent: 'codex', max_iterations: 3, checks: ['npm test'] };
    assert.deepEqual(runOptionsOfModel(given, 'snake'), { actorAgent: 'codex', maxIterations: 3, check: ['npm test'] });
    assert.deepEqual(runOptionsOfModel({ actorAgent: 'codex', maxIterations: 3, checks: ['npm test'] }, 'camel'), runOptionsOfModel(given, 'snake'));
    // A model gets no more than a person: the tools check what the declaration's schema checks, and a little more.
    assert.equal(runLoop.arguments.safeParse({ prompt: 'x', working_dir: '/r', max_iterations: 1_000_001 }).success, false);
    assert.equal(runLoop.arguments.safeParse({ prompt: 'x', working_dir: '/r', checks: Array(21).fill('true') }).success, false);
  });

  it("package.json's static input schemas of the language model tools are the ones the tools check (a drift fails here)", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(repoRoot(), 'package.json'), 'utf8')) as {
      contributes: { languageModelTools: { name: keyof typeof TOOL_INPUT_SCHEMAS; inputSchema: object }[] };
    };
    const tools = manifest.contributes.languageModelTools;
    assert.deepEqual(tools.map((tool) => tool.name).sort(), Object.keys(TOOL_INPUT_SCHEMAS).sort());
    for (const tool of tools) {
      const { $schema: _schema, ...declared } = z.toJSONSchema(TOOL_INPUT_SCHEMAS[tool.name], { target: 'draft-7', io: 'input' });
      // To fix a drift, paste this (the declaration's) into package.json.
      assert.deepEqual(
        tool.inputSchema,
        declared,
        `${tool.name}'s inputSchema in package.json differs from its declaration:\n${JSON.stringify(declared, null, 2)}`,
      );
    }
  });
});
