import type { NeedsInput } from '../sessionFormat/needsInput.js';
import { SEVERITIES, type Severity } from '../sessionFormat/reviewRecords.js';
import * as z from '../sessionFormat/zod.js';

/**
 * The critic's verdict, in the contract of the original codeloops: a final
 * `<decision>{json}</decision>` block, with the plain markers TASK COMPLETE and
 * NEEDS MORE WORK understood when there is no block.
 */

export type CriticDecision =
  /** `noChangeNeeded`: the critic says the task needs no change (a DONE on an unchanged tree needs it, with evidence). */
  | { kind: 'DONE'; summary: string; confidence: number | null; noChangeNeeded?: boolean }
  /** `needsInput`: the critic (`blocked`) or the actor cannot go on without the user; recorded as a CONTINUE that waits for their answer. */
  | { kind: 'CONTINUE'; feedback: string; remainingIssues: string[]; needsInput?: NeedsInput }
  | { kind: 'ERROR'; description: string; recovery: string };

/** A finding as the critic gives it in its decision block, before the runner checks it against the tree. */
export interface CriticFinding {
  file: string | null;
  line: number | null;
  endLine: number | null;
  severity: Severity;
  message: string;
}

export interface ParsedDecision {
  decision: CriticDecision;
  /** How it was read: the JSON block, or a plain-text marker. */
  source: 'block' | 'marker';
  /** Its findings on the code, in any decision (none from a marker or an older critic). */
  findings: CriticFinding[];
  /** Ids of earlier findings and user comments it says are now resolved. */
  resolved: string[];
  /** The task's requirements as it judged them (none from a marker or an older critic). */
  requirements: CriticRequirement[];
}

/** A requirement as the critic gives it: `id` as it wrote it (`REQ2`), `met` null when it did not say. */
export interface CriticRequirement {
  id: string | null;
  text: string;
  met: boolean | null;
  evidence: string;
}

const text = z.string().check(z.trim());
const required = (message: string) => z.string().check(z.trim(), z.minLength(1, message));
/** A confidence that cannot be read is dropped, not allowed to sink a valid verdict. */
const confidence = z.pipe(
  z.unknown(),
  z.transform((value): number | null => {
    const number = typeof value === 'string' ? Number.parseFloat(value) : value;
    if (typeof number !== 'number' || !Number.isFinite(number)) return null;
    // Some models answer 95 meaning 95 %.
    const scaled = number > 1 && number <= 100 ? number / 100 : number;
    return scaled >= 0 && scaled <= 1 ? scaled : null;
  }),
);

/** A line number as models write it: 42, "42", 42.0; anything else is no line. */
const lineNumber = z.pipe(
  z.unknown(),
  z.transform((value): number | null => {
    const number = typeof value === 'string' ? Number(value.trim()) : value;
    return typeof number === 'number' && Number.isInteger(number) && number >= 1 ? number : null;
  }),
);

/**
 * One finding; what cannot be read in it is dropped, not the finding (an unknown
 * severity is a warning), and a finding without a message is no finding.
 */
const findingSchema = z.looseObject({
  file: z.catch(z.nullable(z.optional(z.string().check(z.trim()))), null),
  line: z.optional(lineNumber),
  end_line: z.optional(lineNumber),
  severity: z.catch(z.optional(z.pipe(z.string().check(z.trim(), z.toLowerCase()), z.enum(SEVERITIES))), 'warning'),
  message: z.string().check(z.trim(), z.minLength(1)),
});

/** Present in any decision, optional: a decision without them (an older critic, a `command` agent) is as valid as ever. */
const reviewShape = {
  findings: z.catch(z.optional(z.array(z.unknown())), []),
  resolved: z.catch(z.optional(z.array(z.string())), []),
  requirements: z.catch(z.optional(z.array(z.unknown())), []),
};

