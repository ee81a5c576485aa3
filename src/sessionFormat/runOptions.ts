import { AGENT_KINDS } from './agentNames.js';
import * as z from './zod.js';

/**
 * What a run may be told above every config layer, declared once: each option's key
 * (commander's name for its flag, the key of `FlagOverrides`, of the editor's
 * `RunOverrides` and of a queued task's flags in the queue's file), its flag, its
 * value's schema, its words in `--help`, and, for the options agents may set, its
 * words for a model. Everything else is made from this table: the CLI's flags
 * (`cli/main.ts`), the runner's arguments the editor and the MCP server pass
 * (`runOptionArgs`), the tools' input schemas (`modelRunOptionsShape`: the MCP
 * server's in snake_case, the language model tool's in camelCase; package.json's
 * static copy is checked by a test) and the queue's task flags (`taskFlagsSchema`).
 * Adding an option is adding a row.
 */

/** No text a model gives may hold a NUL: it could reach no program's argument, no file name. */
export const noNul = z.refine<string>((value) => !value.includes('\0'), 'must not contain a NUL character');
/** A value the runner takes as one argument of its own: at most this long (an argument holds 128 KiB, all of them 2 MiB). */
const MAX_ARGUMENT_CHARS = 4_000;
/** How many checks a model may ask for in one run. */
const MAX_MODEL_CHECKS = 20;
/** More iterations than anyone means; also keeps the number exact in JSON. */
const MAX_COUNT = 1_000_000;

/** A text a model gives that becomes one argument of the runner. */
export const oneArgument = (description: string) => z.string().check(z.minLength(1), z.maxLength(MAX_ARGUMENT_CHARS), noNul, z.describe(description));

/**
 * How an option's value is written and held. `schema` holds it (and a queued task's
 * file); `read` takes the text typed after the flag (undefined: refused, `expected`
 * says why); `forModels` is the schema a model's argument is checked against, when
 * stricter than what a person may type. A `switch` takes no value; a `negation` is
 * `--no-<key>`, false when given.
 */
export interface OptionValue<S extends z.ZodMiniType> {
  kind: 'agent' | 'text' | 'number' | 'commands' | 'switch' | 'negation';
  schema: S;
  placeholder?: string;
  read?: (text: string) => z.infer<S> | undefined;
  expected?: string;
  forModels?: z.ZodMiniType;
}

const agent = () => ({ kind: 'agent' as const, schema: z.enum(AGENT_KINDS), placeholder: '<agent>' });

const text = (placeholder: string): OptionValue<z.ZodMiniString> => ({
  kind: 'text',
  schema: z.string(),
  placeholder,
  read: (typed) => typed,
  forModels: z.string().check(z.minLength(1), z.maxLength(MAX_ARGUMENT_CHARS), noNul),
});

/** Decimal digits: never `1e3` nor `0x10`, which `Number` reads too. */
const WHOLE = /^\d+$/;
const DECIMAL = /^\d+(\.\d+)?$/;
const POSITIVE_WHOLE = /^[1-9]\d*$/;

/** A number typed as `digits` say, then checked by its schema. */
function number(placeholder: string, schema: z.ZodMiniNumber, expected: string, digits = WHOLE): OptionValue<z.ZodMiniNumber> {
  return {
    kind: 'number',
    schema,
    placeholder,
    expected,
    read: (typed) => {
      const value = Number(typed);
      return digits.test(typed) && schema.safeParse(value).success ? value : undefined;
    },
  };
}

const commands = (placeholder: string): OptionValue<z.ZodMiniArray<z.ZodMiniString>> => ({
  kind: 'commands',
  schema: z.array(z.string()),
  placeholder,
  read: (typed) => [typed],
  forModels: z.array(oneArgument('A shell command run in the repository; exit code 0 means it passed.')).check(z.maxLength(MAX_MODEL_CHECKS)),
});

const flagOnly = (kind: 'switch' | 'negation'): OptionValue<z.ZodMiniBoolean> => ({ kind, schema: z.boolean() });

/**
 * One run option. `group` says which commands take it: `agents` (every command that
 * runs or plans a run: run, resume, queue add, forecast), `guards` (those that run a
 * loop), `attended` (run and resume only: a queued task runs with nobody to answer).
 * `forModels` offers it to agents' tools, under `name` (default: the key) in camelCase
 * for the language model tool and in snake_case for the MCP server.
 */
export interface RunOptionSpec {
  flag: string;
  short?: string;
  value: OptionValue<z.ZodMiniType>;
  description: string;
  group: 'agents' | 'guards' | 'attended';
  forModels?: { name?: string; description: string };
}

