import fs from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { AGENT_KINDS } from '../agents/agentKinds.js';
import { CHECK_TIMINGS } from '../checks/runCheck.js';
import { isWithinFolder } from '../files/folderPaths.js';
import { NotARegularFileError, readRegularFileSync, realFolderOf } from '../files/regularFile.js';
import { CodeloopsError, type FailureDetails } from '../sessionFormat/failures.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';
import { REVIEW_MODES } from '../sessionFormat/reviewRecords.js';
import { TEST_RUNNERS } from '../sessionFormat/testResults.js';
import { NOTIFY_EVENTS, NOTIFY_INCLUDES, NOTIFY_PLACEHOLDERS, unknownPlaceholders } from '../sessionFormat/notifications.js';
import * as z from '../sessionFormat/zod.js';

/**
 * The two TOML files, validated strictly: a misspelt key or an unknown agent is an
 * error that names the file and the key, never silently ignored.
 *
 * Global (`$XDG_CONFIG_HOME/codeloops/config.toml`), the original's layout plus more:
 *   [defaults] agent, model, max_iterations, timeout_secs
 *   [defaults.actor] / [defaults.critic]  agent, model, timeout_secs, args, env, command
 *   [agents.<name>] path, args, env, command
 *   [notify] command, webhook, webhook_headers, on, include, timeout_secs (global only)
 * Project (`codeloops.toml` in the working directory): the same without `defaults`:
 *   agent, model, max_iterations, timeout_secs, [actor], [critic], [agents.<name>]
 */

const agentName = z.enum(AGENT_KINDS, {
  error: (issue) => `${JSON.stringify(issue.input)} is not a known agent (expected one of: ${AGENT_KINDS.join(', ')})`,
});
/** Text that becomes a program's argument or environment: a NUL could reach neither (and would fail the loop half-way). */
const argumentText = z.string().check(z.refine((value) => !value.includes('\0'), 'must not contain a NUL character'));
const nonEmpty = argumentText.check(z.minLength(1, 'must not be empty'));
/** setTimeout's limit (about 24.8 days): anything longer would fire at once. */
export const MAX_TIMEOUT_SECS = 2_147_483;
const positiveSecs = z
  .number()
  .check(z.positive('must be a positive number of seconds'), z.maximum(MAX_TIMEOUT_SECS, `must be at most ${MAX_TIMEOUT_SECS} seconds (about 24 days)`));
const stringList = z.array(argumentText);
const envTable = z.record(argumentText, argumentText);
/** A program and its arguments, as an array: never a shell string. */
const commandLine = z.array(nonEmpty).check(z.minLength(1, 'needs at least the program name'));

export const roleTableSchema = z.strictObject({
  agent: z.optional(agentName),
  model: z.optional(nonEmpty),
  timeout_secs: z.optional(positiveSecs),
  args: z.optional(stringList),
  env: z.optional(envTable),
  command: z.optional(commandLine),
});

export const agentTableSchema = z.strictObject({
  path: z.optional(nonEmpty),
  args: z.optional(stringList),
  env: z.optional(envTable),
  command: z.optional(commandLine),
});

const agentsTable = z.partialRecord(agentName, agentTableSchema);

const maxIterations = z.int().check(z.nonnegative('must be 0 (no limit) or more'), z.maximum(1_000_000, 'must be at most 1,000,000'));

/** `[[checks]]`: one of the project's own commands that says whether the work is right. */
export const checkTableSchema = z.strictObject({
  name: nonEmpty,
  /** A shell command, run as a task runner would. */
  run: nonEmpty,
  timeout_secs: z.optional(positiveSecs),
  /** Default true; false: shown to the critic, never blocking. */
  required: z.optional(z.boolean()),
  /** `each` (every iteration) or `done` (only when the critic says DONE and the `each` checks let it); default `each`, `done` for a hidden check. */
  when: z.optional(z.enum(CHECK_TIMINGS)),
  /** An acceptance check: the agents learn only its name and that it failed, never its command or output. */
  hidden: z.optional(z.boolean()),
  /** Run in a clean worktree of the iteration's snapshot, not in the tree the actor left. */
  isolated: z.optional(z.boolean()),
  /** The test runner it runs when its command does not show it (`make test`), or `none`: counted by its exit code alone. */
  runner: z.optional(z.enum([...TEST_RUNNERS, 'none'])),
});
export type CheckTable = z.infer<typeof checkTableSchema>;

