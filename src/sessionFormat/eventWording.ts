import { fileLocation, formatCount, formatDuration, indent } from '../text/humanize.js';
import { previewLine, takeTail } from '../text/truncate.js';
import type { AgentEvent, StreamDrift, Usage } from './agentEvents.js';
import { stageText } from './loopProgress.js';
import {
  evidenceText,
  protectedChangeText,
  protectedKindText,
  requirementHolds,
  requirementLine,
  type CriticEvidence,
  type RequirementSource,
  type RequirementStatus,
  type Verification,
} from './verification.js';
import { needsInputText, type NeedsInput } from './needsInput.js';
import type { Finding } from './reviewRecords.js';
import type { FileChange, NestedRepository, RunEvent, RunEventOf } from './runEvents.js';
import type { CriticDecisionKind, Outcome, StopReason } from './sessionLines.js';
import { testCountsText, testFindingText, verifiedByText, type TestCounts, type VerifiedBy } from './testResults.js';
import type { TimelineEntry } from './timelineEntries.js';

/**
 * The one wording of what a session records: run events as the CLI prints them and
 * the editor's log shows them (`describeEvent`), the replay's entries
 * (`describeTimelineEntry`), the viewer's notes and the viewer page's live panel.
 * Each thing is worded once, here, as a headline and detail lines; a surface adds
 * only layout (the replay's columns, the viewer's icons, `oneLine`). Here, in the
 * ground layer, because every surface must reach it, the web page too (it may
 * import only text/, sessionFormat/, sessionView/ and server/). No Node.
 */

export type LineTone = 'heading' | 'info' | 'agent' | 'success' | 'warning' | 'error' | 'muted';

export interface DescribedLine {
  text: string;
  tone: LineTone;
}

export interface DescribeOptions {
  /** Stream the agents' text as it arrives (off: only tool calls and verdicts). */
  showAgentText: boolean;
}

/** A run event as the lines a person reads as it happens; none for what the live log leaves out. */
export function describeEvent(event: RunEvent, options: DescribeOptions): DescribedLine[] {
  switch (event.type) {
    case 'run_started':
      return sessionOpeningLines({ ...event, resumed_from: event.resumed_from ?? null });
    case 'run_refused':
      return [{ text: `Could not start: ${event.message}`, tone: 'error' }];
    case 'iteration_started':
      return [{ text: `── Iteration ${event.iteration} ──`, tone: 'heading' }];
    case 'phase':
      // Only the agents' turns: the other steps are quick, and their results have lines of their own.
      return event.status === 'started' && (event.phase === 'actor' || event.phase === 'critic') ? [phaseLine({ ...event, duration_secs: null })] : [];
    case 'agent_event':
      return describeAgentEvent(event.role, event.event, options);
    case 'agent_finished':
      return agentRunLines({ ...event, ...usageFacts(event.usage) });
    case 'diff_captured':
      return diffLines(event);
    case 'critic_decision':
      return verdictLines(event);
    case 'check_finished':
      return checkLines(event);
    case 'worktree_prepared':
      return worktreeLines(event);
    case 'requirements':
      return requirementsLines(event);
    case 'test_baseline':
      return baselineLines({
        unavailable: event.unavailable,
        checks: event.checks.map((check) => ({ ...check, passing: check.passing.length, failing: check.failing.length })),
      });
    case 'test_oracle':
      return oracleLines(event);
    case 'run_finished':
      return outcomeLines({ ...event, duration_secs: event.total_duration_secs });
    // Left out as it happens: the steps' bookkeeping, and the critic's reverted edits (a warning says what they were).
    case 'snapshot':
    case 'spend':
    case 'iteration_finished':
    case 'critic_changes_reverted':
      return [];
    default:
      return [sharedLine(withKind(event))];
  }
}