/** One requirement; what cannot be read in it is dropped, not the requirement (a `met` of "yes" is no answer). */
const requirementSchema = z.looseObject({
  id: z.catch(
    z.optional(
      z.pipe(
        z.union([z.string(), z.number()]),
        z.transform((id) => String(id).trim()),
      ),
    ),
    undefined,
  ),
  text: z.catch(z.optional(z.string().check(z.trim())), ''),
  met: z.catch(z.optional(z.boolean()), undefined),
  evidence: z.catch(z.optional(z.string().check(z.trim())), ''),
});

/**
 * What is left, as the critic lists it: each issue a line of text. One given as a bare
 * string is a list of one; an entry that is not text, or has no letter or digit (blanks,
 * a dash, an invisible space), names nothing and is dropped, not the decision.
 */
const remainingIssues = z.pipe(
  z.unknown(),
  z.transform((value): string[] => {
    const entries: unknown[] = Array.isArray(value) ? value : [value];
    return entries.flatMap((entry) => (typeof entry === 'string' && /[\p{L}\p{N}]/u.test(entry) ? [entry.trim()] : []));
  }),
);

const decisionBlockSchema = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('done'),
    summary: z._default(text, ''),
    confidence: z.optional(confidence),
    no_change_needed: z.catch(z.optional(z.boolean()), undefined),
    ...reviewShape,
  }),
  z.looseObject({
    type: z.literal('continue'),
    feedback: required('feedback is empty'),
    remaining_issues: z._default(remainingIssues, []),
    ...reviewShape,
  }),
  /** The critic cannot judge without the user (a secret, a product decision): the loop asks them. */
  z.looseObject({
    type: z.literal('blocked'),
    question: required('question is empty'),
    ...reviewShape,
  }),
  z.looseObject({
    type: z.literal('error'),
    error_description: required('error_description is empty'),
    recovery_suggestion: z._default(text, ''),
    ...reviewShape,
  }),
]);

const BLOCK = /<decision>([\s\S]*?)<\/decision>/gi;

/**
 * Reads the last `<decision>` block (a critic that quotes the tag while reasoning
 * must not be taken at its word), validated with zod; without any block, the last
 * plain marker. Returns null when nothing can be read.
 */
export function parseCriticDecision(answer: string, options: { markers?: boolean } = {}): ParsedDecision | null {
  const blocks = [...answer.matchAll(BLOCK)];
  const last = blocks.at(-1);
  if (last) {
    const parsed = parseBlock(last[1] ?? '');
    return parsed ? { ...parsed, source: 'block' } : null;
  }
  return options.markers === false ? null : parseMarkers(answer);
}

/**
 * The JSON of the last `<decision>` block, for other contracts in the same style (the
 * candidates' judge): undefined when there is no block or its JSON cannot be read.
 */
export function lastDecisionJson(answer: string): unknown {
  const last = [...answer.matchAll(BLOCK)].at(-1);
  return last ? extractJson(last[1] ?? '') : undefined;
}

/** Why the last block did not parse, for the repair prompt. */
export function explainUnreadableDecision(answer: string): string {
  const last = [...answer.matchAll(BLOCK)].at(-1);
  if (!last) return 'there was no <decision>…</decision> block at the end of your answer';
  const json = extractJson(last[1] ?? '');
  if (json === undefined) return 'the <decision> block did not contain valid JSON';
  const result = decisionBlockSchema.safeParse(normalizeType(json));
  if (!result.success)
    return `the <decision> JSON did not match the contract (${result.error.issues.map((issue) => `${issue.path.join('.') || 'type'}: ${issue.message}`).join('; ')})`;
  return 'the decision could not be read';
}

function parseBlock(body: string): Omit<ParsedDecision, 'source'> | null {
  const json = extractJson(body);
  if (json === undefined) return null;
  const result = decisionBlockSchema.safeParse(normalizeType(json));
  if (!result.success) return null;
  const block = result.data;
  const review = {
    findings: readFindings(block.findings ?? []),
    resolved: (block.resolved ?? []).map((id) => id.trim()).filter(Boolean),
    requirements: readRequirements(block.requirements ?? []),
  };
  switch (block.type) {
    case 'done':
      return {
        decision: {
          kind: 'DONE',
          summary: block.summary,
          confidence: block.confidence ?? null,
          ...(block.no_change_needed === true && { noChangeNeeded: true }),
        },
        ...review,
      };
    case 'continue':
      return {
        decision: { kind: 'CONTINUE', feedback: block.feedback, remainingIssues: block.remaining_issues },
        ...review,
      };
    case 'blocked':
      return { decision: needsInputDecision({ from: 'critic', question: block.question }), ...review };
    case 'error':
      return { decision: { kind: 'ERROR', description: block.error_description, recovery: block.recovery_suggestion }, ...review };
  }
}

