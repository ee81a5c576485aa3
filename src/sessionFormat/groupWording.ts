import type { CandidateRow, CandidateStreamEvent, GroupComparison } from './candidateGroups.js';
import { describeEvent, type DescribedLine } from './eventWording.js';

/** A candidate group's words: its events as the live log says them, and why the judge's first is not first. */

/** A candidate group's events as lines, each candidate's run events prefixed with its label. */
export function describeGroupEvent(event: CandidateStreamEvent): DescribedLine[] {
  switch (event.type) {
    case 'group_started':
      return [
        {
          text: `Candidate group ${event.group_id}: ${event.candidates.length} candidates (${event.candidates.map((c) => c.label).join(', ')}), ${event.jobs} at a time`,
          tone: 'heading',
        },
        {
          text: `from your tree as it is (snapshot ${event.base_commit.slice(0, 12)}); critic ${event.critic_agent}${event.critic_model ? ` (${event.critic_model})` : ''}`,
          tone: 'muted',
        },
      ];
    case 'candidate_event':
      return describeEvent(event.event, { showAgentText: false }).map((line) => ({ ...line, text: `[${event.label}] ${line.text}` }));
    case 'candidate_finished':
      return event.session_id
        ? []
        : [{ text: `[${event.label}] did not start: ${event.error ?? event.outcome}`, tone: event.outcome === 'interrupted' ? 'warning' : 'error' }];
    case 'judged':
      return [
        {
          text:
            event.judgment.ranking.length > 0
              ? `judge (${event.judgment.agent}): ${event.judgment.ranking.join(' > ')}`
              : `judge (${event.judgment.agent}): no ranking (${event.judgment.reasoning})`,
          tone: 'info',
        },
      ];
    default:
      return [];
  }
}

/** How a ranked candidate ended, in a sentence about it. */
const ENDED: Readonly<Record<CandidateRow['status'], string>> = {
  success: 'succeeded',
  max_iterations_reached: 'reached its iteration limit',
  interrupted: 'was interrupted',
  failed: 'failed',
  crashed: 'did not finish',
  running: 'is still running',
  pending: 'has not started',
};

/**
 * Why the candidate the judge put first is not first, said beside the judge's
 * reasoning (which argues for it): "The judge ranked B first, but A passed 2 of 2
 * checks and B 1 of 2: checks come first." Null when the judge was not overruled.
 */
export function judgeOverruledText(comparison: Pick<GroupComparison, 'candidates' | 'judge_overruled'>): string | null {
  const overruled = comparison.judge_overruled;
  const judged = comparison.candidates.find((row) => row.label === overruled?.judged_first);
  const ranked = comparison.candidates.find((row) => row.label === overruled?.ranked_first);
  if (!overruled || !judged || !ranked) return null;
  const lead = `The judge ranked ${judged.label} first, but ${ranked.label}`;
  if (overruled.by === 'outcome') return `${lead} ${ENDED[ranked.status]} and ${judged.label} ${ENDED[judged.status]}: the outcome comes before the judge.`;
  const checksOf = (row: CandidateRow) => (row.checks_total === null ? 'ran none' : `${row.checks_passed ?? 0} of ${row.checks_total}`);
  return `${lead} passed ${checksOf(ranked)} checks and ${judged.label} ${checksOf(judged)}: checks come first.`;
}
