import type { AgentEvent, StreamDrift, Usage } from '../sessionFormat/agentEvents.js';
import { fileLocation, formatCount, formatDuration, indent } from '../text/humanize.js';
import { takeTail } from '../text/truncate.js';
import type { Finding } from '../sessionFormat/reviewRecords.js';
import type { RunEvent } from '../sessionFormat/runEvents.js';

/**
 * Run events as lines a person reads: the CLI prints them, the editor's output
 * channel shows them. One wording for both.
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

export function describeEvent(event: RunEvent, options: DescribeOptions): DescribedLine[] {
  switch (event.type) {
    case 'run_started': {
      const limit = event.max_iterations === null ? 'no iteration limit' : `max ${event.max_iterations} iterations`;
      return [
        { text: `Session ${event.session_id}${event.resumed_from ? ` (resuming ${event.resumed_from})` : ''}`, tone: 'heading' },
        {
          text: `actor ${agentLabel(event.actor_agent, event.actor_model)} · critic ${agentLabel(event.critic_agent, event.critic_model)} · ${limit}`,
          tone: 'muted',
        },
        { text: `in ${event.working_dir}`, tone: 'muted' },
      ];
    }
    case 'run_refused':
      return [{ text: `Could not start: ${event.message}`, tone: 'error' }];
    case 'iteration_started':
      return [{ text: `── Iteration ${event.iteration} ──`, tone: 'heading' }];
    case 'phase':
      if (event.status === 'started' && event.phase === 'actor') return [{ text: 'actor working…', tone: 'info' }];
      if (event.status === 'started' && event.phase === 'critic') return [{ text: 'critic reviewing…', tone: 'info' }];
      return [];
    case 'agent_event':
      return describeAgentEvent(event.role, event.event, options);
    case 'agent_finished': {
      if (event.interrupted) return [{ text: `${event.role} stopped (interrupted)`, tone: 'warning' }];
      const facts = [`${formatDuration(event.duration_secs)}`, `exit ${event.exit_code}`, ...usageFacts(event.usage)];
      const drift = driftLine(event.role, event.drift);
      if (!event.succeeded) {
        return [{ text: `${event.role} failed after ${facts.join(', ')}: ${event.failure_reason ?? 'unknown failure'}`, tone: 'error' }, ...drift];
      }
      return [{ text: `${event.role} finished in ${facts.join(', ')}`, tone: 'muted' }, ...drift];
    }
    case 'snapshot':
      return [];
    case 'diff_captured': {
      if (event.files_changed === 0) return [{ text: 'diff: no files changed', tone: 'info' }];
      const files = event.files.slice(0, 8).map((file) => `${statusMark(file.status)} ${file.oldPath ? `${file.oldPath} → ` : ''}${file.path}`);
      const more = event.files.length > 8 ? [`  … ${event.files.length - 8} more`] : [];
      return [
        { text: `diff: ${event.files_changed} file${event.files_changed === 1 ? '' : 's'} changed, +${event.insertions} −${event.deletions}`, tone: 'info' },
        ...[...files, ...more].map((text) => ({ text: `  ${text}`, tone: 'muted' as const })),
      ];
    }
    case 'critic_decision': {
      const lines: DescribedLine[] = [];
      if (event.decision === 'DONE') {
        const confidence = event.confidence === null ? '' : ` (confidence ${Math.round(event.confidence * 100)}%)`;
        lines.push({ text: `critic: DONE${confidence}`, tone: 'success' });
        if (event.summary) lines.push({ text: indent(event.summary), tone: 'agent' });
      } else {
        lines.push({ text: `critic: ${event.decision}`, tone: event.decision === 'ERROR' ? 'error' : 'warning' });
        if (event.feedback) lines.push({ text: indent(event.feedback), tone: 'agent' });
        for (const issue of event.remaining_issues) lines.push({ text: `  - ${issue}`, tone: 'agent' });
      }
      for (const finding of event.findings ?? []) lines.push({ text: `  ${findingLine(finding)}`, tone: finding.severity === 'error' ? 'warning' : 'muted' });
      if (event.resolved?.length) lines.push({ text: `  resolved: ${event.resolved.join(', ')}`, tone: 'muted' });
      return lines;
    }
    case 'check_finished': {
      const outcome = event.passed
        ? `passed in ${formatDuration(event.duration_secs)}`
        : event.timed_out
          ? `timed out after ${formatDuration(event.duration_secs)}`
          : `failed (exit ${event.exit_code ?? 'by a signal'}) in ${formatDuration(event.duration_secs)}`;
      const line = {
        text: `check ${event.name}: ${outcome}${event.required ? '' : ' (advisory)'}`,
        tone: event.passed ? ('muted' as const) : event.required ? ('error' as const) : ('warning' as const),
      };
      // The end of a failed check's output: what a user would scroll to.
      return event.passed ? [line] : [line, { text: indent(takeTail(event.output.trim(), 1_500)), tone: 'agent' }];
    }
    case 'done_refused':
      return [
        {
          text: `DONE refused: the required check${event.failed_checks.length === 1 ? '' : 's'} ${event.failed_checks.join(', ')} fail${event.failed_checks.length === 1 ? 's' : ''}`,
          tone: 'warning',
        },
      ];
    case 'spend':
      return [];
    case 'stall':
      return [
        {
          text: event.action === 'nudge' ? `going in circles: ${event.reason}; telling the actor to change approach` : `going in circles: ${event.reason}`,
          tone: 'warning',
        },
      ];
    case 'critic_changes_reverted':
      return [];
    case 'nested_repositories_appeared':
      return [
        {
          text:
            `${event.repositories.length === 1 ? 'a folder became a nested git repository' : 'folders became nested git repositories'} ` +
            `(a .git folder or file), whose files no diff shows and rollback leaves alone; the critic is told: ` +
            event.repositories.map((nested) => `${nested.path}/${nested.commit === null ? ' (no commit yet)' : ''}`).join(', '),
          tone: 'warning',
        },
      ];
    case 'review_delivered':
      return [{ text: `review items for the actor: ${event.ids.join(', ')}`, tone: 'muted' }];
    case 'review_claimed':
      return [{ text: `the actor says it addressed ${event.ids.join(', ')}`, tone: 'muted' }];
    case 'review_paused':
      return [{ text: `paused for review after iteration ${event.iteration}: comment, reject hunks, then continue`, tone: 'warning' }];
    case 'review_resumed':
      return [{ text: event.action === 'continue' ? 'review done: continuing' : 'review done: stopping the loop', tone: 'info' }];
    case 'iteration_finished':
      return [];
    case 'warning':
      return [{ text: `warning: ${event.message}`, tone: 'warning' }];
    case 'rollback':
      return [
        { text: `rolled back to before iteration ${event.to_iteration}: ${pathCount(event.restored.length + event.removed.length)} restored`, tone: 'warning' },
      ];
    case 'rollback_undone':
      return [{ text: `rollback ${event.rollback} undone: ${pathCount(event.restored.length + event.removed.length)} put back`, tone: 'warning' }];
    case 'worktree_prepared': {
      const lines: DescribedLine[] = [{ text: `worktree ${event.worktree}`, tone: 'muted' }];
      if (event.copied.length > 0) lines.push({ text: `copied in ${event.copied.join(', ')}`, tone: 'muted' });
      if (event.not_found.length > 0) lines.push({ text: `not in your tree, not copied: ${event.not_found.join(', ')}`, tone: 'muted' });
      const setup = event.setup;
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
    case 'applied':
      return [{ text: `applied to ${event.target_dir}: ${pathCount(event.restored.length + event.removed.length)} written`, tone: 'success' }];
    case 'apply_undone':
      return [{ text: `apply ${event.apply} undone: ${pathCount(event.restored.length + event.removed.length)} put back`, tone: 'warning' }];
    case 'imported':
      return [{ text: `imported from ${event.bundle} (it ran in ${event.from_working_dir})`, tone: 'muted' }];
    case 'run_finished':
      return describeOutcome(event);
  }
}

function describeOutcome(event: Extract<RunEvent, { type: 'run_finished' }>): DescribedLine[] {
  const after = `after ${event.iterations} iteration${event.iterations === 1 ? '' : 's'} (${formatDuration(event.total_duration_secs)})`;
  const lines: DescribedLine[] = [];
  switch (event.status) {
    case 'success':
      lines.push({ text: `✓ Done ${after}`, tone: 'success' });
      break;
    case 'max_iterations_reached':
      lines.push({ text: `■ Stopped at the iteration limit ${after}`, tone: 'warning' });
      break;
    case 'interrupted':
      lines.push({ text: `■ Interrupted ${after}`, tone: 'warning' });
      break;
    case 'failed':
      lines.push({ text: `✗ Failed ${after}: ${event.error ?? 'unknown error'}`, tone: 'error' });
      break;
  }
  if (event.total_cost_usd !== null || event.total_tokens > 0) {
    const cost = event.total_cost_usd === null ? '' : `$${event.total_cost_usd.toFixed(2)}${event.cost_estimated ? ' (partly estimated)' : ''}, `;
    lines.push({ text: `used ${cost}${formatCount(event.total_tokens)} tokens`, tone: 'muted' });
  }
  lines.push({ text: `session: ${event.session_file}`, tone: 'muted' });
  return lines;
}

function describeAgentEvent(role: 'actor' | 'critic', event: AgentEvent, options: DescribeOptions): DescribedLine[] {
  switch (event.kind) {
    case 'text':
      return options.showAgentText && role === 'actor' && event.text.trim() ? [{ text: indent(event.text), tone: 'agent' }] : [];
    case 'tool_use':
      return [{ text: `  → ${event.name}${event.summary ? `: ${event.summary}` : ''}`, tone: 'muted' }];
    case 'tool_result':
      return event.isError ? [{ text: `    ✗ ${event.summary}`, tone: 'warning' }] : [];
    case 'error':
      return [{ text: `  ${role} error: ${event.message}`, tone: 'error' }];
    default:
      return [];
  }
}

/** `F2.1 src/a.ts:42-44 (error) message`: a finding on one line. */
export function findingLine(finding: Finding): string {
  const where = finding.file ? ` ${fileLocation(finding.file, finding.line, finding.end_line)}` : '';
  return `${finding.id}${where} (${finding.severity}) ${finding.message}`;
}

