import { buildTimeline } from '../replay/timeline.js';
import type { TimelineEntry } from '../sessionFormat/timelineEntries.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';
import { fileLocation, formatDuration } from '../text/humanize.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { previewLine } from '../text/truncate.js';
import { openStore, writeWarning } from './sessionsCommand.js';
import { colorEnabled, paint } from './terminal.js';
import type { LineTone } from '../loop/describeEvent.js';

/** `codeloops sessions replay <id> [--json]`: the session's timeline, as text or one JSON entry a line. */
export async function replayCommand(idOrPrefix: string, options: { json?: boolean }): Promise<number> {
  const store = openStore();
  const session = await store.load(await store.resolveId(idOrPrefix));
  const timeline = buildTimeline(
    session,
    await readSidecarEvents(sidecarDirOf(session.id), writeWarning),
    await readReviewRecords(sidecarDirOf(session.id), writeWarning),
  );
  if (options.json) {
    process.stdout.write(timeline.map((entry) => JSON.stringify(entry)).join('\n') + '\n');
    return 0;
  }
  const color = colorEnabled(process.stdout);
  const lines = timeline.map((entry) => {
    const [text, tone] = describeEntry(entry);
    const offset = entry.offset_secs === null ? '' : `+${formatDuration(entry.offset_secs)}`;
    const iteration = entry.iteration === null ? '' : `it ${entry.iteration}`;
    return `${offset.padStart(9)}  ${iteration.padEnd(6)} ${paint(sanitizeForTerminal(text), tone, color)}`;
  });
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}

