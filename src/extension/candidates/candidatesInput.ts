import * as vscode from 'vscode';
import { AGENT_DISPLAY_NAMES, AGENT_KINDS } from '../../agents/agentKinds.js';
import { planCandidates } from '../../candidates/candidateSpecs.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import type { RunLog } from '../editorPorts.js';
import type { LoopStarter } from '../runs/loopStarter.js';
import { askForTask } from '../runs/taskInput.js';
import type { GroupNode, SessionNode } from '../sessionsTree/sessionsTreeModel.js';
import type { CandidateGroupEntry } from '../sessionsTree/sessionsTreeProvider.js';
import { vscodeWindow } from '../vscodeWindow.js';
import type { CandidateRuns, CandidatesRequest } from './candidateRuns.js';

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

/** "Run Prompt with Candidates": a folder (of a trusted workspace) that runs no group, the candidates, the prompt; then the group runs. */
export async function runWithCandidates(
  starter: LoopStarter<vscode.WorkspaceFolder>,
  candidateRuns: CandidateRuns<vscode.WorkspaceFolder>,
  log: RunLog,
): Promise<void> {
  const folder = await starter.folderToRunIn();
  if (!folder || !candidateRuns.canStartIn(folder)) return;
  const choice = await askForCandidates();
  const prompt = choice && (await askForTask(vscodeWindow)(folder));
  if (!choice || !prompt || !('text' in prompt)) return;
  log.show(true);
  await candidateRuns.start(folder, { prompt: prompt.text, ...choice });
}

/** The group to compare: of a tree node (a group, or one of its candidates), by its id, or the user's pick. */
export async function groupToCompare(
  target: GroupNode | SessionNode | string | undefined,
  store: SessionStore,
  groups: () => Promise<CandidateGroupEntry[]>,
): Promise<string | undefined> {
  if (typeof target === 'string') return target;
  if (target?.kind === 'group') return target.id;
  if (target?.kind === 'session') return (await store.startLine(target.id)).candidate_group;
  const entries = await groups();
  if (entries.length === 0) {
    void vscode.window.showInformationMessage('No candidate groups yet: run "Codeloops: Run Prompt with Candidates…" first.');
    return undefined;
  }
  return vscodeWindow.pick(
    entries.map((entry) => ({
      label: entry.group.prompt.split('\n')[0] ?? entry.group.id,
      description: `${entry.group.status} · ${entry.labels.join(', ')}`,
      value: entry.group.id,
    })),
    'Compare the candidates of which group?',
  );
}
