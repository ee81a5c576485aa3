import type { DistributiveOmit } from './distributiveOmit.js';
import { PROTECTED_CHANGE_KINDS } from './verification.js';
import * as z from './zod.js';

/**
 * Review: what the critic and the user say about the code, and what the user does
 * with it. Three kinds of review items feed the next actor run:
 *
 * - the critic's **findings** (`F<iteration>.<n>`), given in its decision block with a
 *   file and lines, recorded with the `critic_decision` run event and in the iteration
 *   line's extra field `findings`; open until the critic resolves them;
 * - the user's **comments** (`U<iteration>.<n>`), on a file and line of an iteration's
 *   diff or on the session; open until the user or the critic resolves them;
 * - the user's **rejected hunks** (`R<iteration>.<n>`): one hunk of an iteration undone
 *   in the working tree, with the user's reason; told to the next actor run once.
 *
 * Ids carry the iteration because its number goes on across the sessions a resume
 * chains: an id is unique over the chain.
 *
 * What the user does is kept in the sidecar's `review.jsonl` (`REVIEW_FILE` in `sessionFiles.ts`), apart
 * from the run's own `events.jsonl`: other processes (the CLI's `comment` and
 * `reject`, the editor) append to it while a loop runs, and the loop reads it before
 * every actor run without going through megabytes of agent events.
 */