function agentLabel(agent: string, model: string | null): string {
  return model ? `${agent} (${model})` : agent;
}

function usageFacts(usage: Usage | null): string[] {
  if (!usage) return [];
  const facts: string[] = [];
  if (usage.costUsd !== undefined) facts.push(`$${usage.costUsd.toFixed(4)}`);
  const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0) + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  if (tokens > 0) facts.push(`${formatCount(tokens)} tokens`);
  return facts;
}

function statusMark(status: string): string {
  return { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', type_changed: 'T' }[status] ?? '?';
}

function pathCount(count: number): string {
  return `${count} file${count === 1 ? '' : 's'}`;
}

/** A word about what the agent's stream held that its adapter does not know: harmless, but a sign its CLI changed. */
function driftLine(role: string, drift: StreamDrift | undefined): DescribedLine[] {
  if (!drift || drift.unknownEvents + drift.unknownFields === 0) return [];
  const counts = [
    drift.unknownEvents > 0 ? `${drift.unknownEvents} unknown event${drift.unknownEvents === 1 ? '' : 's'}` : '',
    drift.unknownFields > 0 ? `${drift.unknownFields} unknown field${drift.unknownFields === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  return [
    {
      text: `${role}: its output held ${counts.join(' and ')} (${drift.examples.join(', ')}), ignored; its CLI may be a version codeloops was not tested with (codeloops doctor)`,
      tone: 'muted',
    },
  ];
}
