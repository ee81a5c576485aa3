import fs from 'node:fs';
import path from 'node:path';
import { AGENT_KINDS } from '../agents/agentKinds.js';
import { isWithinFolder } from '../files/folderPaths.js';
import { NotARegularFileError, openRegularFileSync } from '../files/regularFile.js';
import * as z from '../sessionFormat/zod.js';
import { ConfigError, parseConfigText, projectConfigSchema, readConfigText } from './configFiles.js';
import { layerFromProjectFile, type ConfigLayer } from './runSettings.js';

/**
 * An eval's suite (`codeloops eval SUITE.toml`): the tasks, each with the hidden
 * command that says whether it is really done, and the configs to compare on them,
 * each one's keys those of a project's codeloops.toml (guards, `[[checks]]`, budgets,
 * `[stall]`, `[verify]`) with the agents and models named flat (`actor`,
 * `critic_model`). Read strictly, as the config files are: a misspelt key is an
 * error that names the file and the key.
 *
 * Paths: `prompt_file` is read from the suite's folder and may not lead out of it
 * (a suite travels as a folder, its prompts with it; a prompt is sent to the agents'
 * model APIs, and must never turn out to be some other file of the user's).
 * `repository` may be any repository, relative to the suite's folder or absolute:
 * comparing setups on another project than the one the suite lives in is what it is
 * for, and eval only ever makes worktrees from it (its files, index, HEAD and
 * branches are not touched). The suite runs its own commands (setup, acceptance,
 * checks) because the user named it on the command line, as `--check` does.
 */