export const SEVERITIES = ['error', 'warning', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** A finding as the runner records it, checked against the iteration's tree after the actor. */
export const findingSchema = z.object({
  /** `F<iteration>.<n>`: the n-th finding of that iteration's review. */
  id: z.string(),
  /** The file it is about, as the critic named it (repository-relative), or null for a general finding. */
  file: z.nullable(z.string()),
  line: z.nullable(z.int()),
  end_line: z.nullable(z.int()),
  severity: z.enum(SEVERITIES),
  message: z.string(),
  /** Whether the file and lines exist in the iteration's tree; otherwise it is shown as a general finding. */
  anchored: z.boolean(),
});
export type Finding = z.infer<typeof findingSchema>;

/** Where a user's comment points: a file and lines of an iteration's tree, or nothing (the whole session). */
export const commentTargetShape = {
  /** The iteration whose diff it was made on, or null for the session as a whole. */
  iteration: z.nullable(z.int()),
  file: z.nullable(z.string()),
  line: z.nullable(z.int()),
  end_line: z.nullable(z.int()),
};

const timestamp = z.string();
const record = <T extends string, S extends z.core.$ZodLooseShape>(type: T, shape: S) => z.object({ type: z.literal(type), timestamp, ...shape });

/** The user's comment (`U<iteration>.<n>`). */
const commentRecordSchema = record('comment', { id: z.string(), ...commentTargetShape, text: z.string() });
/** One hunk of an iteration undone in the working tree (`R<iteration>.<n>`), conflict-checked and undoable. */
const rejectionRecordSchema = record('hunk_rejected', {
  id: z.string(),
  iteration: z.int(),
  /** The hunk's number in `codeloops review`'s list of the iteration's hunks (from 1). */
  hunk: z.int(),
  file: z.string(),
  /** The hunk as it was undone (a unified diff hunk, head and tail when long): what the actor is shown. */
  patch: z.string(),
  reason: z.nullable(z.string()),
  /** Snapshots of the tree just before and after: the undo moves between them. */
  before_ref: z.string(),
  after_ref: z.string(),
});
/** An iteration's changes (or the whole session's, `iteration` null) put into the user's index. */
const stagedRecordSchema = record('staged', { iteration: z.nullable(z.int()), files: z.array(z.string()) });

export const reviewRecordSchema = z.discriminatedUnion('type', [
  commentRecordSchema,
  /** A finding or a comment resolved by the user (the critic's resolutions are in its `critic_decision`). */
  record('resolved', { id: z.string() }),
  /** A resolved finding or comment opened again by the user. */
  record('reopened', { id: z.string() }),
  rejectionRecordSchema,
  /** A rejection put back (the hunk is in the tree again); it is no longer told to the actor. */
  record('rejection_undone', { id: z.string(), restored: z.array(z.string()) }),
  stagedRecordSchema,
  /** The session was carried on in a new one (`codeloops resume`): the feedback given before went there. */
  record('carried_on', { session_id: z.string() }),
  /**
   * The user let a protected change stand (`codeloops accept`): it no longer refuses
   * DONE, and the critic is told the reason. The kinds are those that stood on that
   * iteration: a new kind of weakening of the file needs accepting again.
   */
  record('change_accepted', { iteration: z.int(), file: z.string(), kinds: z.array(z.enum(PROTECTED_CHANGE_KINDS)), reason: z.nullable(z.string()) }),
  /** An acceptance taken back (`codeloops accept --undo`): the change refuses DONE again while it stands. */
  record('acceptance_undone', { file: z.string() }),
  /**
   * The user let one of the start's tests fail on the final code (`codeloops accept
   * --test`): the task changes what it expects. It no longer refuses DONE; the critic
   * and the actor are told the reason.
   */
  record('test_accepted', { id: z.string(), reason: z.nullable(z.string()) }),
  /** A test's acceptance taken back (`codeloops accept --undo --test`). */
  record('test_acceptance_undone', { id: z.string() }),
]);
export type ReviewRecord = z.infer<typeof reviewRecordSchema>;
export type ReviewRecordOf<T extends ReviewRecord['type']> = Extract<ReviewRecord, { type: T }>;

export type ReviewRecordInput = DistributiveOmit<ReviewRecord, 'timestamp'>;

/** `review = "pause"`: after each CONTINUE the loop waits until the user says to go on. */
export const REVIEW_MODES = ['off', 'pause'] as const;
export type ReviewMode = (typeof REVIEW_MODES)[number];

/** What the user says to a loop paused for review: go on, or stop it. */
export const REVIEW_ACTIONS = ['continue', 'stop'] as const;
export type ReviewAction = (typeof REVIEW_ACTIONS)[number];

/**
 * What a paused runner reads on its stdin, one JSON object a line (the editor writes
 * them; in a terminal, Enter means continue): go on, stop the loop, or, when the loop
 * needs the user, their answer (`{"type":"answer","text":"…"}`), which the next actor
 * is given as the user's words.
 */
export const runControlSchema = z.discriminatedUnion('type', [
  z.object({ type: z.enum(REVIEW_ACTIONS) }),
  z.object({ type: z.literal('answer'), text: z.string().check(z.trim(), z.minLength(1)) }),
]);
export type RunControl = z.infer<typeof runControlSchema>;

/** What a review action did: `codeloops reject|stage --json`, and what the editor is told. */
export const REVIEW_ACTION_RESULTS = ['rejected', 'rejection_undone', 'staged', 'conflict', 'nothing_to_do', 'snapshot_missing'] as const;

export const reviewActionOutcomeSchema = z.object({
  result: z.enum(REVIEW_ACTION_RESULTS),
  message: z.string(),
  session_id: z.string(),
  iteration: z.nullable(z.int()),
  hunk: z.nullable(z.int()),
  /** The rejection made or undone (`R<iteration>.<n>`). */
  id: z.nullable(z.string()),
  /** The files changed (in the tree, or in the index for a staging). */
  files: z.array(z.string()),
  /** Why it did not apply to what is there now: the files, and git's own words. */
  conflicts: z.array(z.string()),
  /** The ref holding the tree as it was just before: what the undo goes back to. */
  saved_ref: z.nullable(z.string()),
});
export type ReviewActionOutcome = z.infer<typeof reviewActionOutcomeSchema>;

/** One hunk of an iteration's change, as `codeloops review --json` lists it. */
export const reviewHunkSchema = z.object({
  /** Its number among the iteration's hunks, from 1: what `codeloops reject --hunk` takes. */
  number: z.int(),
  file: z.string(),
  status: z.enum(['added', 'deleted', 'modified']),
  binary: z.boolean(),
  old_start: z.int(),
  old_lines: z.int(),
  new_start: z.int(),
  new_lines: z.int(),
  /** The hunk from its `@@` line (for a binary or header-only change, what changed). */
  text: z.string(),
});
export type ReviewHunk = z.infer<typeof reviewHunkSchema>;

/** Every finding, comment, rejection and staging of a session, with where each stands: what the viewers show. */
export const reviewItemsSchema = z.object({
  /** Open until the critic (or the user) resolves them; `claimed`: the actor said it addressed it since. */
  findings: z.array(z.object({ ...findingSchema.shape, iteration: z.int(), open: z.boolean(), claimed: z.boolean() })),
  comments: z.array(z.object({ ...commentRecordSchema.shape, open: z.boolean(), claimed: z.boolean() })),
  /** Told to the next actor run once (`delivered`), unless undone first. */
  rejections: z.array(z.object({ ...rejectionRecordSchema.shape, undone: z.boolean(), delivered: z.boolean() })),
  staged: z.array(stagedRecordSchema),
  /** When the session was last carried on in a new one: the feedback before that went there. */
  carried_on: z._default(z.nullable(z.string()), null),
});
export type ReviewItems = z.infer<typeof reviewItemsSchema>;
export type FindingItem = ReviewItems['findings'][number];
export type CommentItem = ReviewItems['comments'][number];
export type RejectionItem = ReviewItems['rejections'][number];

/** A session's review: `codeloops review --json`, each iteration's hunks with the review items. */
export const sessionReviewSchema = z.object({
  session_id: z.string(),
  /** Each iteration's hunks; null when its snapshots are gone (a fresh clone, an imported session). */
  iterations: z.array(z.object({ iteration: z.int(), hunks: z.nullable(z.array(reviewHunkSchema)) })),
  ...reviewItemsSchema.shape,
});
export type SessionReview = z.infer<typeof sessionReviewSchema>;

/**
 * Whether the user has given feedback the loop has not acted on (an open comment, a
 * rejection not told yet) since the session was last carried on: a finished session
 * is then open again.
 */
export function hasOpenUserFeedback(items: Pick<ReviewItems, 'comments' | 'rejections' | 'carried_on'>): boolean {
  const since = (at: string) => items.carried_on === null || Date.parse(at) > Date.parse(items.carried_on);
  return (
    items.comments.some((comment) => comment.open && since(comment.timestamp)) ||
    items.rejections.some((rejection) => !rejection.undone && !rejection.delivered && since(rejection.timestamp))
  );
}