const positiveAmount = (what: string) => z.number().check(z.positive(`must be a positive ${what}`));
const positiveCount = z.int().check(z.positive('must be a positive whole number'));

/** `[prices."<model>"]`: dollars per million tokens, for agents that report tokens but no cost. */
const priceTableSchema = z.strictObject({
  input: z.number().check(z.nonnegative()),
  output: z.number().check(z.nonnegative()),
  cache_read: z.optional(z.number().check(z.nonnegative())),
  cache_write: z.optional(z.number().check(z.nonnegative())),
});

/** `[stall]`: iterations in a row without progress before the loop is stopped (or nudged first). */
const stallTableSchema = z.strictObject({
  unchanged_iterations: z.optional(z.int().check(z.nonnegative('must be 0 (off) or more'))),
  action: z.optional(z.enum(['stop', 'nudge'])),
});

/** `[limits]`: an agent's usage limit, a rate limit or an API down is waited out, up to `max_wait_secs` in all. */
const limitsTableSchema = z.strictObject({
  wait: z.optional(z.boolean()),
  max_wait_secs: z.optional(z.int().check(z.nonnegative('must be 0 (never wait) or more'))),
  /** Whether the time waited counts against `max_duration_secs`. */
  count_wait: z.optional(z.boolean()),
});
export type LimitsTable = z.infer<typeof limitsTableSchema>;

/** A path inside the repository, from its top: never absolute, never through `..`. */
const repositoryPath = z
  .string()
  .check(
    z.refine(
      (value) => value.trim() !== '' && !path.isAbsolute(value) && !/^[A-Za-z]:/.test(value) && !value.split(/[\\/]/).includes('..'),
      'must be a path inside the repository, from its top (no leading "/", no "..")',
    ),
  );

/** `[worktree]`: how each candidate's worktree is readied (`codeloops run --candidates`). */
export const worktreeTableSchema = z.strictObject({
  /** Files or folders copied from the user's tree into each worktree when present (`.env`, `.env.local`). */
  copy: z.optional(z.array(repositoryPath)),
  /** A shell command run once in each worktree before its first iteration (`npm ci`); a failure fails that candidate only. */
  setup: z.optional(nonEmpty),
  setup_timeout_secs: z.optional(positiveSecs),
});
export type WorktreeTable = z.infer<typeof worktreeTableSchema>;

/** `[verify]`: what the actor may not weaken to pass the gate. */
export const verifyTableSchema = z.strictObject({
  /** gitignore-style patterns from the repository's top, added to the default protected files. */
  protected: z.optional(z.array(nonEmpty)),
  /** A task about the tests: deleting, removing or skipping tests does not refuse DONE. */
  allow_test_changes: z.optional(z.boolean()),
  /** Refuse a DONE that nothing verified: no required check passed and the critic ran no command that succeeded. */
  require_evidence: z.optional(z.boolean()),
});
export type VerifyTable = z.infer<typeof verifyTableSchema>;

/** What a project file may set: the loop's agents, models, limits, roles, checks and guards. */
export const projectConfigSchema = z.strictObject({
  agent: z.optional(agentName),
  model: z.optional(nonEmpty),
  max_iterations: z.optional(maxIterations),
  timeout_secs: z.optional(positiveSecs),
  max_cost_usd: z.optional(positiveAmount('number of dollars')),
  max_tokens: z.optional(positiveCount),
  max_duration_secs: z.optional(positiveAmount('number of seconds')),
  stall: z.optional(stallTableSchema),
  limits: z.optional(limitsTableSchema),
  /** `"pause"`: after each iteration that goes on, wait for the user's review. */
  review: z.optional(z.enum(REVIEW_MODES)),
  checks: z.optional(z.array(checkTableSchema)),
  prices: z.optional(z.record(z.string(), priceTableSchema)),
  actor: z.optional(roleTableSchema),
  critic: z.optional(roleTableSchema),
  agents: z.optional(agentsTable),
  worktree: z.optional(worktreeTableSchema),
  verify: z.optional(verifyTableSchema),
});

/** The URL, or undefined when it is none. */
function parsedUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

/**
 * A webhook's address: http(s) only (a `file:` or `data:` URL is no webhook), and no
 * user name or password in it: fetch refuses them, and an address is shown (its origin
 * only) where a notification fails. A secret goes in `webhook_headers`.
 */
const webhookUrl = z.string().check(
  z.refine((value) => ['http:', 'https:'].includes(parsedUrl(value)?.protocol ?? ''), 'must be an http:// or https:// URL'),
  z.refine(
    (value) => !parsedUrl(value)?.username && !parsedUrl(value)?.password,
    'must not hold a user name or password (user:password@): give them as a header in webhook_headers instead, such as Authorization = "Basic <base64 of user:password>"',
  ),
);

