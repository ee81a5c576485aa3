import { FAILURE_CODES } from './failures.js';
import { runEventSchema, runRefusedSchema } from './runEvents.js';
import { OUTCOMES } from './sessionLines.js';
import * as z from './zod.js';

/**
 * Candidate groups (`codeloops run --candidates …`): several loops on one task, each
 * a normal session in its own git worktree, compared and ranked when all have ended.
 *
 * A group's record is append-only JSONL in the sidecar area,
 * `sidecars/_groups/<group>/group.jsonl` (a folder no session id can name: ids start
 * with a letter or digit). The session files stay exactly in the documented format;
 * each candidate's `session_start` only carries two extra fields, `candidate_group`
 * and `candidate`. The record's lines are also what `--events ndjson` streams for a
 * group, with each candidate's run events wrapped in `candidate_event`.
 */

const timestamp = z.string();
const paths = z.array(z.string());

/** One candidate as planned: its place, its label (`claude`, `codex:gpt-5`, `claude#2`) and its actor. */
export const candidateSchema = z.object({
  /** 1-based, in the order given. */
  index: z.int().check(z.positive()),
  label: z.string(),
  /** The actor's agent, as config names it (`claude`, `codex`, …). */
  agent: z.string(),
  model: z.nullable(z.string()),
  /** The candidate's git worktree: its top folder. */
  worktree: z.string(),
  /** Where its loop runs: the run's working directory, at the same place in the worktree. */
  working_dir: z.string(),
});
export type Candidate = z.infer<typeof candidateSchema>;

/** What the judge said: the critic agent, shown every finished diff side by side, ranks them. */
export const judgmentSchema = z.object({
  /** Candidate labels, best first (only those that were judged). */
  ranking: z.array(z.string()),
  reasoning: z.string(),
  /** How the ranking was read: its decision block, the answer to a repair prompt, or not at all. */
  source: z.enum(['block', 'repair', 'unreadable', 'judge_failed']),
  agent: z.string(),
  model: z.nullable(z.string()),
  /** The judge's whole answer (head and tail). */
  answer: z.string(),
  total_cost_usd: z.nullable(z.number()),
  total_tokens: z.number(),
});
export type Judgment = z.infer<typeof judgmentSchema>;

export const GROUP_STATUSES = ['running', 'finished', 'interrupted', 'failed', 'crashed'] as const;
export type GroupStatus = (typeof GROUP_STATUSES)[number];

const line = <T extends string, S extends z.core.$ZodLooseShape>(type: T, shape: S) =>
  z.object({ type: z.literal(type), timestamp, group_id: z.string(), ...shape });

export const groupRecordLineSchema = z.discriminatedUnion('type', [
  /** The group as planned: the task, the user's tree it starts from, the candidates. */
  line('group_started', {
    prompt: z.string(),
    /** The user's working directory: where `codeloops apply` puts a candidate's changes. */
    working_dir: z.string(),
    /** The top of the user's repository. */
    repository: z.string(),
    /** The snapshot of the user's tree every worktree was made from (uncommitted and untracked files included). */
    base_commit: z.string(),
    base_ref: z.string(),
    candidates: z.array(candidateSchema),
    /** How many loops run at once. */
    jobs: z.int().check(z.positive()),
    critic_agent: z.string(),
    critic_model: z.nullable(z.string()),
    /** The runner's process, to tell a running group from one whose runner died. */
    pid: z.int(),
    /** `[worktree] copy` and `setup`, as the run used them. */
    copy: paths,
    setup: z.nullable(z.string()),
  }),
  /** A candidate's worktree exists and its loop is starting (its session id follows once its file exists). */
  line('candidate_started', { label: z.string(), session_id: z.string() }),
  /** A candidate's loop ended (or never started: no worktree could be made, the group was interrupted first). */
  line('candidate_finished', {
    label: z.string(),
    session_id: z.nullable(z.string()),
    outcome: z.enum(OUTCOMES),
    error: z.nullable(z.string()),
    error_code: z.nullable(z.enum(FAILURE_CODES)),
  }),
  line('judged', { judgment: judgmentSchema }),
  /** Every candidate has ended: how the group ended and the ranking, best first. */
  line('group_finished', { status: z.enum(GROUP_STATUSES), ranking: z.array(z.string()) }),
  /** A candidate's changes were put into the user's tree (`codeloops apply`); `apply` numbers the session's applies. */
  line('candidate_applied', { label: z.string(), session_id: z.string(), apply: z.int().check(z.positive()), target_dir: z.string() }),
  line('candidate_apply_undone', { label: z.string(), session_id: z.string(), apply: z.int().check(z.positive()) }),
  /** Worktrees removed (after an apply, a discard, a prune), and those kept with the reason. */
  line('worktrees_removed', { removed: z.array(z.string()), kept: z.array(z.object({ label: z.string(), reason: z.string() })) }),
]);
export type GroupRecordLine = z.infer<typeof groupRecordLineSchema>;
export type GroupRecordLineOf<T extends GroupRecordLine['type']> = Extract<GroupRecordLine, { type: T }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type GroupRecordInput = DistributiveOmit<GroupRecordLine, 'timestamp' | 'group_id'>;

