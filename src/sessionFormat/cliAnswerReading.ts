import { failureAnswerSchema, failureSchema, type Failure } from './failures.js';
import * as z from './zod.js';

/**
 * How a reader reads a CLI command's answer: the shape the command declares
 * (`CLI_ANSWERS`, `cliAnswerIndex.ts`), or the one failure envelope. Apart from the
 * answers themselves so that a reader (the editor's own bundle) loads only the schemas
 * it reads.
 */

/**
 * A run refused before it started (`--json-output`, `--dry-run` too): no session was
 * written; a reader takes it as the failure it carries. The flat
 * `error`, `error_code` and `error_details` repeat the envelope for scripts of 0.x.
 */
export const runRefusedOutcomeSchema = z.object({
  status: z.literal('failed'),
  iterations: z.literal(0),
  summary: z.null(),
  confidence: z.null(),
  failure: failureSchema,
  error: z.string(),
  error_code: failureSchema.shape.code,
  error_details: z.record(z.string(), z.unknown()),
  total_duration_secs: z.literal(0),
  session_id: z.null(),
  session_file: z.null(),
});

/** A refused run as `--json-output` prints it: the envelope, and its flat 0.x fields. */
export function formatRefusedRun(failure: Failure): string {
  const refused: z.input<typeof runRefusedOutcomeSchema> = {
    status: 'failed',
    iterations: 0,
    summary: null,
    confidence: null,
    failure,
    error: failure.message,
    error_code: failure.code,
    error_details: failure.details,
    total_duration_secs: 0,
    session_id: null,
    session_file: null,
  };
  return `${JSON.stringify(refused)}\n`;
}

/** A declared answer, as a reader parses it. */
export interface AnswerSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}

/**
 * What a reader makes of a command's stdout, given the answer the command declares
 * (`CLI_ANSWERS` in `cliAnswerIndex.ts`): its answer, or its failure in the envelope (a
 * 0.x runner's `error` read the same way). Anything else is undefined: the reader says
 * the runner answered what it cannot read.
 */
export function readCliAnswer<T>(schema: AnswerSchema<T>, stdout: string): { ok: true; answer: T } | { ok: false; failure: Failure } | undefined {
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  const answer = schema.safeParse(json);
  if (answer.success) return { ok: true, answer: answer.data };
  const failed = z.union([failureAnswerSchema, runRefusedOutcomeSchema]).safeParse(json);
  if (failed.success) return { ok: false, failure: failed.data.failure };
  const legacy = z.object({ error: failureSchema }).safeParse(json);
  return legacy.success ? { ok: false, failure: legacy.data.error } : undefined;
}