/** An HTTP header's name: a token, as HTTP defines it. */
const headerName = z.string().check(z.regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'is not an HTTP header name'));
/** Headers the request sets itself: a webhook gets JSON, whatever the table says. */
const OWN_HEADERS = ['content-type', 'content-length', 'host', 'transfer-encoding', 'connection'];

/** `webhook_headers`: sent with every POST (a token, a Basic login), never shown. Values one line of Latin-1, as HTTP carries them. */
const webhookHeaders = z
  .record(headerName, z.string().check(z.regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must be one line of printable text')))
  .check(
    z.refine(
      (headers) => Object.keys(headers).every((name) => !OWN_HEADERS.includes(name.toLowerCase())),
      `may not set ${OWN_HEADERS.join(', ')}: the request sets them itself`,
    ),
  );

/** A notifying program's arguments: placeholders only of those that exist. */
const notifyCommand = z.array(nonEmpty).check(
  z.minLength(1, 'needs at least the program name'),
  z.refine(
    (args) => args.every((argument) => unknownPlaceholders(argument).length === 0),
    `names an unknown placeholder (expected {${NOTIFY_PLACEHOLDERS.join('}, {')}})`,
  ),
);

/**
 * `[notify]`: word when a loop needs the user, ends, waits for a usage limit, or a
 * queue is done. Global only: a webhook could send a project's work away, and a command
 * runs a program, so a cloned repository's file may not set it.
 */
export const notifyTableSchema = z.strictObject({
  /** A program and its arguments, run without a shell, placeholders filled. */
  command: z.optional(notifyCommand),
  /** Where a JSON POST goes. */
  webhook: z.optional(webhookUrl),
  /** Headers sent with it: where a webhook wants a token or a login. */
  webhook_headers: z.optional(webhookHeaders),
  on: z.optional(z.array(z.enum(NOTIFY_EVENTS))),
  include: z.optional(z.array(z.enum(NOTIFY_INCLUDES))),
  /** How long a command or a webhook may take before it is given up (and logged). */
  timeout_secs: z.optional(positiveSecs),
});
export type NotifyTable = z.infer<typeof notifyTableSchema>;

/** `[queue]`: how `codeloops queue` commits a task that succeeded. */
export const queueTableSchema = z.strictObject({
  /** `"Name <email>"`: the author and committer of each task's commit, over the user's git identity. */
  author: z.optional(z.string().check(z.regex(/^[^<>\n]+ <[^<>\s]+>$/, 'must read "Name <email>"'))),
});

/** The global file: the project's settings as `[defaults]`, the agents' tables, the prices, `[notify]` and `[queue]`. */
export const globalConfigSchema = z.strictObject({
  defaults: z.optional(z.omit(projectConfigSchema, { agents: true, prices: true })),
  agents: z.optional(agentsTable),
  prices: z.optional(z.record(z.string(), priceTableSchema)),
  notify: z.optional(notifyTableSchema),
  queue: z.optional(queueTableSchema),
});

export type RoleTable = z.infer<typeof roleTableSchema>;
export type AgentTable = z.infer<typeof agentTableSchema>;
export type GlobalConfigFile = z.infer<typeof globalConfigSchema>;
export type ProjectConfigFile = z.infer<typeof projectConfigSchema>;

export class ConfigError extends CodeloopsError {
  override name = 'ConfigError';
  constructor(
    readonly filePath: string,
    detail: string,
    /** More facts for scripts: the key, the argument. */
    details: FailureDetails = {},
  ) {
    super('config_invalid', `${filePath}: ${detail}`, { file: filePath, ...details });
  }
}

/** A program named with a path is relative to the folder of the file that names it; a bare name is looked up on PATH. */
export function locateProgram(program: string, baseDir: string): string {
  return program.includes('/') || program.includes('\\') ? path.resolve(baseDir, program) : program;
}

export function configHome(env: Environment = process.env): string {
  const configured = env.XDG_CONFIG_HOME;
  return configured && path.isAbsolute(configured) ? configured : path.join(env.HOME || homedir(), '.config');
}

export function globalConfigPath(env: Environment = process.env): string {
  return path.join(configHome(env), 'codeloops', 'config.toml');
}

export const PROJECT_CONFIG_FILE = 'codeloops.toml';

/**
 * The project's `codeloops.toml`: in the working directory, or the nearest folder
 * above it up to the repository's top (a loop started in a subfolder still finds
 * the project's file). Undefined when there is none. Both are read through their
 * links, as git names the top: a working directory reached through a symbolic link
 * climbs the folders it really is in.
 */
export function findProjectConfig(workingDir: string, repositoryRoot: string = workingDir): string | undefined {
  const top = realFolderOf(repositoryRoot);
  for (let folder = realFolderOf(workingDir); ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, PROJECT_CONFIG_FILE);
    if (fs.existsSync(candidate)) return candidate;
    if (folder === top || path.dirname(folder) === folder || !isWithinFolder(top, folder)) return undefined;
  }
}

/**
 * Settings that decide which programs run on this machine and with which secrets:
 * allowed in the global config and the editor's settings, not in a project file a
 * cloned repository could bring. (`command` stays: a project's own agent script is
 * like its build script.)
 */
export function assertNoMachineSettings(filePath: string, file: ProjectConfigFile): void {
  const offending: string[] = [];
  for (const [agent, table] of Object.entries(file.agents ?? {})) {
    if (table?.path !== undefined) offending.push(`[agents.${agent}] path`);
    if (table?.env !== undefined) offending.push(`[agents.${agent}] env`);
  }
  for (const role of ['actor', 'critic'] as const) if (file[role]?.env !== undefined) offending.push(`[${role}] env`);
  if (offending.length > 0) {
    throw new ConfigError(
      filePath,
      `${offending.join(', ')} can only be set in the global config or the editor's settings: a project must not choose which programs run on your machine, or with which environment. Move ${offending.length === 1 ? 'it' : 'them'} to ~/.config/codeloops/config.toml.`,
    );
  }
}

/** Reads and validates one config file; a missing file is an empty config. */
export function readConfigFile<T>(filePath: string, schema: z.ZodMiniType<T>): T | undefined {
  const text = readConfigText(filePath);
  return text === undefined ? undefined : parseConfigText(filePath, text, schema);
}

/** A config file's text, or undefined when there is none. */
export function readConfigText(filePath: string): string | undefined {
  try {
    // Never blocks: a FIFO named codeloops.toml must not hang a dry run.
    return readRegularFileSync(filePath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof NotARegularFileError) throw new ConfigError(filePath, `${error.reason}; a config file must be a regular file.`);
    throw new ConfigError(filePath, `cannot be read: ${(error as Error).message}`);
  }
}

export function parseConfigText<T>(filePath: string, text: string, schema: z.ZodMiniType<T>): T {
  let data: unknown;
  try {
    data = parseToml(text);
  } catch (error) {
    if (error instanceof TomlError) {
      throw new ConfigError(filePath, `invalid TOML at line ${error.line}, column ${error.column}: ${firstLine(error.message)}`);
    }
    throw new ConfigError(filePath, `invalid TOML: ${(error as Error).message}`);
  }
  const result = schema.safeParse(data);
  if (!result.success) throw new ConfigError(filePath, describeConfigIssues(result.error.issues));
  return result.data;
}

function describeConfigIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const key = issue.path.map(String).join('.');
      if (issue.code === 'unrecognized_keys' && key === 'agents') {
        return issue.keys.map((name) => `[agents.${name}]: "${name}" is not a known agent (expected one of: ${AGENT_KINDS.join(', ')})`).join('; ');
      }
      if (issue.code === 'unrecognized_keys') {
        // Known in the global file only: a project file (or a suite's config) that sets it is told where it goes.
        const globalOnly = key === '' && issue.keys.includes('notify');
        const keys = issue.keys.filter((name) => !(globalOnly && name === 'notify')).map((name) => (key ? `${key}.${name}` : name));
        const unknown = keys.length > 0 ? `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `"${k}"`).join(', ')}` : '';
        return globalOnly ? [NOTIFY_IS_GLOBAL, unknown].filter(Boolean).join('; ') : unknown;
      }
      if (issue.code === 'invalid_key') return `${key ? `[${key}] ` : ''}${issue.issues[0]?.message ?? issue.message}`;
      return `${key ? `"${key}"` : 'the file'}: ${issue.message}`;
    })
    .join('; ');
}

const NOTIFY_IS_GLOBAL =
  "[notify] can only be set in the global config (~/.config/codeloops/config.toml): a webhook could send a project's work away, and a command runs a program on your machine, so a repository's file may not choose them.";

function firstLine(text: string): string {
  return text.split('\n')[0] ?? text;
}
