import * as z from '../sessionFormat/zod.js';
import { InvalidFilterError, parseFilterInput, type SessionFilter } from '../sessions/sessionFilter.js';
import { HttpError } from './httpResponses.js';

/**
 * Query parameters, checked with zod: unknown names are errors (a misspelt filter
 * must not silently list everything), and so is a single-valued one given twice.
 */

const text = z.string().check(z.maxLength(2000, 'is longer than 2000 characters'));

const filterQuerySchema = z.strictObject({
  outcome: z.optional(z.array(text).check(z.maxLength(20))),
  after: z.optional(text),
  before: z.optional(text),
  search: z.optional(text),
  project: z.optional(text),
  actor: z.optional(text),
  critic: z.optional(text),
});

const diffQuerySchema = z.strictObject({
  iteration: z.optional(z.pipe(z.string().check(z.regex(/^[1-9]\d{0,8}$/, 'must be a positive whole number')), z.transform(Number))),
});

const liveQuerySchema = z.strictObject({ session: z.optional(text) });

const emptyQuerySchema = z.strictObject({});

/** Parameters that may be repeated (`?outcome=success&outcome=failed`). */
const REPEATABLE = new Set(['outcome']);

function parseQuery<T>(schema: z.ZodMiniObject & z.ZodMiniType<T>, query: URLSearchParams): T {
  // No prototype: `?__proto__=1` is a parameter like any other, not a way to set one.
  const record: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name);
    if (REPEATABLE.has(name)) record[name] = values;
    else if (values.length > 1) throw new HttpError(400, `The query parameter "${name}" is given ${values.length} times; give it once.`);
    else record[name] = values[0]!;
  }
  const parsed = schema.safeParse(record);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const allowed = Object.keys(schema.shape);
    throw new HttpError(
      400,
      `Unknown query parameter ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}${allowed.length > 0 ? ` (this route takes: ${allowed.join(', ')})` : ' (this route takes none)'}.`,
    );
  }
  throw new HttpError(400, `The query parameter "${issue.path.map(String).join('.')}" ${issue.message}.`);
}

/** `outcome` (repeatable, or comma-separated), `after`, `before`, `search`, `project`, `actor`, `critic`: as `codeloops sessions list` takes them. */
export function filterFromQuery(query: URLSearchParams): SessionFilter {
  const input = parseQuery(filterQuerySchema, query);
  try {
    return parseFilterInput(input, '');
  } catch (error) {
    if (error instanceof InvalidFilterError) throw new HttpError(400, error.message);
    throw error;
  }
}

export function diffQuery(query: URLSearchParams): { iteration?: number } {
  return parseQuery(diffQuerySchema, query);
}

export function liveQuery(query: URLSearchParams): { session?: string } {
  return parseQuery(liveQuerySchema, query);
}

export function noQuery(query: URLSearchParams): void {
  parseQuery(emptyQuerySchema, query);
}