/** A replay entry as lines: the same words as the live log where it has them. */
export function describeTimelineEntry(entry: TimelineEntry): DescribedLine[] {
  switch (entry.kind) {
    case 'session_started':
      return sessionOpeningLines(entry, entry.prompt);
    case 'resumed':
      return [resumedLine(entry.first_iteration)];
    case 'phase':
      return [phaseLine(entry)];
    case 'tool_call':
      return [{ text: toolCallText(entry.name, entry.input), tone: 'muted' }];
    case 'agent_finished':
      return agentRunLines({
        ...entry,
        // The replay keeps the tokens in and out, not those read from or written to a cache.
        tokens: (entry.input_tokens ?? 0) + (entry.output_tokens ?? 0),
        drift: entry.unknown_events === null ? undefined : { unknownEvents: entry.unknown_events, unknownFields: entry.unknown_fields ?? 0 },
      });
    case 'diff':
      return diffLines(entry);
    case 'verdict':
      return verdictLines(entry);
    case 'check':
      return checkLines(entry);
    case 'worktree_prepared':
      return worktreeLines({ ...entry, setup: setupOfEntry(entry) });
    case 'requirements':
      return requirementsLines(entry);
    case 'test_baseline':
      return baselineLines(entry);
    case 'test_oracle':
      return oracleLines(entry);
    case 'session_ended':
      return outcomeLines({ ...entry, status: entry.outcome, total_tokens: entry.total_tokens ?? 0 });
    case 'critic_changes_reverted':
      return [{ text: `the critic's edits were reverted: ${entry.paths.join(', ')}`, tone: 'warning' }];
    case 'finding':
    case 'resolved':
    case 'comment':
    case 'hunk_rejected':
    case 'rejection_undone':
    case 'staged':
      return reviewLines(entry);
    default:
      return [sharedLine(entry)];
  }
}

/**
 * Lines as one, for a surface that gives each thing a line (the replay, the viewer's
 * notes): the headline, then a preview of the details after a dash.
 */
export function oneLine(lines: readonly DescribedLine[]): string {
  const [headline, ...details] = lines;
  const rest = details.map((line) => line.text.trim()).filter(Boolean);
  const first = (headline?.text ?? '').replace(/\s+/g, ' ').trim();
  return rest.length === 0 ? first : `${first} — ${previewLine(rest.join(' · '), 120)}`;
}

/** `→ Bash: npm test`: an agent's tool call. */
export function toolCallText(name: string, summary: string): string {
  return `→ ${name}${summary ? `: ${summary}` : ''}`;
}

/** `the required check npm test fails`, `the required checks lint, test fail`: why the gate refused a DONE. */
export function failingRequiredChecksText(names: readonly string[]): string {
  return names.length === 1 ? `the required check ${names[0]} fails` : `the required checks ${names.join(', ')} fail`;
}

/** A later run of the session carried it on (`codeloops resume` in the same file). */
export function resumedLine(firstIteration: number): DescribedLine {
  return { text: `resumed at iteration ${firstIteration}`, tone: 'heading' };
}

/** `F2.1 src/a.ts:42-44 (error) message`: a finding on one line. */
export function findingLine(finding: Pick<Finding, 'id' | 'file' | 'line' | 'end_line' | 'severity' | 'message'>): string {
  const where = finding.file ? ` ${fileLocation(finding.file, finding.line, finding.end_line)}` : '';
  return `${finding.id}${where} (${finding.severity}) ${finding.message}`;
}

// ── what both the live events and the replay's entries hold, under the same name ──

/** The records worded in one line, whose fields are the same in a run event and a replay entry. */
type SharedFact =
  | ({ kind: 'rollback' } & Pick<RunEventOf<'rollback'>, 'to_iteration' | 'restored' | 'removed'>)
  | ({ kind: 'rollback_undone' } & Pick<RunEventOf<'rollback_undone'>, 'rollback' | 'restored' | 'removed'>)
  | ({ kind: 'applied' } & Pick<RunEventOf<'applied'>, 'target_dir' | 'restored' | 'removed'>)
  | ({ kind: 'apply_undone' } & Pick<RunEventOf<'apply_undone'>, 'apply' | 'restored' | 'removed'>)
  | ({ kind: 'imported' } & Pick<RunEventOf<'imported'>, 'bundle' | 'from_working_dir'>)
  | ({ kind: 'stall' } & Pick<RunEventOf<'stall'>, 'action' | 'reason'>)
  | ({ kind: 'agent_waiting' } & AgentWaiting)
  | ({ kind: 'warning' } & Pick<RunEventOf<'warning'>, 'message'>)
  | ({ kind: 'done_refused' } & Pick<RunEventOf<'done_refused'>, 'failed_checks' | 'failed_tests' | 'protected_changes' | 'unverified' | 'unmet_requirements'>)
  | ({ kind: 'protected_change' } & Pick<RunEventOf<'protected_change'>, 'change' | 'status' | 'reason'>)
  | { kind: 'nested_repositories_appeared'; repositories: readonly NestedRepository[] }
  | { kind: 'review_delivered' | 'review_claimed'; ids: readonly string[] }
  | { kind: 'review_paused'; iteration: number | null; needs_input?: NeedsInput }
  | ({ kind: 'needs_input' } & NeedsInput)
  | ({ kind: 'needs_input_answered' } & Pick<RunEventOf<'needs_input_answered'>, 'answer'>)
  | ({ kind: 'review_resumed' } & Pick<RunEventOf<'review_resumed'>, 'action'>);