const option = <const O extends RunOptionSpec>(spec: O): O => spec;

/** In the order `--help` lists them. */
export const RUN_OPTIONS = {
  agent: option({ flag: '--agent', short: '-a', value: agent(), description: 'agent for both roles', group: 'agents' }),
  actorAgent: option({
    flag: '--actor-agent',
    value: agent(),
    description: 'agent that does the work',
    group: 'agents',
    forModels: { description: 'The agent CLI of the actor (the agent that does the work). Default: as configured for the project.' },
  }),
  criticAgent: option({
    flag: '--critic-agent',
    value: agent(),
    description: 'agent that reviews it',
    group: 'agents',
    forModels: { description: 'The agent CLI of the critic (the agent that reviews it). Default: as configured for the project.' },
  }),
  model: option({ flag: '--model', short: '-m', value: text('<model>'), description: 'model for both roles', group: 'agents' }),
  actorModel: option({
    flag: '--actor-model',
    value: text('<model>'),
    description: "the actor's model",
    group: 'agents',
    forModels: { description: "The actor's model, as its agent names it (e.g. sonnet, gpt-5). Default: as configured." },
  }),
  criticModel: option({
    flag: '--critic-model',
    value: text('<model>'),
    description: "the critic's model",
    group: 'agents',
    forModels: { description: "The critic's model, as its agent names it (e.g. sonnet, gpt-5). Default: as configured." },
  }),
  maxIterations: option({
    flag: '--max-iterations',
    short: '-n',
    value: number(
      '<n>',
      z.int().check(z.minimum(0), z.maximum(MAX_COUNT)),
      `expected a whole number from 0 (no limit) to ${MAX_COUNT.toLocaleString('en-US')}.`,
    ),
    description: 'stop after n iterations (0: no limit)',
    group: 'guards',
    forModels: { description: 'Stop after this many iterations (0: no limit). Default: as configured (10 unless set).' },
  }),
  maxCost: option({
    flag: '--max-cost',
    value: number('<usd>', z.number().check(z.positive()), 'expected a positive number.', DECIMAL),
    description: 'stop when the agents have cost more than this many dollars, all runs together',
    group: 'guards',
  }),
  maxTokens: option({
    flag: '--max-tokens',
    value: number('<n>', z.int().check(z.minimum(1)), 'expected a positive whole number.', POSITIVE_WHOLE),
    description: 'stop when the agents have used more tokens than this, all runs together',
    group: 'guards',
  }),
  maxDuration: option({
    flag: '--max-duration',
    value: number('<secs>', z.number().check(z.positive()), 'expected a positive number.', DECIMAL),
    description: 'stop when the loop has run this many seconds',
    group: 'guards',
  }),
  check: option({
    flag: '--check',
    value: commands('<command>'),
    description: 'a required check: a shell command that must pass before DONE counts (repeatable)',
    group: 'guards',
    forModels: {
      name: 'checks',
      description: 'Required checks (shell commands such as "npm test") that must pass before DONE counts, in addition to the configured ones.',
    },
  }),
  checks: option({ flag: '--no-checks', value: flagOnly('negation'), description: 'run no checks, not even the configured ones', group: 'guards' }),
  stallAfter: option({
    flag: '--stall-after',
    value: number('<n>', z.int().check(z.minimum(0), z.maximum(MAX_COUNT)), 'expected a whole number (0: off).'),
    description: 'stop after n iterations in a row without progress (0: never)',
    group: 'guards',
  }),
  verify: option({
    flag: '--no-verify',
    value: flagOnly('negation'),
    description: "do not judge the actor's changes to tests, CI and what the checks run (the checks still gate)",
    group: 'guards',
  }),
  requireEvidence: option({
    flag: '--require-evidence',
    value: flagOnly('switch'),
    description: 'refuse a DONE that nothing verified: no required check passed, the critic ran no command that succeeded (config: [verify] require_evidence)',
    group: 'guards',
  }),
  allowTestChanges: option({
    flag: '--allow-test-changes',
    value: flagOnly('switch'),
    description: 'the task is about the tests: removing or skipping some does not refuse DONE (config: [verify] allow_test_changes)',
    group: 'guards',
  }),
  review: option({
    flag: '--review',
    value: flagOnly('switch'),
    description: 'pause after each iteration that goes on, for your review (config: review = "pause")',
    group: 'attended',
  }),
};