function readFindings(entries: readonly unknown[]): CriticFinding[] {
  return entries.flatMap((entry) => {
    const parsed = findingSchema.safeParse(entry);
    if (!parsed.success) return [];
    const { file, line, end_line: endLine, severity, message } = parsed.data;
    const start = line ?? null;
    return [
      {
        file: file || null,
        line: start,
        endLine: start === null ? null : endLine !== null && endLine !== undefined && endLine >= start ? endLine : start,
        severity: severity ?? 'warning',
        message,
      },
    ];
  });
}

function readRequirements(entries: readonly unknown[]): CriticRequirement[] {
  return entries.flatMap((entry) => {
    const parsed = requirementSchema.safeParse(entry);
    if (!parsed.success) return [];
    const { id, text, met, evidence } = parsed.data;
    if (!id && !text) return [];
    return [{ id: id || null, text: text ?? '', met: met ?? null, evidence: evidence ?? '' }];
  });
}

/** JSON in the block, tolerating a Markdown fence or prose around the object. */
function extractJson(body: string): unknown {
  const unfenced = body
    .replace(/^\s*```(?:json)?\s*/i, '')
    .replace(/\s*```\s*$/, '')
    .trim();
  for (const candidate of [unfenced, unfenced.slice(unfenced.indexOf('{'), unfenced.lastIndexOf('}') + 1)]) {
    if (!candidate) continue;
    try {
      return JSON.parse(candidate) as unknown;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

function normalizeType(json: unknown): unknown {
  if (json && typeof json === 'object' && 'type' in json && typeof (json as { type: unknown }).type === 'string') {
    return { ...json, type: (json as { type: string }).type.trim().toLowerCase() };
  }
  return json;
}

const DONE_MARKER = /\bTASK[ _]COMPLETE\b/g;
const CONTINUE_MARKER = /\bNEEDS[ _]MORE[ _]WORK\b/g;

function parseMarkers(answer: string): ParsedDecision | null {
  const lastDone = lastIndexOf(answer, DONE_MARKER);
  const lastContinue = lastIndexOf(answer, CONTINUE_MARKER);
  if (lastDone < 0 && lastContinue < 0) return null;
  const prose = answer.replace(DONE_MARKER, '').replace(CONTINUE_MARKER, '').trim();
  if (lastDone > lastContinue) {
    return { decision: { kind: 'DONE', summary: prose, confidence: null }, source: 'marker', findings: [], resolved: [], requirements: [] };
  }
  return {
    decision: { kind: 'CONTINUE', feedback: prose || 'The critic said the task needs more work.', remainingIssues: [] },
    source: 'marker',
    findings: [],
    resolved: [],
    requirements: [],
  };
}

function lastIndexOf(text: string, pattern: RegExp): number {
  let index = -1;
  for (const match of text.matchAll(pattern)) index = match.index;
  return index;
}

/** A CONTINUE that waits for the user's answer; its feedback says what was asked, for readers that know no `needs_input`. */
export function needsInputDecision(needs: NeedsInput): CriticDecision {
  return { kind: 'CONTINUE', feedback: `Waiting for the user's answer: ${needs.question}`, remainingIssues: [], needsInput: needs };
}

/** The feedback the session records and the actor receives. */
export function feedbackText(decision: CriticDecision): string | null {
  switch (decision.kind) {
    case 'DONE':
      return null;
    case 'CONTINUE':
      return decision.feedback;
    case 'ERROR':
      return decision.recovery ? `${decision.description}\n\nRecovery: ${decision.recovery}` : decision.description;
  }
}
