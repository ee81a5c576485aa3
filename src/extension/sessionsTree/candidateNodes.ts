import type { GroupStatus } from '../../sessionFormat/candidateGroups.js';
import type { SessionSummary } from '../../sessionFormat/sessionSummaries.js';
import { relativeTime } from '../../text/humanize.js';
import { previewLine } from '../../text/truncate.js';
import { TREE_ITEM_KINDS } from '../ids.js';
import { sessionNode, type GroupNode } from './sessionsTreeModel.js';

/**
 * Candidate groups in the sessions tree: a group node under which its candidates'
 * sessions sit, labelled by candidate (and rank, once ranked), with live status.
 */

/** A candidate as the tree gets it: its label, its session (once it exists) and whether it runs now. */
export interface CandidateEntry {
  label: string;
  summary: SessionSummary | undefined;
  running: boolean;
}

const STATUS_WORDS: Readonly<Record<GroupStatus, string>> = {
  running: 'running',
  finished: 'finished',
  interrupted: 'interrupted',
  failed: 'failed',
  crashed: 'stopped without an end',
};

export function groupNode(
  group: { id: string; prompt: string; timestamp: string; status: GroupStatus; ranking: readonly string[]; applied: string | null },
  entries: readonly CandidateEntry[],
  now: number = Date.now(),
): GroupNode {
  const ranked = [...entries].sort((a, b) => rankOf(group.ranking, a.label) - rankOf(group.ranking, b.label));
  const ended = entries.filter((entry) => entry.summary?.outcome).length;
  const parts = [relativeTime(group.timestamp, now), `${entries.length} candidates`];
  if (group.status === 'running') parts.push(`${ended} of ${entries.length} done`);
  else parts.unshift(STATUS_WORDS[group.status]);
  if (group.ranking[0] && group.status !== 'running') parts.push(`best: ${group.ranking[0]}`);
  if (group.applied) parts.push(`${group.applied} applied`);
  return {
    kind: 'group',
    id: group.id,
    label: previewLine(group.prompt, 100) || '(empty prompt)',
    description: parts.join(' · '),
    icon:
      group.status === 'running'
        ? { id: 'sync~spin' }
        : group.status === 'finished'
          ? { id: 'git-compare', color: 'testing.iconPassed' }
          : { id: 'git-compare', color: 'editorWarning.foreground' },
    tooltip: {
      title: previewLine(group.prompt, 200),
      lines: [`Candidate group: ${STATUS_WORDS[group.status]}`, ...ranked.map((entry) => `${entry.label}: ${candidateStatus(entry)}`), `Group: ${group.id}`],
    },
    contextValue: group.status === 'running' ? TREE_ITEM_KINDS.runningGroup : TREE_ITEM_KINDS.group,
    timestamp: group.timestamp,
    candidates: ranked.flatMap((entry) => {
      if (!entry.summary) return [];
      const rank = group.ranking.indexOf(entry.label) + 1;
      const node = sessionNode(entry.summary, entry.running, false, now);
      return [
        {
          ...node,
          label: `${rank > 0 ? `${rank}. ` : ''}${entry.label}`,
          description: `${entry.label === group.applied ? 'applied · ' : ''}${node.description}`,
          contextValue: entry.running ? node.contextValue : TREE_ITEM_KINDS.candidateSession,
        },
      ];
    }),
  };
}

function rankOf(ranking: readonly string[], label: string): number {
  const index = ranking.indexOf(label);
  return index < 0 ? Number.MAX_SAFE_INTEGER : index;
}

function candidateStatus(entry: CandidateEntry): string {
  if (entry.running) return 'running';
  if (!entry.summary) return 'waiting';
  return entry.summary.outcome ?? 'stopped without an end';
}
