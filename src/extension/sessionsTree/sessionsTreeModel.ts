import path from 'node:path';
import type { FileChange } from '../../sessionFormat/runEvents.js';
import type { CriticDecisionKind } from '../../sessionFormat/sessionLines.js';
import type { SessionView } from '../../sessionView/sessionView.js';
import type { SessionSummary } from '../../sessionFormat/sessionSummaries.js';
import { formatDuration, relativeTime } from '../../text/humanize.js';
import { TREE_ITEM_KINDS } from '../ids.js';

/**
 * What the sessions tree shows, computed without VS Code so it can be tested on its
 * own: labels, descriptions, icons (codicon ids and theme colour ids), tooltips.
 */

export interface IconSpec {
  id: string;
  color?: string;
}

export interface TooltipSpec {
  title: string;
  /** Plain text lines, shown as text. */
  lines: string[];
  /** Markdown from the critic, shown as untrusted Markdown. */
  markdown?: string;
}

/** What every node at the top of the tree shows: a session, or a candidate group. */
export interface TopNodeLook {
  id: string;
  label: string;
  description: string;
  icon: IconSpec;
  tooltip: TooltipSpec;
  contextValue: string;
}

export interface SessionNode extends TopNodeLook {
  kind: 'session';
}

/** A candidate group: its candidates' sessions sit under it (candidateNodes.ts). */
export interface GroupNode extends TopNodeLook {
  kind: 'group';
  /** When the group started, to place it among the sessions. */
  timestamp: string;
  candidates: SessionNode[];
}

export interface IterationNode {
  kind: 'iteration';
  sessionId: string;
  number: number;
  label: string;
  description: string;
  icon: IconSpec;
  tooltip: TooltipSpec;
  files: FileChange[];
  contextValue: string;
}

export interface FileNode {
  kind: 'file';
  sessionId: string;
  iteration: number;
  file: FileChange;
  label: string;
  description: string;
  tooltip: TooltipSpec;
  contextValue: string;
}

export interface MoreNode {
  kind: 'more';
  remaining: number;
  label: string;
  contextValue: string;
}

export type TreeNode = SessionNode | IterationNode | FileNode | MoreNode | GroupNode;

const OUTCOME_ICONS: Readonly<Record<NonNullable<SessionSummary['outcome']>, IconSpec>> = {
  success: { id: 'pass-filled', color: 'testing.iconPassed' },
  failed: { id: 'error', color: 'testing.iconFailed' },
  interrupted: { id: 'debug-pause', color: 'editorWarning.foreground' },
  max_iterations_reached: { id: 'warning', color: 'editorWarning.foreground' },
};

const OUTCOME_LABELS: Readonly<Record<NonNullable<SessionSummary['outcome']>, string>> = {
  success: 'success',
  failed: 'failed',
  interrupted: 'interrupted',
  max_iterations_reached: 'iteration limit reached',
};

const DECISION_ICONS: Readonly<Record<CriticDecisionKind, IconSpec>> = {
  DONE: { id: 'pass', color: 'testing.iconPassed' },
  CONTINUE: { id: 'debug-continue', color: 'editorWarning.foreground' },
  ERROR: { id: 'error', color: 'testing.iconFailed' },
};

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** `openFeedback`: the user commented on it or rejected part of it since it finished, so it can be carried on. */
export function sessionNode(summary: SessionSummary, running: boolean, openFeedback = false, now: number = Date.now()): SessionNode {
  const status = running ? 'running' : summary.outcome ? OUTCOME_LABELS[summary.outcome] : 'not finished (stopped without an end)';
  // Success is what the icon says; anything else is also said in words.
  const parts = [relativeTime(summary.timestamp, now), plural(summary.iterations, 'iteration')];
  if (summary.duration_secs !== null) parts.push(formatDuration(summary.duration_secs));
  if (!running && summary.outcome !== 'success') parts.unshift(summary.outcome ? OUTCOME_LABELS[summary.outcome] : 'not finished');
  // A DONE that nothing but the critic's word stands behind is said so: the icon alone would say "done".
  if (!running && summary.outcome === 'success' && summary.verification === 'unverified') parts.unshift('unverified');
  return {
    kind: 'session',
    id: summary.id,
    label: summary.prompt_preview || '(empty prompt)',
    description: running ? `running · ${parts.join(' · ')}` : parts.join(' · '),
    icon: running ? { id: 'sync~spin' } : summary.outcome ? OUTCOME_ICONS[summary.outcome] : { id: 'circle-large-outline', color: 'disabledForeground' },
    tooltip: {
      title: summary.prompt_preview,
      lines: [
        `Outcome: ${status}${summary.verification === 'unverified' ? ', unverified: no required check passed and the critic ran no command that succeeded' : ''}${summary.confidence !== null ? ` (confidence ${Math.round(summary.confidence * 100)}%)` : ''}`,
        `Project: ${summary.project} (${summary.working_dir})`,
        `Actor: ${summary.actor_agent} · Critic: ${summary.critic_agent}`,
        `Started: ${new Date(summary.timestamp).toLocaleString()}`,
        `Session: ${summary.id}`,
      ],
    },
    contextValue: running
      ? TREE_ITEM_KINDS.runningSession
      : summary.outcome === 'success' && !openFeedback
        ? TREE_ITEM_KINDS.session
        : TREE_ITEM_KINDS.resumableSession,
  };
}