/** A run event under its replay entry's discriminant: their other fields have the same names. */
type WithKind<E> = E extends { type: infer T } ? E & { kind: T } : never;
function withKind<E extends { type: SharedFact['kind'] }>(event: E): WithKind<E> {
  return { ...event, kind: event.type } as WithKind<E>;
}

function sharedLine(fact: SharedFact): DescribedLine {
  switch (fact.kind) {
    case 'rollback':
      return { text: `rolled back to before iteration ${fact.to_iteration}: ${pathCount(fact)} restored`, tone: 'warning' };
    case 'rollback_undone':
      return { text: `rollback ${fact.rollback} undone: ${pathCount(fact)} put back`, tone: 'warning' };
    case 'applied':
      return { text: `applied to ${fact.target_dir}: ${pathCount(fact)} written`, tone: 'success' };
    case 'apply_undone':
      return { text: `apply ${fact.apply} undone: ${pathCount(fact)} put back`, tone: 'warning' };
    case 'imported':
      return { text: `imported from ${fact.bundle} (it ran in ${fact.from_working_dir})`, tone: 'muted' };
    case 'stall':
      return {
        text: fact.action === 'nudge' ? `going in circles: ${fact.reason}; telling the actor to change approach` : `going in circles: ${fact.reason}`,
        tone: 'warning',
      };
    case 'agent_waiting':
      return { text: agentWaitingText(fact), tone: 'warning' };
    case 'warning':
      return { text: `warning: ${fact.message}`, tone: 'warning' };
    case 'done_refused':
      return { text: `DONE refused: ${refusalReasons(fact).join('; ')}`, tone: 'warning' };
    case 'protected_change':
      return { text: protectedChangeLine(fact), tone: fact.status === 'weakening' ? 'warning' : 'muted' };
    case 'nested_repositories_appeared':
      return { text: nestedRepositoriesText(fact.repositories), tone: 'warning' };
    case 'review_delivered':
      return { text: `review items for the actor: ${fact.ids.join(', ')}`, tone: 'muted' };
    case 'review_claimed':
      return { text: `the actor says it addressed ${fact.ids.join(', ')}`, tone: 'muted' };
    case 'review_paused':
      return fact.needs_input
        ? { text: `paused after iteration ${fact.iteration} until you answer`, tone: 'warning' }
        : { text: `paused for review after iteration ${fact.iteration}: comment, reject hunks, then continue`, tone: 'warning' };
    case 'needs_input':
      return { text: needsInputText(fact), tone: 'warning' };
    case 'needs_input_answered':
      return { text: `you answered: ${fact.answer}`, tone: 'info' };
    case 'review_resumed':
      // Said after a review and after a question alike: the event does not tell them apart.
      return { text: fact.action === 'continue' ? 'carrying on' : 'stopping the loop', tone: 'info' };
  }
}

export type AgentWaiting = Pick<RunEventOf<'agent_waiting'>, 'agent' | 'reason' | 'until'>;

/**
 * What the loop waits for, with the time it carries on in the reader's local time:
 * `waiting for the Claude Code usage limit to reset at 15:00`. The live log, the
 * replay, the viewer and the editor's status bar all say it so.
 */
export function agentWaitingText(wait: AgentWaiting): string {
  const at = clockTime(wait.until);
  switch (wait.reason) {
    case 'usage_limit':
      return `waiting for the ${wait.agent} usage limit to reset at ${at}`;
    case 'rate_limited':
      return `${wait.agent} is rate-limited: waiting until ${at} to try again`;
    case 'overloaded':
      return `${wait.agent}'s API is overloaded: waiting until ${at} to try again`;
    case 'outage':
      return `${wait.agent}'s API could not be reached: waiting until ${at} to try again`;
  }
}