function describeEntry(entry: TimelineEntry): [string, LineTone] {
  switch (entry.kind) {
    case 'session_started':
      return [
        `session ${entry.session_id} started${entry.resumed_from ? ` (carrying on ${entry.resumed_from})` : ''}: ${previewLine(entry.prompt, 80)}`,
        'heading',
      ];
    case 'resumed':
      return [`resumed at iteration ${entry.first_iteration}`, 'heading'];
    case 'phase':
      return [`${entry.phase.replace('_', ' ')} ${entry.status}${entry.duration_secs === null ? '' : ` (${formatDuration(entry.duration_secs)})`}`, 'muted'];
    case 'tool_call':
      return [`${entry.role} → ${entry.name} ${previewLine(entry.input, 100)}`, 'info'];
    case 'agent_finished': {
      const facts = [`exit ${entry.exit_code}`, formatDuration(entry.duration_secs)];
      if (entry.input_tokens !== null || entry.output_tokens !== null) facts.push(`${entry.input_tokens ?? 0} in / ${entry.output_tokens ?? 0} out tokens`);
      if (entry.cost_usd !== null) facts.push(`$${entry.cost_usd.toFixed(4)}`);
      if (entry.tool_calls) facts.push(`${entry.tool_calls} tool call${entry.tool_calls === 1 ? '' : 's'}`);
      if (entry.unknown_events || entry.unknown_fields)
        facts.push(`${(entry.unknown_events ?? 0) + (entry.unknown_fields ?? 0)} unknown event(s) or field(s) ignored`);
      const state = entry.interrupted
        ? 'interrupted'
        : entry.timed_out
          ? 'timed out'
          : entry.succeeded
            ? 'finished'
            : `failed: ${entry.failure_reason ?? 'unknown'}`;
      return [`${entry.role} ${state} (${facts.join(', ')})`, entry.succeeded ? 'muted' : 'warning'];
    }
    case 'diff':
      return [
        `diff: ${entry.files_changed} file${entry.files_changed === 1 ? '' : 's'}${entry.since_head ? ' changed since HEAD (recorded whole by the original codeloops, not the iteration’s own)' : ''}${entry.insertions === null ? '' : ` +${entry.insertions} −${entry.deletions ?? 0}`}${entry.files ? `: ${previewLine(entry.files.map((file) => file.path).join(', '), 100)}` : ''}`,
        'info',
      ];
    case 'verdict':
      return [
        `critic: ${entry.decision}${entry.decision_text === null ? '' : ` (recorded as "${entry.decision_text}")`}${entry.feedback ? ` — ${previewLine(entry.feedback, 120)}` : entry.summary ? ` — ${previewLine(entry.summary, 120)}` : ''}`,
        entry.decision === 'DONE' ? 'success' : entry.decision === 'ERROR' ? 'error' : 'warning',
      ];
    case 'critic_changes_reverted':
      return [`the critic's edits were reverted: ${entry.paths.join(', ')}`, 'warning'];
    case 'nested_repositories_appeared':
      return [
        `nested repositories appeared (their files are in no diff; the critic was told): ${entry.repositories.map((nested) => `${nested.path}/`).join(', ')}`,
        'warning',
      ];
    case 'check':
      return [
        `check ${entry.name} ${entry.passed ? 'passed' : entry.timed_out ? 'timed out' : `failed (exit ${entry.exit_code ?? 'by a signal'})`} in ${formatDuration(entry.duration_secs)}${entry.required ? '' : ' (advisory)'}`,
        entry.passed ? 'muted' : entry.required ? 'error' : 'warning',
      ];
    case 'done_refused':
      return [`the critic said DONE, refused: the required checks ${entry.failed_checks.join(', ')} fail`, 'warning'];
    case 'stall':
      return [`${entry.action === 'nudge' ? 'going in circles, the actor was told' : 'stopped, going in circles'}: ${entry.reason}`, 'warning'];
    case 'warning':
      return [`warning: ${entry.message}`, 'warning'];
    case 'rollback':
      return [
        `rolled back to before iteration ${entry.to_iteration}: ${entry.restored.length} restored, ${entry.removed.length} removed${entry.overwritten.length ? `, ${entry.overwritten.length} of your changes overwritten (--force)` : ''}`,
        'warning',
      ];
    case 'rollback_undone':
      return [`rollback ${entry.rollback} undone: ${entry.restored.length + entry.removed.length} file(s) put back`, 'warning'];
    case 'worktree_prepared': {
      const copied = entry.copied.length > 0 ? `, copied ${entry.copied.join(', ')}` : '';
      const setup =
        entry.setup_command === null
          ? ''
          : `, setup \`${entry.setup_command}\` ${entry.setup_passed ? 'passed' : `failed (exit ${entry.setup_exit_code ?? 'by a signal'})`}${entry.setup_duration_secs === null ? '' : ` in ${formatDuration(entry.setup_duration_secs)}`}`;
      return [`worktree ${entry.worktree} ready${copied}${setup}`, entry.setup_passed === false ? 'error' : 'muted'];
    }
    case 'applied':
      return [
        `applied to ${entry.target_dir}: ${entry.restored.length} written, ${entry.removed.length} removed${entry.overwritten.length ? `, ${entry.overwritten.length} of your changes overwritten` : ''}`,
        'success',
      ];
    case 'apply_undone':
      return [`apply ${entry.apply} undone: ${entry.restored.length + entry.removed.length} file(s) put back`, 'warning'];
    case 'imported':
      return [`imported from ${entry.bundle} (it ran in ${entry.from_working_dir})`, 'muted'];
    case 'finding':
      return [
        `finding ${entry.id}${entry.file ? ` ${fileLocation(entry.file, entry.line, entry.end_line)}` : ''} (${entry.severity}): ${previewLine(entry.message, 120)}`,
        'warning',
      ];
    case 'resolved':
      return [`${entry.ids.join(', ')} ${entry.reopened ? 'opened again' : 'resolved'} by ${entry.by === 'user' ? 'you' : 'the critic'}`, 'muted'];
    case 'comment':
      return [
        `your comment ${entry.id}${entry.file ? ` on ${fileLocation(entry.file, entry.line, entry.end_line)}` : ''}: ${previewLine(entry.text, 120)}`,
        'info',
      ];
    case 'hunk_rejected':
      return [`you rejected hunk ${entry.hunk} of ${entry.file} (${entry.id})${entry.reason ? `: ${previewLine(entry.reason, 100)}` : ''}`, 'warning'];
    case 'rejection_undone':
      return [`${entry.id} undone: the hunk is back`, 'muted'];
    case 'staged':
      return [
        `staged ${entry.iteration === null ? "the session's" : `iteration ${entry.iteration}'s`} changes: ${previewLine(entry.files.join(', '), 100)}`,
        'muted',
      ];
    case 'review_delivered':
      return [`the actor was told ${entry.ids.join(', ')}`, 'muted'];
    case 'review_claimed':
      return [`the actor says it addressed ${entry.ids.join(', ')}`, 'muted'];
    case 'review_paused':
      return ['paused for your review', 'warning'];
    case 'review_resumed':
      return [`you said to ${entry.action === 'continue' ? 'go on' : 'stop'} after ${formatDuration(entry.paused_secs)}`, 'info'];
    case 'session_ended':
      return [
        `session ended: ${entry.outcome}${entry.stop_reason ? ` (${entry.stop_reason})` : ''} after ${entry.iterations} iteration${entry.iterations === 1 ? '' : 's'} (${formatDuration(entry.duration_secs)}${entry.total_cost_usd === null ? '' : `, $${entry.total_cost_usd.toFixed(2)}`})${entry.error ? ` — ${entry.error}` : ''}`,
        entry.outcome === 'success' ? 'success' : entry.outcome === 'failed' ? 'error' : 'warning',
      ];
  }
}
