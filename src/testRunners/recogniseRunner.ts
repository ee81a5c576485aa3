import fs from 'node:fs';
import path from 'node:path';
import type { TestRunner } from '../sessionFormat/testResults.js';
import { leadingAssignments, stepsOf, type Step } from '../text/shellSteps.js';

/**
 * Which test runner a check's command runs, read from the command as a shell would
 * split it, through a package script when it names one (`npm test` → `mocha`). Only
 * the command's last step counts, for it is the one whose arguments the runner takes
 * and whose exit code the check reports: `npm ci && npx jest` runs Jest; `jest && eslint
 * .` is a lint by its exit code. A runner named in the config is taken as said.
 */
export interface RecognisedRunner {
  runner: TestRunner;
  /**
   * How the runner's report is asked for: `variables`, through its own environment
   * variable (pytest, go test, node --test, wherever in the command they run);
   * `arguments`, appended to the command, which ends with the runner's own arguments
   * or a package script that is the runner with its arguments; `output`, read from what
   * it prints (cargo test); `none`, no way: the runner is known, but its arguments
   * cannot be reached (a script running a script running it).
   */
  via: 'variables' | 'arguments' | 'output' | 'none';
  /** The package script the command runs (`npm test`): arguments go after `--` for npm. */
  script: { manager: string } | null;
}

/** Programs that run the command after them: `npx jest`, `timeout 60 pytest`, `poetry run pytest`. */
const WRAPPERS: Readonly<Record<string, number>> = { npx: 0, bunx: 0, env: 0, nice: 0, exec: 0, command: 0, time: 0, timeout: 1, xvfb_run: 0 };
const RUNS: Readonly<Record<string, readonly string[]>> = {
  poetry: ['run'],
  uv: ['run'],
  pdm: ['run'],
  pipenv: ['run'],
  hatch: ['run'],
  pnpm: ['exec'],
  yarn: ['exec'],
};
const SCRIPT_RUNNERS = new Set(['npm', 'yarn', 'pnpm', 'bun']);
/** How deep package scripts are followed (`npm test` → `npm run unit` → `mocha`). */
const SCRIPT_DEPTH = 4;

export function recogniseRunner(command: string, folder: string, named?: TestRunner): RecognisedRunner | null {
  const last = stepsOf(command).at(-1);
  const found = last ? recogniseStep(last, folder, SCRIPT_DEPTH) : null;
  if (!named || found?.runner === named) return found;
  // Named in the config but not what the command's last step shows (`make test`): its arguments are out of reach.
  return { runner: named, via: viaOf(named, 0), script: null };
}

function viaOf(runner: TestRunner, scriptHops: number): RecognisedRunner['via'] {
  if (runner === 'cargo') return 'output';
  if (VIA_VARIABLES.has(runner)) return 'variables';
  return scriptHops <= 1 ? 'arguments' : 'none';
}

/** The runners whose report an environment variable asks for, wherever in the command they run. */
const VIA_VARIABLES: ReadonlySet<TestRunner> = new Set(['pytest', 'go', 'node']);

function recogniseStep(words: Step, folder: string, depth: number): RecognisedRunner | null {
  const program = unwrap(words);
  if (program.length === 0) return null;
  const name = path.basename(program[0]!);
  const runner = runnerOf(name, program.slice(1));
  if (runner) return { runner, via: viaOf(runner, SCRIPT_DEPTH - depth), script: null };
  if (!SCRIPT_RUNNERS.has(name) || depth === 0) return null;
  const script = scriptNamed(program.slice(1), folder);
  const last = script === null ? undefined : stepsOf(script).at(-1);
  const inner = last ? recogniseStep(last, folder, depth - 1) : null;
  return inner && { ...inner, script: { manager: name } };
}

function runnerOf(name: string, rest: readonly string[]): TestRunner | null {
  if (name === 'pytest' || name === 'py.test') return 'pytest';
  if (/^python[\d.]*$/.test(name)) return moduleAfterM(rest) === 'pytest' ? 'pytest' : null;
  if (name === 'mocha' || name === '_mocha') return 'mocha';
  if (name === 'jest') return 'jest';
  if (name === 'vitest') return 'vitest';
  if (name === 'node' || /^node\d+$/.test(name)) return rest.includes('--test') ? 'node' : null;
  if (name === 'go') return rest[0] === 'test' ? 'go' : null;
  if (name === 'cargo') return rest[0] === 'test' ? 'cargo' : null;
  return null;
}

function moduleAfterM(rest: readonly string[]): string | null {
  const at = rest.findIndex((word) => word === '-m');
  return at >= 0 ? (rest[at + 1] ?? null) : null;
}

/** The words after the wrappers: `npx --yes jest` → `jest`, `timeout 60 pytest` → `pytest`. */
function unwrap(words: Step): Step {
  let rest = words;
  for (let guard = 0; guard < 8 && rest.length > 0; guard++) {
    const name = path.basename(rest[0]!).replace(/-/g, '_');
    const skip = WRAPPERS[name];
    const runs = RUNS[name];
    if (skip !== undefined) {
      const after = rest.slice(1);
      const command = after.slice(firstWordAt(after, skip));
      rest = command.slice(leadingAssignments(command));
    } else if (runs && runs.includes(rest[1] ?? '')) {
      rest = rest.slice(2);
    } else break;
  }
  return rest;
}

/** Where the command starts after a wrapper's options and `skip` positional words of its own (`timeout 60`). */
function firstWordAt(words: readonly string[], skip: number): number {
  let index = 0;
  while (index < words.length && words[index]!.startsWith('-')) index += 1;
  return index + skip;
}

/** The package script a `npm test`, `npm run unit`, `yarn test`, `pnpm run unit` runs, from package.json in the folder. */
function scriptNamed(rest: readonly string[], folder: string): string | null {
  const words = rest.filter((word) => !word.startsWith('-'));
  const [verb, argument] = words;
  const name = verb === 'test' || verb === 't' || verb === 'tst' ? 'test' : verb === 'run' || verb === 'run-script' ? argument : verb;
  if (!name) return null;
  const scripts = packageScripts(folder);
  return typeof scripts?.[name] === 'string' ? scripts[name] : null;
}

function packageScripts(folder: string): Record<string, unknown> | null {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(folder, 'package.json'), 'utf8')) as { scripts?: Record<string, unknown> };
    return manifest.scripts ?? null;
  } catch {
    return null;
  }
}