export function iterationNodes(view: SessionView): IterationNode[] {
  return view.iterations.map((iteration) => {
    const counts = iteration.git_insertions !== null ? ` +${iteration.git_insertions} −${iteration.git_deletions ?? 0}` : '';
    return {
      kind: 'iteration',
      sessionId: view.id,
      number: iteration.iteration_number,
      label: `Iteration ${iteration.iteration_number}`,
      description: `${iteration.critic_decision} · ${plural(iteration.git_files_changed, 'file')}${iteration.diff_since_head ? ' since HEAD' : ''}${counts} · ${formatDuration(iteration.actor_duration_secs)}`,
      icon: DECISION_ICONS[iteration.critic_decision],
      tooltip: {
        title: `Iteration ${iteration.iteration_number}: ${iteration.critic_decision}${iteration.critic_decision_text !== undefined ? ` (recorded as "${iteration.critic_decision_text}")` : ''}`,
        lines: [
          ...iteration.remaining_issues.map((issue) => `• ${issue}`),
          ...(iteration.diff_since_head ? ['Recorded by the original codeloops: the files are the whole change since HEAD, not this iteration’s own.'] : []),
        ],
        // The original codeloops kept a DONE's summary in its feedback.
        markdown: iteration.critic_decision === 'DONE' ? (iteration.summary ?? iteration.feedback ?? undefined) : (iteration.feedback ?? undefined),
      },
      files: iteration.files,
      contextValue: TREE_ITEM_KINDS.iteration,
    };
  });
}

const STATUS_WORDS: Readonly<Record<FileChange['status'], string>> = {
  added: 'added',
  modified: 'modified',
  deleted: 'deleted',
  renamed: 'renamed',
  copied: 'copied',
  type_changed: 'type changed',
};

export function fileNodes(sessionId: string, iteration: number, files: readonly FileChange[]): FileNode[] {
  return [...files]
    .sort((a, b) => a.path.localeCompare(b.path))
    .map((file) => {
      const folder = path.posix.dirname(file.path);
      const counts = file.insertions !== null ? `+${file.insertions} −${file.deletions ?? 0}` : 'binary';
      return {
        kind: 'file',
        sessionId,
        iteration,
        file,
        label: path.posix.basename(file.path),
        description: [folder === '.' ? '' : folder, STATUS_WORDS[file.status], counts].filter(Boolean).join(' · '),
        tooltip: { title: file.path, lines: [file.oldPath ? `${STATUS_WORDS[file.status]} from ${file.oldPath}` : STATUS_WORDS[file.status], counts] },
        contextValue: TREE_ITEM_KINDS.file,
      };
    });
}

/** Sessions shown at first; "Show more" adds this many at a time. */
export const SESSIONS_PAGE = 200;

export function moreNode(remaining: number): MoreNode {
  return { kind: 'more', remaining, label: `Show ${Math.min(remaining, SESSIONS_PAGE)} more (${remaining} older)`, contextValue: TREE_ITEM_KINDS.more };
}