/** `15:00` in the local time zone; with the date when it is not today (`27 Nov 15:00`). */
function clockTime(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const time = at.toLocaleTimeString('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  return at.toDateString() === new Date().toDateString() ? time : `${at.toLocaleDateString('en-GB', { day: 'numeric', month: 'short' })} ${time}`;
}

/** Why the gate refused a DONE, a reason each: the live log's, the replay's and the viewer's words. */
export function refusalReasons(
  refusal: Pick<RunEventOf<'done_refused'>, 'failed_checks' | 'protected_changes' | 'unverified' | 'unmet_requirements'> & { failed_tests?: readonly string[] },
): string[] {
  const reasons: string[] = [];
  const checks = refusal.failed_checks;
  if (checks.length > 0) reasons.push(failingRequiredChecksText(checks));
  const tests = refusal.failed_tests ?? [];
  if (tests.length > 0)
    reasons.push(
      `the start's tests do not all pass on the final code (${tests.slice(0, 5).join(', ')}${tests.length > 5 ? `, and ${tests.length - 5} more` : ''})`,
    );
  const weakened = refusal.protected_changes ?? [];
  if (weakened.length > 0)
    reasons.push(`what the checks rest on was weakened (${weakened.map((change) => `${change.file}: ${protectedKindText(change.kind)}`).join(', ')})`);
  if (refusal.unverified === 'no_change') reasons.push('nothing changed since the loop started, and nothing showed that no change is needed');
  if (refusal.unverified === 'no_evidence') reasons.push('nothing verified it (no passing check, no command the critic ran)');
  const unmet = refusal.unmet_requirements ?? [];
  if (unmet.length > 0) reasons.push(`${unmet.join(', ')} ${unmet.length === 1 ? 'is' : 'are'} unmet or without evidence`);
  return reasons;
}

/** A protected change and where it stands, as the live log, the replay and `sessions show` say it. */
export function protectedChangeLine(fact: Pick<RunEventOf<'protected_change'>, 'change' | 'status' | 'reason'>): string {
  return `protected: ${protectedChangeText(fact.change)}; ${protectedStandingText(fact)}`;
}

/** Where a protected change stands: it refuses DONE, the user accepted it (and why), or `allow_test_changes` allows it. */
export function protectedStandingText(fact: Pick<RunEventOf<'protected_change'>, 'status' | 'reason'>): string {
  return {
    weakening: 'refuses DONE until restored or accepted',
    accepted: `accepted by you${fact.reason ? `: ${fact.reason}` : ''}`,
    allowed: 'allowed (allow_test_changes)',
    hint: "a hint: the start's tests on the final code judge it",
  }[fact.status];
}

/**
 * The checklist: `requirements (from the task): 2 of 3 met with evidence`, then a line
 * for each, `[x] REQ1 … — evidence: check tests passed`, `[ ] REQ3 … — unmet: …`.
 */
export function requirementsLines(judged: { source: RequirementSource; requirements: readonly RequirementStatus[] }): DescribedLine[] {
  const held = judged.requirements.filter(requirementHolds).length;
  const from = judged.source === 'task' ? 'from the task' : 'listed by the critic';
  return [
    {
      text: `requirements (${from}): ${held} of ${judged.requirements.length} met with evidence`,
      tone: held === judged.requirements.length ? 'success' : 'warning',
    },
    ...judged.requirements.map((requirement) => ({
      text: `  ${requirementLine(requirement)}`,
      tone: requirementHolds(requirement) ? ('muted' as const) : ('warning' as const),
    })),
  ];
}

function nestedRepositoriesText(repositories: readonly NestedRepository[]): string {
  return (
    `${repositories.length === 1 ? 'a folder became a nested git repository' : 'folders became nested git repositories'} ` +
    `(a .git folder or file), whose files no diff shows and rollback leaves alone; the critic is told: ` +
    repositories.map((nested) => `${nested.path}/${nested.commit === null ? ' (no commit yet)' : ''}`).join(', ')
  );
}

function sessionOpeningLines(
  start: {
    session_id: string;
    resumed_from: string | null;
    actor_agent: string;
    actor_model: string | null;
    critic_agent: string;
    critic_model: string | null;
    max_iterations: number | null;
    working_dir: string;
  },
  prompt?: string,
): DescribedLine[] {
  const limit = start.max_iterations === null ? 'no iteration limit' : `max ${start.max_iterations} iterations`;
  return [
    { text: `Session ${start.session_id}${start.resumed_from ? ` (resuming ${start.resumed_from})` : ''}`, tone: 'heading' },
    ...(prompt === undefined ? [] : [{ text: indent(prompt), tone: 'agent' as const }]),
    {
      text: `actor ${agentLabel(start.actor_agent, start.actor_model)} · critic ${agentLabel(start.critic_agent, start.critic_model)} · ${limit}`,
      tone: 'muted',
    },
    { text: `in ${start.working_dir}`, tone: 'muted' },
  ];
}

function phaseLine(phase: { phase: RunEventOf<'phase'>['phase']; status: 'started' | 'finished'; duration_secs: number | null }): DescribedLine {
  if (phase.status === 'started' && phase.phase === 'actor') return { text: 'actor working…', tone: 'info' };
  if (phase.status === 'started' && phase.phase === 'critic') return { text: 'critic reviewing…', tone: 'info' };
  return { text: `${stageText(phase.phase)} ${phase.status}${phase.duration_secs === null ? '' : ` (${formatDuration(phase.duration_secs)})`}`, tone: 'muted' };
}

function describeAgentEvent(role: 'actor' | 'critic', event: AgentEvent, options: DescribeOptions): DescribedLine[] {
  switch (event.kind) {
    case 'text':
      return options.showAgentText && role === 'actor' && event.text.trim() ? [{ text: indent(event.text), tone: 'agent' }] : [];
    case 'tool_use':
      return [{ text: `  ${toolCallText(event.name, event.summary)}`, tone: 'muted' }];
    case 'tool_result':
      return event.isError ? [{ text: `    ✗ ${event.summary}`, tone: 'warning' }] : [];
    case 'error':
      return [{ text: `  ${role} error: ${event.message}`, tone: 'error' }];
    default:
      return [];
  }
}

interface AgentRunFacts {
  role: 'actor' | 'critic';
  interrupted: boolean;
  succeeded: boolean;
  duration_secs: number;
  exit_code: number;
  failure_reason: string | null;
  cost_usd: number | null;
  tokens: number;
  drift?: Pick<StreamDrift, 'unknownEvents' | 'unknownFields'> & { examples?: string[] };
}

function agentRunLines(run: AgentRunFacts): DescribedLine[] {
  if (run.interrupted) return [{ text: `${run.role} stopped (interrupted)`, tone: 'warning' }];
  const facts = [
    formatDuration(run.duration_secs),
    `exit ${run.exit_code}`,
    ...(run.cost_usd === null ? [] : [`$${run.cost_usd.toFixed(4)}`]),
    ...(run.tokens > 0 ? [`${formatCount(run.tokens)} tokens`] : []),
  ];
  const drift = driftLine(run.role, run.drift);
  if (!run.succeeded) return [{ text: `${run.role} failed after ${facts.join(', ')}: ${run.failure_reason ?? 'unknown failure'}`, tone: 'error' }, ...drift];
  return [{ text: `${run.role} finished in ${facts.join(', ')}`, tone: 'muted' }, ...drift];
}

function usageFacts(usage: Usage | null): { cost_usd: number | null; tokens: number } {
  return {
    cost_usd: usage?.costUsd ?? null,
    tokens: (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0) + (usage?.cacheReadTokens ?? 0) + (usage?.cacheWriteTokens ?? 0),
  };
}

/** A word about what the agent's stream held that its adapter does not know: harmless, but a sign its CLI changed. */
function driftLine(role: string, drift: AgentRunFacts['drift']): DescribedLine[] {
  if (!drift || drift.unknownEvents + drift.unknownFields === 0) return [];
  const counts = [
    drift.unknownEvents > 0 ? `${drift.unknownEvents} unknown event${drift.unknownEvents === 1 ? '' : 's'}` : '',
    drift.unknownFields > 0 ? `${drift.unknownFields} unknown field${drift.unknownFields === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  const examples = drift.examples === undefined ? '' : ` (${drift.examples.join(', ')})`;
  return [
    {
      text: `${role}: its output held ${counts.join(' and ')}${examples}, ignored; its CLI may be a version codeloops was not tested with (codeloops doctor)`,
      tone: 'muted',
    },
  ];
}

function diffLines(diff: {
  files_changed: number;
  insertions: number | null;
  deletions: number | null;
  files: readonly FileChange[] | null;
  /** The original codeloops recorded the whole change since HEAD, not the iteration's own. */
  since_head?: boolean;
}): DescribedLine[] {
  if (diff.files_changed === 0) return [{ text: 'diff: no files changed', tone: 'info' }];
  const since = diff.since_head ? ' since HEAD (recorded whole by the original codeloops, not the iteration’s own)' : '';
  const lines = diff.insertions === null ? '' : `, +${diff.insertions} −${diff.deletions ?? 0}`;
  const files = (diff.files ?? []).slice(0, 8).map((file) => `${statusMark(file.status)} ${file.oldPath ? `${file.oldPath} → ` : ''}${file.path}`);
  const more = diff.files && diff.files.length > 8 ? [`  … ${diff.files.length - 8} more`] : [];
  return [
    { text: `diff: ${diff.files_changed} file${diff.files_changed === 1 ? '' : 's'} changed${since}${lines}`, tone: 'info' },
    ...[...files, ...more].map((text) => ({ text: `  ${text}`, tone: 'muted' as const })),
  ];
}

function verdictLines(verdict: {
  decision: CriticDecisionKind;
  confidence: number | null;
  summary: string | null;
  feedback: string | null;
  remaining_issues: readonly string[];
  findings?: readonly Finding[];
  resolved?: readonly string[];
  /** The decision as another writer wrote it, in other words. */
  decision_text?: string | null;
  evidence?: CriticEvidence;
}): DescribedLine[] {
  const lines: DescribedLine[] = [];
  const recorded = verdict.decision_text ? ` (recorded as "${verdict.decision_text}")` : '';
  if (verdict.decision === 'DONE') {
    const confidence = verdict.confidence === null ? '' : ` (confidence ${Math.round(verdict.confidence * 100)}%)`;
    lines.push({ text: `critic: DONE${confidence}${recorded}`, tone: 'success' });
    if (verdict.summary) lines.push({ text: indent(verdict.summary), tone: 'agent' });
  } else {
    lines.push({ text: `critic: ${verdict.decision}${recorded}`, tone: verdict.decision === 'ERROR' ? 'error' : 'warning' });
    if (verdict.feedback) lines.push({ text: indent(verdict.feedback), tone: 'agent' });
    for (const issue of verdict.remaining_issues) lines.push({ text: `  - ${issue}`, tone: 'agent' });
  }
  for (const finding of verdict.findings ?? []) lines.push({ text: `  ${findingLine(finding)}`, tone: finding.severity === 'error' ? 'warning' : 'muted' });
  if (verdict.resolved?.length) lines.push({ text: `  resolved: ${verdict.resolved.join(', ')}`, tone: 'muted' });
  const evidence = verdict.evidence ? evidenceText(verdict.evidence) : null;
  if (evidence) lines.push({ text: `  ${evidence}`, tone: 'muted' });
  return lines;
}

/** How a command the loop ran went: a check, or a worktree's setup. */
interface CommandRun {
  passed: boolean;
  timed_out: boolean;
  exit_code: number | null;
  duration_secs: number;
}

function checkLines(
  check: CommandRun & {
    name: string;
    command: string;
    required: boolean;
    output?: string;
    when?: 'each' | 'done';
    hidden?: boolean;
    isolated?: boolean;
    tests?: TestCounts;
  },
): DescribedLine[] {
  const outcome = check.passed
    ? `passed in ${formatDuration(check.duration_secs)}`
    : check.timed_out
      ? `timed out after ${formatDuration(check.duration_secs)}`
      : `failed (exit ${check.exit_code ?? 'by a signal'}) in ${formatDuration(check.duration_secs)}`;
  const line: DescribedLine = {
    text: `check ${check.name}${checkTraitsText(check)}: ${outcome}${check.tests ? ` (${testCountsText(check.tests)})` : ''}${check.required ? '' : ' (advisory)'}`,
    tone: check.passed ? 'muted' : check.required ? 'error' : 'warning',
  };
  // An acceptance check's command is named nowhere the agents read: the user reads it here (the live log, the replay).
  const lines = check.hidden ? [line, { text: `  $ ${check.command}`, tone: 'muted' as const }] : [line];
  // The end of a failed check's output: what a user would scroll to.
  return check.passed || check.output === undefined ? lines : [...lines, { text: indent(takeTail(check.output.trim(), 1_500)), tone: 'agent' }];
}

/** The start's tests, as the baseline found them: what the oracle will hold the final code to, or why there is none. */
function baselineLines(baseline: Pick<Extract<TimelineEntry, { kind: 'test_baseline' }>, 'checks' | 'unavailable'>): DescribedLine[] {
  if (baseline.unavailable !== null) return [{ text: `no baseline of the start's tests: ${baseline.unavailable}`, tone: 'muted' }];
  const held = baseline.checks.map(
    (check) => `${check.name} (${check.runner}): ${check.passing} of ${check.tests.collected} passing${check.failing > 0 ? `, ${check.failing} failing` : ''}`,
  );
  return [{ text: `baseline of the start's tests: ${held.join('; ')}`, tone: 'muted' }];
}

/** The oracle's verdict: the start's tests on the final code, each one wanting named. */
function oracleLines(oracle: Pick<Extract<RunEvent, { type: 'test_oracle' }>, 'passed' | 'baseline' | 'findings' | 'accepted' | 'flaky'>): DescribedLine[] {
  const flaky = oracle.flaky.length > 0 ? `; ${oracle.flaky.length} flaky left out` : '';
  const head: DescribedLine = {
    text: `the start's tests on the final code: ${oracle.passed} of ${oracle.baseline} pass${flaky}`,
    tone: oracle.findings.length > 0 ? 'error' : 'success',
  };
  const wanting = oracle.findings.slice(0, 20).map((finding) => ({ text: `  ✗ ${testFindingText(finding)}`, tone: 'error' as const }));
  const more = oracle.findings.length > 20 ? [{ text: `  … and ${oracle.findings.length - 20} more`, tone: 'error' as const }] : [];
  const accepted = oracle.accepted.slice(0, 20).map((each) => ({
    text: `  ${testFindingText(each.finding)}: accepted (${each.by === 'user' ? `by you${each.reason ? `: ${each.reason}` : ''}` : '--allow-test-changes'})`,
    tone: 'muted' as const,
  }));
  return [head, ...wanting, ...more, ...accepted];
}

/** How a check ran, when not as every check does: ` (acceptance, at DONE, in a clean worktree)`. */
function checkTraitsText(check: { when?: 'each' | 'done'; hidden?: boolean; isolated?: boolean }): string {
  const traits = [
    check.hidden ? 'acceptance: hidden from the agents' : '',
    check.when === 'done' ? 'at DONE' : '',
    check.isolated ? 'in a clean worktree' : '',
  ];
  const said = traits.filter(Boolean);
  return said.length > 0 ? ` (${said.join(', ')})` : '';
}

function worktreeLines(prepared: {
  worktree: string;
  copied: readonly string[];
  not_found: readonly string[];
  setup: (CommandRun & { command: string; output: string }) | null;
}): DescribedLine[] {
  const lines: DescribedLine[] = [{ text: `worktree ${prepared.worktree}`, tone: 'muted' }];
  if (prepared.copied.length > 0) lines.push({ text: `copied in ${prepared.copied.join(', ')}`, tone: 'muted' });
  if (prepared.not_found.length > 0) lines.push({ text: `not in your tree, not copied: ${prepared.not_found.join(', ')}`, tone: 'muted' });
  const setup = prepared.setup;
  if (setup) {
    const how = setup.passed
      ? `passed in ${formatDuration(setup.duration_secs)}`
      : setup.timed_out
        ? `timed out after ${formatDuration(setup.duration_secs)}`
        : `failed (exit ${setup.exit_code ?? 'by a signal'})`;
    lines.push({ text: `setup \`${setup.command}\` ${how}`, tone: setup.passed ? 'info' : 'error' });
    if (!setup.passed && setup.output.trim()) lines.push({ text: indent(takeTail(setup.output.trim(), 1_500)), tone: 'muted' });
  }
  return lines;
}

/** A replay entry keeps the setup's facts but not its output, nor whether it timed out. */
function setupOfEntry(entry: Extract<TimelineEntry, { kind: 'worktree_prepared' }>): Parameters<typeof worktreeLines>[0]['setup'] {
  if (entry.setup_command === null) return null;
  return {
    command: entry.setup_command,
    passed: entry.setup_passed ?? false,
    timed_out: false,
    exit_code: entry.setup_exit_code,
    duration_secs: entry.setup_duration_secs ?? 0,
    output: '',
  };
}

const STOP_REASON_WORDS: Readonly<Record<StopReason, string>> = {
  budget_cost: 'its cost budget',
  budget_tokens: 'its token budget',
  duration: 'its time budget',
  stalled: 'stall detection (it went in circles)',
  needs_input: 'a question only you can answer',
  usage_limit: "an agent's usage limit, which would not reset within the wait allowed",
};

/** What stopped a loop (`session_end.stop_reason`), in words: `its cost budget`; a reason this runner does not know (a newer writer's), as written. */
export function stopReasonText(reason: string): string {
  return Object.hasOwn(STOP_REASON_WORDS, reason) ? STOP_REASON_WORDS[reason as StopReason] : reason;
}

function outcomeLines(end: {
  status: Outcome;
  iterations: number;
  duration_secs: number;
  error: string | null;
  total_cost_usd: number | null;
  total_tokens: number;
  cost_estimated?: boolean;
  session_file?: string;
  verification?: Verification | null;
  verified_by?: VerifiedBy | null;
  stop_reason?: string | null;
}): DescribedLine[] {
  const after = `after ${end.iterations} iteration${end.iterations === 1 ? '' : 's'} (${formatDuration(end.duration_secs)})`;
  const headlines: Readonly<Record<Outcome, DescribedLine>> = {
    success:
      end.verification === 'unverified'
        ? { text: `✓ Done ${after}, unverified: no required check passed and the critic ran no command that succeeded`, tone: 'warning' }
        : { text: `✓ Done ${after}`, tone: 'success' },
    max_iterations_reached: { text: `■ Stopped at the iteration limit ${after}`, tone: 'warning' },
    interrupted: { text: `■ Interrupted ${after}`, tone: 'warning' },
    failed:
      end.stop_reason === 'needs_input'
        ? { text: `✗ Failed ${after}: it needs your answer, and nobody could give it here: ${end.error ?? ''}`, tone: 'error' }
        : { text: `✗ Failed ${after}: ${end.error ?? 'unknown error'}`, tone: 'error' },
  };
  const lines = [headlines[end.status]];
  // What the DONE rests on: the start's tests, or an exit code only, said as plainly as the outcome.
  if (end.status === 'success' && end.verified_by && end.verification !== 'unverified')
    lines.push({ text: `verified by ${verifiedByText(end.verified_by)}`, tone: 'muted' });
  if (end.total_cost_usd !== null || end.total_tokens > 0) {
    const cost = end.total_cost_usd === null ? '' : `$${end.total_cost_usd.toFixed(2)}${end.cost_estimated ? ' (partly estimated)' : ''}, `;
    lines.push({ text: `used ${cost}${formatCount(end.total_tokens)} tokens`, tone: 'muted' });
  }
  if (end.session_file !== undefined) lines.push({ text: `session: ${end.session_file}`, tone: 'muted' });
  return lines;
}

// ── what the user did in review (only the replay shows it) ──

type ReviewEntry = Extract<TimelineEntry, { kind: 'finding' | 'resolved' | 'comment' | 'hunk_rejected' | 'rejection_undone' | 'staged' }>;

function reviewLines(entry: ReviewEntry): DescribedLine[] {
  switch (entry.kind) {
    case 'finding':
      return [{ text: findingLine(entry), tone: entry.severity === 'error' ? 'warning' : 'muted' }];
    case 'resolved': {
      const what = entry.by === 'critic' ? 'resolved' : entry.reopened ? 'opened again by you' : 'resolved by you';
      return [{ text: `${what}: ${entry.ids.join(', ')}`, tone: 'muted' }];
    }
    case 'comment':
      return [
        { text: `your comment ${entry.id}${entry.file ? ` on ${fileLocation(entry.file, entry.line, entry.end_line)}` : ''}`, tone: 'info' },
        { text: indent(entry.text), tone: 'agent' },
      ];
    case 'hunk_rejected':
      return [
        { text: `you rejected hunk ${entry.hunk} of ${entry.file} (${entry.id})`, tone: 'warning' },
        ...(entry.reason ? [{ text: indent(entry.reason), tone: 'agent' as const }] : []),
      ];
    case 'rejection_undone':
      return [{ text: `${entry.id} undone: the hunk is back`, tone: 'muted' }];
    case 'staged':
      return [
        { text: `staged ${entry.iteration === null ? "the session's" : `iteration ${entry.iteration}'s`} changes`, tone: 'muted' },
        { text: `  ${entry.files.join(', ')}`, tone: 'muted' },
      ];
  }
}

function agentLabel(agent: string, model: string | null): string {
  return model ? `${agent} (${model})` : agent;
}

function statusMark(status: FileChange['status']): string {
  return { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', type_changed: 'T' }[status] ?? '?';
}

function pathCount(move: { restored: readonly string[]; removed: readonly string[] }): string {
  const count = move.restored.length + move.removed.length;
  return `${count} file${count === 1 ? '' : 's'}`;
}
