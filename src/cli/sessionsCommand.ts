import { readEval, resolveEvalId } from '../eval/evalRecord.js';
import { evalsDir } from '../sessionFormat/evalRecords.js';
import { sessionsDir, sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { formatDuration, indent } from '../text/humanize.js';
import { jsonArrayBytes } from '../text/jsonBytes.js';
import { parseFilterInput } from '../sessions/sessionFilter.js';
import { diffIsSinceHead } from '../sessionFormat/sessionLines.js';
import { requirementLine } from '../sessionFormat/verification.js';
import type { Session } from '../sessions/sessionStore.js';
import { quoteHiddenCharactersInDiffNames, sanitizeForTerminal } from '../text/terminalText.js';
import { protectedChangeLine, refusalReasons, requirementsLines, stopReasonText } from '../sessionFormat/eventWording.js';
import type { ReviewRecord } from '../sessionFormat/reviewRecords.js';
import type { RunEvent } from '../sessionFormat/runEvents.js';
import type { IterationLine } from '../sessionFormat/sessionLines.js';
import type { SessionStats } from '../sessionFormat/sessionSummaries.js';
import { protectedStandingOf, refusalOf, standingNowOf } from '../sessionView/sessionViewBuilder.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';
import { openStore } from './openStore.js';
import { colorEnabled, paint, renderTable, writeWarning } from './terminal.js';
import { needsInputText } from '../sessionFormat/needsInput.js';
import { verifiedByText } from '../sessionFormat/testResults.js';
import { printAnswer } from './answers.js';

export interface ListOptions {
  outcome?: string[];
  after?: string;
  before?: string;
  search?: string;
  project?: string;
  actor?: string;
  critic?: string;
  json?: boolean;
  /** `--eval <id>`: only the sessions its record names (list only). */
  eval?: string;
}

export async function listCommand(options: ListOptions): Promise<number> {
  const ofEval = options.eval === undefined ? null : new Set((await readEval(evalsDir(), resolveEvalId(evalsDir(), options.eval))).sessionIds);
  const listed = (await openStore().listSessions(parseFilterInput(options))).filter((session) => !ofEval || ofEval.has(session.id));
  if (options.json) {
    // One summary a line, as the index keeps it: thousands of sessions are printed without parsing or decoding one.
    process.stdout.write(jsonArrayBytes(listed.map((session) => session.summaryBytes)));
    return 0;
  }
  const summaries = listed.map((session) => session.summary);
  if (summaries.length === 0) {
    process.stdout.write(`No sessions${hasFilter(options) ? ' match' : ` in ${sessionsDir()}`}.\n`);
    return 0;
  }
  const width = process.stdout.columns ?? 120;
  const rows = summaries.map((summary) => [
    summary.id,
    summary.outcome === 'success' && summary.verification === 'unverified' ? 'success (unverified)' : (summary.outcome ?? 'running/crashed'),
    String(summary.iterations),
    summary.duration_secs === null ? '—' : formatDuration(summary.duration_secs),
    summary.total_cost_usd === null ? '—' : `$${summary.total_cost_usd.toFixed(2)}`,
    summary.project,
    summary.prompt_preview,
  ]);
  process.stdout.write(renderTable(['ID', 'OUTCOME', 'ITER', 'DURATION', 'COST', 'PROJECT', 'PROMPT'], rows, Math.max(20, width - 98)));
  return 0;
}

function hasFilter(options: ListOptions): boolean {
  return Boolean(
    options.outcome?.length || options.after || options.before || options.search || options.project || options.actor || options.critic || options.eval,
  );
}

export async function showCommand(idOrPrefix: string, options: { json?: boolean }): Promise<number> {
  // Said once, with the session: not also while reading it, nor about other sessions while finding "latest".
  const store = openStore(() => {});
  const session = await store.load(await store.resolveId(idOrPrefix));
  if (options.json) {
    const { id, start, iterations, end } = session;
    printAnswer('sessions show', { id, start, iterations, end });
    for (const warning of session.warnings) writeWarning(warning);
    return 0;
  }
  process.stdout.write(renderSession(session, colorEnabled(process.stdout), await protectedJudgements(session.id)));
  return 0;
}

/** What the gate judged on each iteration, from the sidecar record: the refused DONEs, the protected changes, the requirements and the user's acceptances. */
async function protectedJudgements(sessionId: string): Promise<{ events: RunEvent[]; review: ReviewRecord[] }> {
  const sidecar = sidecarDirOf(sessionId);
  const keep = (event: RunEvent) => (event.type === 'protected_change' || event.type === 'done_refused' || event.type === 'requirements' ? event : undefined);
  return { events: await readSidecarEvents(sidecar, () => {}, keep), review: await readReviewRecords(sidecar, () => {}) };
}

/** Why the gate refused the iteration's DONE, and the protected changes that stood on its tree with where each stands now. */
function protectedLines(iteration: IterationLine, judged: { events: RunEvent[]; review: ReviewRecord[] }): string[] {
  const refused = refusalOf(iteration, judged.events);
  const standing = protectedStandingOf(iteration, judged.events).map(standingNowOf(judged.review));
  return [
    ...(refused ? [`  the critic said DONE; refused: ${refusalReasons(refused).join('; ') || 'by the gate'}`] : []),
    ...standing.map((each) => `  ${protectedChangeLine(each)}`),
  ];
}

/** `judged`: what the sidecar records of each iteration (without it, the unmet requirements and weakenings the session file keeps). */
export function renderSession(session: Session, color: boolean, judged: { events: RunEvent[]; review: ReviewRecord[] } = { events: [], review: [] }): string {
  const requirements = new Map(judged.events.flatMap((event) => (event.type === 'requirements' ? [[event.iteration, event] as const] : [])));
  // Everything recorded came from agents and users: no escape sequence reaches the terminal.
  const clean = sanitizeForTerminal;
  const { start, end } = session;
  const out: string[] = [];
  out.push(paint(`Session ${session.id}`, 'heading', color));
  out.push(`  started    ${clean(start.timestamp)}`);
  out.push(`  folder     ${clean(start.working_dir)}`);
  out.push(`  actor      ${clean(start.actor_agent)}${start.actor_model ? ` (${clean(start.actor_model)})` : ''}`);
  out.push(`  critic     ${clean(start.critic_agent)}${start.critic_model ? ` (${clean(start.critic_model)})` : ''}`);
  out.push(`  limit      ${start.max_iterations ?? 'none'}`);
  if (end) {
    const tone = end.outcome === 'success' ? 'success' : end.outcome === 'failed' ? 'error' : 'warning';
    const unverified =
      end.outcome === 'success' && end.verification === 'unverified' ? ' (unverified: no required check passed, the critic ran no command that succeeded)' : '';
    out.push(`  outcome    ${paint(end.outcome, tone, color)}${unverified} after ${end.iterations} iteration(s), ${formatDuration(end.duration_secs)}`);
    if (end.outcome === 'success' && end.verified_by) out.push(`  verified by ${clean(verifiedByText(end.verified_by))}`);
    if (end.stop_reason) out.push(`  stopped by ${clean(stopReasonText(end.stop_reason))}${end.error ? `: ${clean(end.error)}` : ''}`);
    else if (end.outcome === 'failed' && end.error) out.push(`  error      ${clean(end.error)}`);
    if (typeof end.total_cost_usd === 'number') out.push(`  cost       $${end.total_cost_usd.toFixed(2)}${end.cost_estimated ? ' (partly estimated)' : ''}`);
    if (end.confidence !== null) out.push(`  confidence ${Math.round(end.confidence * 100)}%`);
    // The original codeloops kept a failed session's error in its summary: said once, as the error.
    if (end.summary && end.summary !== end.error) out.push(`  summary    ${clean(end.summary)}`);
  } else {
    out.push(`  outcome    ${paint('none yet (running, or the runner stopped without ending it)', 'warning', color)}`);
  }
  out.push('', paint('Prompt', 'heading', color), indent(clean(start.prompt.trimEnd())), '');
  for (const iteration of session.iterations) {
    const tone = iteration.critic_decision === 'DONE' ? 'success' : iteration.critic_decision === 'ERROR' ? 'error' : 'warning';
    // A decision recorded in other words is shown as it was written too.
    const decision =
      iteration.critic_decision + (iteration.critic_decision_text !== undefined ? ` (recorded as "${clean(iteration.critic_decision_text)}")` : '');
    const files = diffIsSinceHead(iteration)
      ? `${iteration.git_files_changed} file(s) changed since HEAD (the original codeloops recorded the whole change, not the iteration's own)`
      : `${iteration.git_files_changed} file(s)${iteration.git_insertions !== undefined ? ` +${iteration.git_insertions} −${iteration.git_deletions ?? 0}` : ''}`;
    out.push(
      `${paint(`Iteration ${iteration.iteration_number}`, 'heading', color)}  ${paint(decision, tone, color)}  ` +
        `actor ${formatDuration(iteration.actor_duration_secs)}, exit ${iteration.actor_exit_code}, ${files}`,
    );
    // A question for the user is said as one, not as feedback to the actor.
    if (iteration.needs_input) out.push(indent(paint(clean(needsInputText(iteration.needs_input)), 'warning', color)));
    else if (iteration.feedback) out.push(indent(clean(iteration.feedback.trimEnd())));
    for (const issue of iteration.remaining_issues ?? []) out.push(`    - ${clean(issue)}`);
    const checklist = requirements.get(iteration.iteration_number);
    if (checklist) for (const line of requirementsLines(checklist)) out.push(`  ${clean(line.text)}`);
    else for (const unmet of iteration.unmet_requirements ?? []) out.push(`    ${clean(requirementLine(unmet))}`);
    if (iteration.critic_reverted_files?.length) out.push(`  (the critic's edits to ${clean(iteration.critic_reverted_files.join(', '))} were reverted)`);
    for (const line of protectedLines(iteration, judged)) out.push(paint(clean(line), 'warning', color));
    out.push('');
  }
  for (const warning of session.warnings) for (const line of clean(warning).split('\n')) out.push(paint(`warning: ${line}`, 'warning', color));
  return out.join('\n') + '\n';
}

export async function diffCommand(idOrPrefix: string, options: { iteration?: number }): Promise<number> {
  const store = openStore();
  const id = await store.resolveId(idOrPrefix);
  const diff = await store.recordedDiff(id, options.iteration);
  if (options.iteration !== undefined && diff.length > 0) {
    const session = await store.load(id);
    const iteration = session.iterations.find((line) => line.iteration_number === options.iteration);
    if (iteration && diffIsSinceHead(iteration)) {
      process.stderr.write(
        `note: iteration ${options.iteration}'s diff is the whole change since HEAD at that point, as the original codeloops recorded it; not the iteration's own.\n`,
      );
    }
  }
  if (diff.length === 0)
    process.stderr.write(options.iteration !== undefined ? `Iteration ${options.iteration} changed no files.\n` : 'The session changed no files.\n');
  else {
    // Names that hide characters are quoted as git quotes them, and the patch still applies.
    // Piped, the rest goes out byte for byte (it may be applied as a patch); on a terminal, without escape sequences.
    const quoted = quoteHiddenCharactersInDiffNames(diff);
    const text = process.stdout.isTTY ? sanitizeForTerminal(quoted) : quoted;
    process.stdout.write(text.endsWith('\n') ? text : text + '\n');
  }
  return 0;
}

export async function statsCommand(options: ListOptions): Promise<number> {
  const stats = await openStore().stats(parseFilterInput(options));
  if (options.json) {
    printAnswer('sessions stats', stats);
    return 0;
  }
  const percent = (value: number) => `${Math.round(value * 100)}%`;
  const lines = [
    `Sessions         ${stats.total_sessions}`,
    `Success rate     ${percent(stats.success_rate)}`,
    `Avg iterations   ${stats.avg_iterations.toFixed(1)}`,
    `Avg duration     ${formatDuration(stats.avg_duration_secs)}`,
    '',
    ...taskLines(stats),
    '',
    'By project',
    ...stats.by_project.map(
      (project) => `  ${project.project.padEnd(28)} ${String(project.total).padStart(5)}  ${percent(project.success_rate).padStart(4)} success`,
    ),
    '',
    'By actor and critic (tasks)',
    ...renderTable(
      ['ACTOR', 'CRITIC', 'TASKS', 'SUCCESS', 'FIRST TRY', 'VERIFIED', 'APPROVAL', 'REFUSED', 'COST/SUCCESS'],
      stats.by_agents.map((pair) => [
        pair.actor_agent,
        pair.critic_agent,
        String(pair.total_tasks),
        share(pair.task_success_rate),
        share(pair.first_try_success_rate),
        share(pair.verified_success_rate),
        share(pair.critic_approval_rate),
        share(pair.done_refused_rate),
        dollars(pair.cost_per_success_usd),
      ]),
      20,
    )
      .trimEnd()
      .split('\n')
      .map((line) => `  ${line}`),
    '',
    'Sessions per day',
    ...stats.sessions_over_time.slice(-30).map((day) => `  ${day.date}  ${String(day.count).padStart(4)}  ${'▇'.repeat(Math.min(60, day.count))}`),
  ];
  process.stdout.write(lines.map((line) => sanitizeForTerminal(line)).join('\n') + '\n');
  return 0;
}

/** A rate as a percentage; "—" when there was nothing to rate (null). */
const share = (value: number | null) => (value === null ? '—' : `${Math.round(value * 100)}%`);
const dollars = (value: number | null) => (value === null ? '—' : `$${value.toFixed(2)}`);
const mean = (value: number | null, digits = 1) => (value === null ? '—' : value.toFixed(digits));

/** The task figures, grouped as the web page groups them: tasks, the critic, cost. */
function taskLines(stats: SessionStats): string[] {
  return [
    'Tasks (a resumed session carries on its task)',
    `  tasks                     ${stats.total_tasks}`,
    `  success rate              ${share(stats.task_success_rate)}`,
    `  first-try success rate    ${share(stats.first_try_success_rate)}`,
    `  verified success rate     ${share(stats.verified_success_rate)}`,
    `  by the start's tests      ${share(stats.tests_verified_success_rate)}`,
    `  waste rate                ${share(stats.waste_rate)}`,
    `  avg iterations to success ${mean(stats.avg_iterations_to_success)}`,
    `  avg cycle time            ${stats.avg_cycle_time_secs === null ? '—' : formatDuration(stats.avg_cycle_time_secs)}`,
    '',
    'The critic',
    `  iterations                ${stats.total_iterations}`,
    `  approval rate             ${share(stats.critic_approval_rate)}`,
    `  DONE refused by the gate  ${share(stats.done_refused_rate)}`,
    `  improvement rate          ${share(stats.improvement_rate)}`,
    `  avg feedback length       ${stats.avg_feedback_length === null ? '—' : `${Math.round(stats.avg_feedback_length)} characters`}`,
    '',
    'Cost',
    `  total                     ${dollars(stats.total_cost_usd)}`,
    `  per successful task       ${dollars(stats.cost_per_success_usd)}`,
    `  tokens                    ${stats.total_tokens.toLocaleString('en-US')}`,
  ];
}

/** `codeloops sessions delete <id>`: the session's file, its record and its snapshots; never the user's files. */
export async function deleteCommand(idOrPrefix: string, options: { json?: boolean }): Promise<number> {
  const store = openStore();
  const id = await store.resolveId(idOrPrefix);
  // Loaded here, not with the module: git and the candidate records are start-up time every listing would pay.
  const { deleteSession } = await import('../sessions/deleteSession.js');
  const deleted = await deleteSession(store, id, sidecarDirOf(id));
  if (options.json) printAnswer('sessions delete', deleted);
  else {
    process.stdout.write(
      `Deleted session ${id} (its file, its record and ${deleted.snapshot_refs} snapshot ref${deleted.snapshot_refs === 1 ? '' : 's'}). Your files were not touched.\n`,
    );
    for (const warning of deleted.warnings) writeWarning(warning);
  }
  return 0;
}