/**
 * What `codeloops run --candidates … --events ndjson` prints: the group's record lines
 * as they are written, each candidate's run events wrapped with its label and session,
 * and `run_refused` when the group could not start.
 */
export const candidateStreamEventSchema = z.union([
  groupRecordLineSchema,
  z.object({
    type: z.literal('candidate_event'),
    timestamp,
    group_id: z.string(),
    label: z.string(),
    session_id: z.string(),
    event: runEventSchema,
  }),
  runRefusedSchema,
]);
export type CandidateStreamEvent = z.infer<typeof candidateStreamEventSchema>;

export function parseCandidateStreamEvent(text: string): CandidateStreamEvent | undefined {
  if (text.trim() === '') return undefined;
  try {
    const parsed = candidateStreamEventSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** One candidate in the comparison: the figures a user weighs, and where it ranks. */
export const candidateRowSchema = z.object({
  index: z.int(),
  label: z.string(),
  agent: z.string(),
  model: z.nullable(z.string()),
  session_id: z.nullable(z.string()),
  /** `pending` (waiting for a job), `running`, or how its session ended (`crashed`: it has no end and nothing runs it). */
  status: z.enum(['pending', 'running', ...OUTCOMES, 'crashed']),
  /** Where the running loop is: `iteration 2, critic`. */
  progress: z.nullable(z.string()),
  iterations: z.int(),
  /** The checks on its last tree: how many passed, of how many (null: no checks ran). */
  checks_passed: z.nullable(z.int()),
  checks_total: z.nullable(z.int()),
  required_checks_failed: z.nullable(z.int()),
  total_cost_usd: z.nullable(z.number()),
  cost_estimated: z.boolean(),
  total_tokens: z.number(),
  duration_secs: z.nullable(z.number()),
  /** Its whole change, from the tree its loop started with to the one it left. */
  files_changed: z.nullable(z.int()),
  insertions: z.nullable(z.int()),
  deletions: z.nullable(z.int()),
  /** The critic's confidence when it said DONE. */
  confidence: z.nullable(z.number()),
  summary: z.nullable(z.string()),
  error: z.nullable(z.string()),
  /** 1 = best, once the group has been ranked. */
  rank: z.nullable(z.int()),
  /** Its worktree, while it exists. */
  worktree: z.nullable(z.string()),
  applied: z.boolean(),
});
export type CandidateRow = z.infer<typeof candidateRowSchema>;

/** `codeloops candidates <group> --json`, and the editor's comparison page. */
export const groupComparisonSchema = z.object({
  group_id: z.string(),
  prompt: z.string(),
  working_dir: z.string(),
  started_at: z.string(),
  status: z.enum(GROUP_STATUSES),
  /** Best first once ranked; in the order given before. */
  candidates: z.array(candidateRowSchema),
  ranking: z.nullable(z.array(z.string())),
  judge: z.nullable(judgmentSchema),
  /**
   * Extra field, present only when the ranking put first another candidate than the
   * judge did: its checks passed more (`checks`) or its outcome was better (`outcome`),
   * and those come before the judge.
   */
  judge_overruled: z.optional(z.object({ judged_first: z.string(), ranked_first: z.string(), by: z.enum(['checks', 'outcome']) })),
  /** The best candidate, when one finished with success. */
  winner: z.nullable(z.string()),
  /** The candidate whose changes are in the user's tree, if one was applied (and not undone). */
  applied: z.nullable(z.object({ label: z.string(), session_id: z.string() })),
  critic_agent: z.string(),
  critic_model: z.nullable(z.string()),
  warnings: paths,
});
export type GroupComparison = z.infer<typeof groupComparisonSchema>;

const GROUP_ID = /^group-[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/;

/** `group-<timestamp>_<hash>`: a plain folder name, never a session's id. */
export function isGroupId(value: string): boolean {
  return GROUP_ID.test(value) && !value.includes('..');
}
