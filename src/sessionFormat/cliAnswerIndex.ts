import { applyOutcomeSchema } from './applyOutcome.js';
import { groupComparisonSchema } from './candidateGroups.js';
import {
  acceptAnswerSchema,
  queueAddAnswerSchema,
  queueExportAnswerSchema,
  queueImportAnswerSchema,
  queueListAnswerSchema,
  queueMoveAnswerSchema,
  queueRemoveAnswerSchema,
  runOutcomeSchema,
  worktreesRemovedSchema,
} from './cliAnswers.js';
import { doctorReportSchema } from './doctorReport.js';
import { evalDryRunSchema, evalResultsSchema } from './evalRecords.js';
import { forecastSchema } from './forecast.js';
import { mergeResultSchema, queueTaskSchema } from './queueRecords.js';
import { groupPlanSchema, runPlanSchema } from './runPlans.js';
import { reviewActionOutcomeSchema, reviewRecordSchema, sessionReviewSchema } from './reviewRecords.js';
import { rollbackOutcomeSchema } from './rollbackOutcome.js';
import { evalMergeAnswerSchema, exportResultSchema, importResultSchema } from './sessionBundle.js';
import { iterationLineSchema, sessionEndLineSchema, sessionStartLineSchema } from './sessionLines.js';
import { sessionStatsSchema, sessionSummarySchema } from './sessionSummaries.js';
import { timelineEntrySchema } from './timelineEntries.js';
import * as z from './zod.js';

/**
 * The CLI's machine-readable answers, declared once: what each command prints on
 * stdout with `--json` (or `--json-output`), by the words that run it; when any of them
 * fails it prints the one failure envelope instead (`failures.ts`). The CLI prints
 * through this (`printAnswer`, `cli/answers.ts`) and a test runs each command and reads
 * its answer back with no field left undeclared (`test/cli/cliAnswers.test.ts`); readers
 * parse with the schema named here (`readCliAnswer`). The run events of `--events
 * ndjson` are declared in `runEvents.ts` (a candidate group's in `candidateGroups.ts`).
 */

/**
 * Each command's answer, by the words that run it. `layout`: one JSON value on one line,
 * `indented` (for reading), or `ndjson` (a value a line, as it comes).
 */
export const CLI_ANSWERS = {
  run: { schema: runOutcomeSchema, layout: 'line' },
  resume: { schema: runOutcomeSchema, layout: 'line' },
  'run --dry-run': { schema: runPlanSchema, layout: 'indented' },
  'run --candidates --dry-run': { schema: groupPlanSchema, layout: 'indented' },
  'run --candidates': { schema: groupComparisonSchema, layout: 'line' },
  forecast: { schema: forecastSchema, layout: 'line' },
  doctor: { schema: doctorReportSchema, layout: 'indented' },
  'sessions list': { schema: z.array(sessionSummarySchema), layout: 'line' },
  'sessions show': {
    schema: z.object({ id: z.string(), start: sessionStartLineSchema, iterations: z.array(iterationLineSchema), end: z.nullable(sessionEndLineSchema) }),
    layout: 'indented',
  },
  'sessions stats': { schema: sessionStatsSchema, layout: 'indented' },
  'sessions replay': { schema: timelineEntrySchema, layout: 'ndjson' },
  'sessions delete': { schema: z.object({ session_id: z.string(), snapshot_refs: z.int(), warnings: z.array(z.string()) }), layout: 'indented' },
  'sessions export': { schema: exportResultSchema, layout: 'indented' },
  'sessions import': { schema: importResultSchema, layout: 'indented' },
  rollback: { schema: rollbackOutcomeSchema, layout: 'indented' },
  apply: { schema: applyOutcomeSchema, layout: 'indented' },
  eval: { schema: evalResultsSchema, layout: 'line' },
  'eval --dry-run': { schema: evalDryRunSchema, layout: 'indented' },
  'eval merge': { schema: evalMergeAnswerSchema, layout: 'line' },
  candidates: { schema: z.array(groupComparisonSchema), layout: 'indented' },
  'candidates <group>': { schema: groupComparisonSchema, layout: 'indented' },
  'candidates --discard': { schema: worktreesRemovedSchema, layout: 'indented' },
  review: { schema: sessionReviewSchema, layout: 'indented' },
  reject: { schema: reviewActionOutcomeSchema, layout: 'indented' },
  stage: { schema: reviewActionOutcomeSchema, layout: 'indented' },
  comment: { schema: reviewRecordSchema, layout: 'indented' },
  accept: { schema: acceptAnswerSchema, layout: 'line' },
  'queue add': { schema: queueAddAnswerSchema, layout: 'line' },
  'queue list': { schema: queueListAnswerSchema, layout: 'line' },
  'queue remove': { schema: queueRemoveAnswerSchema, layout: 'line' },
  'queue move': { schema: queueMoveAnswerSchema, layout: 'line' },
  'queue merge': { schema: mergeResultSchema, layout: 'line' },
  'queue export': { schema: queueExportAnswerSchema, layout: 'line' },
  'queue import': { schema: queueImportAnswerSchema, layout: 'indented' },
  'queue report': { schema: z.object({ repository: z.string(), base_commit: z.nullable(z.string()), tasks: z.array(queueTaskSchema) }), layout: 'line' },
} as const;

export type CliCommand = keyof typeof CLI_ANSWERS;
/** What a command answers, as a reader gets it. */
export type CliAnswer<C extends CliCommand> = z.infer<(typeof CLI_ANSWERS)[C]['schema']>;

/** What the CLI may print as a command's answer (before a reader's defaults). */
export type CliAnswerInput<C extends CliCommand> = z.input<(typeof CLI_ANSWERS)[C]['schema']>;

/** A command's answer as it is printed: one value, with the line break that ends it. */
export function formatCliAnswer<C extends CliCommand>(command: C, answer: CliAnswerInput<C>): string {
  return `${JSON.stringify(answer, null, CLI_ANSWERS[command].layout === 'indented' ? 2 : undefined)}\n`;
}