type Options = typeof RUN_OPTIONS;
export type RunOptionKey = keyof Options;
export type RunOptionSpecOf<K extends RunOptionKey> = Options[K];
type ValueOf<K extends RunOptionKey> = z.infer<Options[K]['value']['schema']>;

/** Values for some run options, by key: what the CLI's flags parse to, what the editor overrides, what a queued task keeps. */
export type RunOptionValues = { -readonly [K in RunOptionKey]?: ValueOf<K> };

export const RUN_OPTION_KEYS = Object.keys(RUN_OPTIONS) as RunOptionKey[];

/** A queued task keeps every option but those that need someone at the run (`--review`). */
export const QUEUED_RUN_OPTION_KEYS = RUN_OPTION_KEYS.filter((key) => RUN_OPTIONS[key].group !== 'attended');
type QueuedKey = { [K in RunOptionKey]: Options[K]['group'] extends 'attended' ? never : K }[RunOptionKey];

/** The run flags a queued task was added with, as `queues/<key>.json` keeps them (a flag not given is absent). */
export const taskFlagsSchema = z.object(
  Object.fromEntries(QUEUED_RUN_OPTION_KEYS.map((key) => [key, z.optional(RUN_OPTIONS[key].value.schema)])) as {
    [K in QueuedKey]: z.ZodMiniOptional<Options[K]['value']['schema']>;
  },
);

/**
 * The values as the runner's flags, each value one argument (`--flag=value`: a value
 * that starts with `-` stays a value); a repeated option once per value.
 */
export function runOptionArgs(values: RunOptionValues): string[] {
  return RUN_OPTION_KEYS.flatMap((key) => {
    const value: unknown = values[key];
    if (value === undefined) return [];
    const { flag, value: kind } = RUN_OPTIONS[key];
    if (kind.kind === 'negation') return value === false ? [flag] : [];
    if (kind.kind === 'switch') return value === true ? [flag] : [];
    if (Array.isArray(value)) return value.map((item) => `${flag}=${String(item)}`);
    return [`${flag}=${String(value)}`];
  });
}

// ---- For models: the options agents' tools offer, in the two namings of the two hosts.

type ModelKey = { [K in RunOptionKey]: Options[K] extends { forModels: object } ? K : never }[RunOptionKey];
type CamelName<K extends ModelKey> = Options[K]['forModels'] extends { name: infer N extends string } ? N : K;
type SnakeCase<S extends string> = S extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : S;
/** `camel`: the language model tool's names (`actorAgent`); `snake`: the MCP server's (`actor_agent`), a published contract. */
export type Naming = 'camel' | 'snake';
type NameOf<K extends ModelKey, N extends Naming> = N extends 'camel' ? CamelName<K> : SnakeCase<CamelName<K>>;

/** The run options a model may give, as a tool's arguments name them. */
export type ModelRunOptions<N extends Naming> = { [K in ModelKey as NameOf<K, N>]?: ValueOf<K> };
type ModelShape<N extends Naming> = { [K in ModelKey as NameOf<K, N>]: z.ZodMiniOptional<z.ZodMiniType<ValueOf<K>>> };

export const MODEL_RUN_OPTION_KEYS = RUN_OPTION_KEYS.filter((key): key is ModelKey => 'forModels' in RUN_OPTIONS[key]);

/** An option's argument name for models in a naming. */
export function modelArgumentName(key: ModelKey, naming: Naming): string {
  const spec: RunOptionSpec = RUN_OPTIONS[key];
  const camel = spec.forModels?.name ?? key;
  return naming === 'camel' ? camel : camel.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** The zod shape of the run options a tool takes, each optional and described for a model. */
export function modelRunOptionsShape<N extends Naming>(naming: N): ModelShape<N> {
  return Object.fromEntries(
    MODEL_RUN_OPTION_KEYS.map((key) => {
      const spec: RunOptionSpec = RUN_OPTIONS[key];
      const schema = spec.value.forModels ?? spec.value.schema;
      return [modelArgumentName(key, naming), z.optional(schema.check(z.describe(spec.forModels!.description)))];
    }),
  ) as unknown as ModelShape<N>;
}

/** A tool's arguments (checked against `modelRunOptionsShape`) as run option values by key. */
export function runOptionsOfModel(args: Readonly<Record<string, unknown>>, naming: Naming): RunOptionValues {
  const values: Record<string, unknown> = {};
  for (const key of MODEL_RUN_OPTION_KEYS) {
    const value = args[modelArgumentName(key, naming)];
    if (value !== undefined) values[key] = value;
  }
  return values as RunOptionValues;
}
