import path from 'node:path';
import { compareGroup } from '../candidates/comparison.js';
import { groupStatus, listGroups, readGroup, resolveGroupId } from '../candidates/groupRecord.js';
import { removeGroupWorktrees } from '../candidates/worktreeCleanup.js';
import { groupsDir } from '../sessionFormat/candidateGroupFiles.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { previewLine } from '../text/truncate.js';
import { renderComparison } from './comparisonText.js';
import { EXIT_CODES } from './exitCodes.js';
import { openStore } from './openStore.js';
import { colorEnabled, renderTable } from './terminal.js';
import { printAnswer } from './answers.js';

export interface CandidatesOptions {
  json?: boolean;
  discard?: boolean;
  force?: boolean;
}

/** `codeloops candidates [group]`: the groups, or one group's comparison (`--json`); `--discard` removes its worktrees. */
export async function candidatesCommand(idOrPrefix: string | undefined, options: CandidatesOptions): Promise<number> {
  const store = openStore();
  const sources = { store, sidecarDirOf: (sessionId: string) => sidecarDirOf(sessionId) };
  if (idOrPrefix === undefined) {
    const groups = await listGroups(groupsDir(), (message) => process.stderr.write(`warning: ${message}\n`));
    if (options.json) {
      const comparisons = [];
      for (const group of groups) comparisons.push(await compareGroup(group, sources));
      printAnswer('candidates', comparisons);
      return 0;
    }
    if (groups.length === 0) {
      process.stdout.write('No candidate groups yet. Start one with: codeloops run --candidates claude,codex -p "<task>"\n');
      return 0;
    }
    const rows = groups.map((group) => [
      group.id,
      groupStatus(group),
      group.started.candidates.map((candidate) => candidate.label).join(', '),
      path.basename(group.started.working_dir),
      previewLine(group.started.prompt, 80),
    ]);
    process.stdout.write(renderTable(['GROUP', 'STATUS', 'CANDIDATES', 'PROJECT', 'PROMPT'], rows, Math.max(20, (process.stdout.columns ?? 120) - 90)));
    return 0;
  }
  const groupId = await resolveGroupId(groupsDir(), idOrPrefix, async (sessionId) => (await store.startLine(await store.resolveId(sessionId))).candidate_group);
  if (options.discard) {
    const state = await readGroup(groupsDir(), groupId);
    if (groupStatus(state) === 'running') {
      process.stderr.write(`Candidate group ${groupId} is still running: interrupt it first.\n`);
      return EXIT_CODES.failed;
    }
    const result = await removeGroupWorktrees(
      state,
      { groupsDirectory: groupsDir(), sidecarDirOf: sources.sidecarDirOf },
      { saveChanges: Boolean(options.force) },
    );
    if (options.json) printAnswer('candidates --discard', result);
    else {
      process.stdout.write(
        result.removed.length > 0 ? `Removed the worktrees of ${result.removed.join(', ')}. Their sessions and snapshots stay.\n` : 'No worktree to remove.\n',
      );
      for (const saved of result.saved) process.stdout.write(`  ${saved.label}: its unsnapshotted changes are kept in ${saved.ref}\n`);
      for (const kept of result.kept) process.stdout.write(`  kept ${kept.label}: ${sanitizeForTerminal(kept.reason)}\n`);
    }
    return result.kept.length > 0 ? 4 : 0;
  }
  const comparison = await compareGroup(await readGroup(groupsDir(), groupId), sources);
  if (options.json) printAnswer('candidates <group>', comparison);
  else process.stdout.write(renderComparison(comparison, colorEnabled(process.stdout)));
  return 0;
}
