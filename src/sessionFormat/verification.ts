import * as z from './zod.js';

/**
 * What a DONE rests on, as the session records it.
 *
 * - **Protected changes**: what the gate rests on and the actor must not weaken to
 *   pass it: test files, the commands the checks run, CI configuration,
 *   `codeloops.toml`. A change the actor made to one of them, judged against the tree
 *   the loop started from, is a protected change; while one stands (not restored, not
 *   accepted) DONE is refused.
 * - **The critic's evidence**: the commands it ran (and whether they succeeded) and the
 *   files it read, from its own stream, not its account.
 * - **Verification**: whether anything but the critic's word stands behind a DONE.
 */

/** The ways an actor can make the gate pass without making the work right. */
export const PROTECTED_CHANGE_KINDS = [
  'test_file_deleted',
  'tests_removed',
  'skip_added',
  'check_command_changed',
  'ci_changed',
  'config_changed',
  'nested_repository',
] as const;
export type ProtectedChangeKind = (typeof PROTECTED_CHANGE_KINDS)[number];

/** The kinds `allow_test_changes` lets stand: a task about the tests may remove or skip some. */
export const TEST_CHANGE_KINDS: readonly ProtectedChangeKind[] = ['test_file_deleted', 'tests_removed', 'skip_added'];

export const protectedChangeSchema = z.object({
  /** From the repository's top. */
  file: z.string(),
  kind: z.enum(PROTECTED_CHANGE_KINDS),
  /** What changed, in words: `2 of 5 test cases removed`, `scripts.test: "mocha" → "exit 0"`. */
  detail: z.string(),
});
export type ProtectedChange = z.infer<typeof protectedChangeSchema>;

/**
 * Where a change stands: it refuses DONE, the user accepted it, `allow_test_changes`
 * allows it, or it is a `hint`: the start's tests run on the final code (the oracle)
 * judge what it could hide, so it is told to the agents but refuses nothing by itself.
 */
export const PROTECTED_CHANGE_STATUSES = ['weakening', 'accepted', 'allowed', 'hint'] as const;
export type ProtectedChangeStatus = (typeof PROTECTED_CHANGE_STATUSES)[number];

/** The user let a weakening stand (`codeloops accept`): recorded in the session's review record. */
export const acceptedChangeSchema = z.object({
  file: z.string(),
  /** The kinds accepted, as they stood on that iteration: a new kind of weakening on the file needs a new accept. */
  kinds: z.array(z.enum(PROTECTED_CHANGE_KINDS)),
  reason: z.nullable(z.string()),
});
export type AcceptedChange = z.infer<typeof acceptedChangeSchema>;

/** One line per change, for the critic, the actor and the logs: `test/a.test.js: a test skipped (it.skip)`. */
export function protectedChangeText(change: ProtectedChange): string {
  return `${change.file}: ${KIND_WORDS[change.kind]} (${change.detail})`;
}

/** A change's kind in words: `a test skipped`. */
export function protectedKindText(kind: ProtectedChangeKind): string {
  return KIND_WORDS[kind];
}

const KIND_WORDS: Readonly<Record<ProtectedChangeKind, string>> = {
  test_file_deleted: 'test file deleted',
  tests_removed: 'test cases removed',
  skip_added: 'a test skipped',
  check_command_changed: 'what a check runs changed',
  ci_changed: 'CI configuration changed',
  config_changed: 'Codeloops configuration changed',
  nested_repository: 'became a nested repository (git no longer sees its files)',
};

/** A command the critic ran while judging, from its stream: `ok` null when its agent did not say how it went. */
export const criticCommandSchema = z.object({ tool: z.string(), command: z.string(), ok: z.nullable(z.boolean()) });
export type CriticCommand = z.infer<typeof criticCommandSchema>;

/** What the critic did to judge, from its stream: what it ran and what it read. */
export const criticEvidenceSchema = z.object({ commands: z.array(criticCommandSchema), reads: z.array(z.string()) });
export type CriticEvidence = z.infer<typeof criticEvidenceSchema>;

/**
 * Whether a DONE rests on more than the critic's word: `verified` when a required
 * check passed on the final tree or the critic ran a command that succeeded on it.
 */
export const VERIFICATIONS = ['verified', 'unverified'] as const;
export type Verification = (typeof VERIFICATIONS)[number];

/**
 * Why a DONE was refused for resting on the critic's word alone: `no_change`, the loop
 * never changed the tree and nothing showed no change is needed; `no_evidence`,
 * `require_evidence` and nothing verified it.
 */
export const UNVERIFIED_DONES = ['no_change', 'no_evidence'] as const;
export type UnverifiedDone = (typeof UNVERIFIED_DONES)[number];

/** "verified by: `npm test` ok; read src/a.ts", or null when the critic ran and read nothing. */
export function evidenceText(evidence: CriticEvidence): string | null {
  const ran = evidence.commands.map((command) => `\`${command.command}\` ${command.ok === null ? 'ran' : command.ok ? 'ok' : 'failed'}`);
  const read = evidence.reads.length > 0 ? [`read ${evidence.reads.slice(0, 8).join(', ')}${evidence.reads.length > 8 ? ', …' : ''}`] : [];
  const parts = [...ran.slice(0, 8), ...(ran.length > 8 ? [`${ran.length - 8} more commands`] : []), ...read];
  return parts.length > 0 ? `verified by: ${parts.join('; ')}` : null;
}

/**
 * One of the task's requirements as the critic judged it on an iteration: `REQ1`,
 * `REQ2`… from the task's own list (`source` `task`) or the critic's first decision
 * (`critic`). Its evidence, as the critic wrote it, counts only when the record
 * confirms it (`confirmed_by`): a check that passed on the tree, a command the critic
 * ran that did not fail, a file and line in the snapshot.
 */
export const requirementStatusSchema = z.object({
  id: z.string(),
  text: z.string(),
  /** null: the critic did not say. */
  met: z.nullable(z.boolean()),
  evidence: z.string(),
  /** What in the record confirms the evidence (`check tests passed`, `` `npm test` ok ``, `src/a.js:3`); null: nothing does, it counts as none. */
  confirmed_by: z.nullable(z.string()),
});
export type RequirementStatus = z.infer<typeof requirementStatusSchema>;

/** Where the checklist came from: a list in the task's prompt, or the critic's first decision. */
export const REQUIREMENT_SOURCES = ['task', 'critic'] as const;
export type RequirementSource = (typeof REQUIREMENT_SOURCES)[number];

/** Whether a requirement holds for DONE: the critic says it is met, and the record confirms its evidence. */
export function requirementHolds(requirement: RequirementStatus): boolean {
  return requirement.met === true && requirement.confirmed_by !== null;
}

/** Where a requirement stands, in words: `evidence: check tests passed`, `unmet: …`, `not judged yet`, `no evidence the record confirms (said: …)`. */
export function requirementState(requirement: RequirementStatus): string {
  if (requirementHolds(requirement)) return `evidence: ${requirement.confirmed_by}`;
  if (requirement.met === false) return `unmet${requirement.evidence ? `: ${requirement.evidence}` : ''}`;
  if (requirement.met === null) return 'not judged yet';
  return `no evidence the record confirms${requirement.evidence ? ` (said: ${requirement.evidence})` : ''}`;
}

/** `[x] REQ1 text — evidence: check tests passed`, `[ ] REQ2 text — unmet: …`: one checklist line. */
export function requirementLine(requirement: RequirementStatus): string {
  return `[${requirementHolds(requirement) ? 'x' : ' '}] ${requirement.id} ${requirement.text} — ${requirementState(requirement)}`;
}