const nonEmpty = z.string().check(z.minLength(1, 'must not be empty'));
const agentName = z.enum(AGENT_KINDS, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a known agent (expected one of: ${AGENT_KINDS.join(', ')})`,
});

/** More repetitions than this is a typo: each is a loop per task and config. */
export const MAX_REPETITIONS = 100;

/**
 * `[[configs]]`: a project file's settings without the agent tables (programs come
 * from the user's own config), `review` (nobody is there to review) and `[worktree]`
 * (readying a worktree is the task's `setup`), with the agents and models flat.
 */
export const suiteConfigSchema = z.extend(
  z.omit(projectConfigSchema, { agent: true, model: true, actor: true, critic: true, agents: true, review: true, worktree: true }),
  {
    name: nonEmpty,
    actor: z.optional(agentName),
    critic: z.optional(agentName),
    actor_model: z.optional(nonEmpty),
    critic_model: z.optional(nonEmpty),
  },
);
export type SuiteConfigTable = z.infer<typeof suiteConfigSchema>;

const suiteTaskSchema = z.strictObject({
  name: nonEmpty,
  prompt: z.optional(nonEmpty),
  prompt_file: z.optional(nonEmpty),
  repository: z.optional(nonEmpty),
  ref: z.optional(nonEmpty),
  setup: z.optional(nonEmpty),
  // Required, but checked after the schema: the error then names the task.
  acceptance: z.optional(nonEmpty),
});

const suiteFileSchema = z.strictObject({
  name: nonEmpty,
  repetitions: z.optional(z.int().check(z.positive('must be a positive whole number'), z.maximum(MAX_REPETITIONS, `must be at most ${MAX_REPETITIONS}`))),
  tasks: z.array(suiteTaskSchema).check(z.minLength(1, 'needs at least one [[tasks]]')),
  configs: z.array(suiteConfigSchema).check(z.minLength(1, 'needs at least one [[configs]]')),
});

/** A task as the suite gives it, its prompt read and its repository found (not yet a commit: see `EvalTask`). */
export interface SuiteTask {
  name: string;
  prompt: string;
  /** Absolute: a folder in the repository (its top is found when the eval starts). */
  repository: string;
  ref: string;
  setup: string | null;
  acceptance: string;
}

export interface Suite {
  name: string;
  /** Absolute. */
  file: string;
  repetitions: number;
  tasks: SuiteTask[];
  configs: SuiteConfigTable[];
}

/** Reads and checks a suite; `workingDir` is the repository a task without `repository` runs on. */
export function readSuite(file: string, workingDir: string): Suite {
  const suiteFile = path.resolve(file);
  const text = readConfigText(suiteFile);
  if (text === undefined) throw new ConfigError(suiteFile, 'does not exist.');
  const parsed = parseConfigText(suiteFile, text, suiteFileSchema);
  const folder = path.dirname(suiteFile);
  assertUniqueNames(suiteFile, 'tasks', parsed.tasks);
  assertUniqueNames(suiteFile, 'configs', parsed.configs);
  const tasks = parsed.tasks.map((task): SuiteTask => {
    const where = `[[tasks]] "${task.name}"`;
    if (task.acceptance === undefined) {
      throw new ConfigError(suiteFile, `${where} has no acceptance: every task needs the command that says whether it is really done.`, {
        key: 'acceptance',
        task: task.name,
      });
    }
    if ((task.prompt === undefined) === (task.prompt_file === undefined)) {
      throw new ConfigError(suiteFile, `${where} needs exactly one of prompt and prompt_file.`, { key: 'prompt', task: task.name });
    }
    return {
      name: task.name,
      prompt: task.prompt ?? readPromptFile(suiteFile, folder, task.prompt_file!, task.name),
      repository: task.repository === undefined ? path.resolve(workingDir) : path.resolve(folder, task.repository),
      ref: task.ref ?? 'HEAD',
      setup: task.setup ?? null,
      acceptance: task.acceptance,
    };
  });
  return { name: parsed.name, file: suiteFile, repetitions: parsed.repetitions ?? 1, tasks, configs: parsed.configs };
}

function assertUniqueNames(suiteFile: string, table: 'tasks' | 'configs', entries: readonly { name: string }[]): void {
  const seen = new Set<string>();
  for (const { name } of entries) {
    if (seen.has(name)) throw new ConfigError(suiteFile, `two [[${table}]] are named "${name}": each needs its own name.`, { key: `${table}.name`, name });
    seen.add(name);
  }
}

function readPromptFile(suiteFile: string, folder: string, promptFile: string, task: string): string {
  const file = path.resolve(folder, promptFile);
  const details = { key: 'prompt_file', task };
  if (!isWithinFolder(folder, file)) {
    throw new ConfigError(suiteFile, `[[tasks]] "${task}": prompt_file "${promptFile}" leads out of the suite's folder ${folder}.`, details);
  }
  let text: string;
  try {
    // Within: a link inside the folder that leads out of it is refused like a path that does.
    const fd = openRegularFileSync(file, { within: folder });
    try {
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    const reason =
      error instanceof NotARegularFileError
        ? error.reason
        : (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'it does not exist'
          : (error as Error).message;
    throw new ConfigError(suiteFile, `[[tasks]] "${task}": prompt_file ${file} cannot be read: ${reason}.`, details);
  }
  if (text.trim() === '') throw new ConfigError(suiteFile, `[[tasks]] "${task}": prompt_file ${file} is empty.`, details);
  return text.replace(/^\uFEFF/, '');
}

/** A recorded config's table, checked again (a resumed eval reads it from its record). */
export function parseSuiteConfig(table: unknown, source: string): SuiteConfigTable {
  const parsed = suiteConfigSchema.safeParse(table);
  if (!parsed.success) throw new ConfigError(source, parsed.error.issues.map((issue) => `"${issue.path.join('.')}": ${issue.message}`).join('; '));
  return parsed.data;
}

/**
 * A config as a layer above the project's file: its agents, models, guards and checks
 * win over the project's, the user's global config gives the agents' programs. Its
 * source is no file path: the suite is outside the worktree, no actor can edit it.
 */
export function layerFromSuiteConfig(table: SuiteConfigTable, suiteName: string): ConfigLayer {
  const { name, actor, critic, actor_model, critic_model, ...project } = table;
  return {
    ...layerFromProjectFile(project, `eval suite "${suiteName}", config "${name}"`),
    actor: { agent: actor, model: actor_model },
    critic: { agent: critic, model: critic_model },
  };
}
