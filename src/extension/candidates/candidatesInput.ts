import * as vscode from 'vscode';
import { AGENT_DISPLAY_NAMES, AGENT_KINDS } from '../../agents/agentKinds.js';
import { planCandidates } from '../../candidates/candidateSpecs.js';
import type { CandidatesRequest } from './candidateRuns.js';

const TITLE = 'Codeloops: Run Prompt with Candidates';

/** Which candidates, in three short steps: the agents, their models (as one editable list), how many runs of each. */
export async function askForCandidates(): Promise<Omit<CandidatesRequest, 'prompt'> | undefined> {
  const agents = await vscode.window.showQuickPick(
    AGENT_KINDS.map((agent) => ({ label: AGENT_DISPLAY_NAMES[agent], description: agent, agent, picked: agent === 'claude' })),
    {
      title: `${TITLE} (1/3)`,
      placeHolder: 'Which agents should try the task? Each runs its own loop in its own worktree.',
      canPickMany: true,
      ignoreFocusOut: true,
    },
  );
  if (!agents || agents.length === 0) return undefined;
  const list = await vscode.window.showInputBox({
    title: `${TITLE} (2/3)`,
    prompt: 'Candidates: agents or agent:model pairs, comma-separated (a name twice runs it twice). Add models here, e.g. claude:opus.',
    value: agents.map((picked) => picked.agent).join(','),
    ignoreFocusOut: true,
    validateInput: (value) => {
      try {
        planCandidates(value, undefined, 'claude');
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    },
  });
  if (!list) return undefined;
  const times = await vscode.window.showQuickPick(
    [1, 2, 3].map((count) => ({ label: `${count}× each`, description: count === 1 ? 'one loop per candidate' : `${count} loops per candidate`, count })),
    { title: `${TITLE} (3/3)`, placeHolder: 'How many runs of each candidate?', ignoreFocusOut: true },
  );
  if (!times) return undefined;
  return { candidates: list.replace(/\s+/g, ''), times: times.count };
}
