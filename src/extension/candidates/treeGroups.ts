import { groupStatus, listGroups } from '../../candidates/groupRecord.js';
import type { CandidateGroupEntry } from '../sessionsTree/sessionsTreeProvider.js';

/** Every candidate group of this machine, as the sessions tree shows them. */
export async function treeGroups(groupsDirectory: string, warn: (message: string) => void): Promise<CandidateGroupEntry[]> {
  return (await listGroups(groupsDirectory, warn)).map((state) => {
    const sessions = new Map(state.sessions);
    for (const [label, finished] of state.finished) if (finished.session_id) sessions.set(label, finished.session_id);
    return {
      group: {
        id: state.id,
        prompt: state.started.prompt,
        timestamp: state.started.timestamp,
        status: groupStatus(state),
        ranking: state.end?.ranking ?? [],
        applied: state.applied?.label ?? null,
      },
      sessions,
      labels: state.started.candidates.map((candidate) => candidate.label),
    };
  });
}
