import os from 'node:os';
import path from 'node:path';
import { applyCandidate } from '../candidates/applyCandidate.js';
import { planCandidates } from '../candidates/candidateSpecs.js';
import { compareGroup } from '../candidates/comparison.js';
import { groupStatus, listGroups, readGroup, resolveGroupId } from '../candidates/groupRecord.js';
import { endRunningGroupsNow, runCandidates } from '../candidates/runCandidates.js';
import { removeGroupWorktrees } from '../candidates/worktreeCleanup.js';
import { describeEvent, type DescribedLine } from '../sessionFormat/eventWording.js';
import { endRunningLoopsNow } from '../loop/loopRunner.js';
import { prepareRun, type PreparedRun } from '../loop/prepareRun.js';
import type { ApplyOutcome, ApplyResultKind } from '../sessionFormat/applyOutcome.js';
import { type CandidateStreamEvent, type GroupComparison, type GroupStatus } from '../sessionFormat/candidateGroups.js';
import { groupsDir, worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { sessionsDir, sidecarDir } from '../sessionFormat/sessionFiles.js';
import { formatCount, formatDuration, indent } from '../text/humanize.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { previewLine } from '../text/truncate.js';
import { EXIT_CODES } from './exitCodes.js';
import { describeRole, editorSettingsLayer, readPrompt, reportRefusal, type RunOptions } from './runCommand.js';
import { movedPathLines } from './rollbackCommand.js';
import { openStore } from './sessionsCommand.js';
import { colorEnabled, paint, renderTable, writeLines } from './terminal.js';
import { runFromTerminal } from './terminalRun.js';
import { prepareRunAsking } from './trustPrompt.js';

/**
 * `codeloops run --candidates …` / `--parallel N`: a candidate group, one loop per
 * candidate in its own worktree; `codeloops candidates [group]`: the comparison;
 * `codeloops apply <session>`: a candidate's changes into the user's tree.
 */

export async function runCandidatesCommand(options: RunOptions): Promise<number> {
  const workingDir = path.resolve(options.workingDir ?? process.cwd());
  let prompt: string;
  let base: PreparedRun;
  let candidates: { spec: ReturnType<typeof planCandidates>[number]; prepared: PreparedRun }[];
  try {
    prompt = readPrompt(options, workingDir);
    const userLayers = options.editorSettings ? [editorSettingsLayer(options.editorSettings)] : [];
    base = await prepareRunAsking({ workingDir, flags: options, userLayers, trust: options.trust }, !options.jsonOutput && !options.events);
    const specs = planCandidates(options.candidates, options.parallel, base.settings.actor.agent);
    // Every candidate's agent is looked for now: a missing one fails the group before anything starts.
    candidates = await Promise.all(
      specs.map(async (spec) => ({
        spec,
        prepared:
          spec.agent === base.settings.actor.agent && spec.model === null
            ? base
            : // The project file passed its trust check above (or was trusted just now).
              await prepareRun({ workingDir, flags: { ...options, actorAgent: spec.agent, actorModel: spec.model ?? undefined }, userLayers, trust: true }),
      })),
    );
  } catch (error) {
    reportRefusal(options, error);
    throw error;
  }
  const jobs = options.jobs ?? os.availableParallelism();
  if (base.settings.review === 'pause' && !options.events) {
    process.stderr.write(
      'warning: review = "pause" does not pause candidates (they run side by side unattended): review them in the comparison, then apply one.\n',
    );
  }

  if (options.dryRun) {
    const plan = {
      working_dir: base.workingDir,
      repository: base.repository.root,
      prompt,
      candidates: candidates.map(({ spec, prepared }) => ({ label: spec.label, actor: describeRole(prepared.actor.launch, prepared.actor.model) })),
      critic: describeRole(base.critic.launch, base.critic.model),
      jobs,
      judge: options.judge !== false,
      worktrees_dir: worktreesDir(),
      copy: base.settings.worktree.copy,
      setup: base.settings.worktree.setup,
      max_iterations: base.settings.maxIterations,
      checks: base.settings.checks.map((check) => ({ name: check.name, run: check.run, required: check.required })),
    };
    if (options.jsonOutput) process.stdout.write(JSON.stringify(plan, null, 2) + '\n');
    else {
      process.stderr.write(
        `Dry run: nothing was started.\n` +
          `  repository   ${plan.repository}\n` +
          plan.candidates.map((candidate) => `  candidate    ${candidate.label}: ${candidate.actor.program}\n`).join('') +
          `  critic       ${plan.critic.agent}${plan.critic.model ? ` (${plan.critic.model})` : ''}: ${plan.critic.program}\n` +
          `  at once      ${jobs}\n` +
          `  worktrees in ${plan.worktrees_dir}\n` +
          `  copy         ${plan.copy.length > 0 ? plan.copy.join(', ') : 'nothing'}\n` +
          `  setup        ${plan.setup ?? 'none'}\n` +
          `  checks       ${plan.checks.length > 0 ? plan.checks.map((check) => check.name).join(', ') : 'none'}\n`,
      );
    }
    return 0;
  }

  const store = openStore();
  // What runCandidates throws, it throws before the group starts (a leftover agent still at work, a worktree folder
  // inside the repository): a refusal, told on stdout like the ones above.
  const result = await runFromTerminal(
    {
      events: options.events,
      stopping: 'stopping every candidate and ending their sessions',
      endNow: (status, failure) => {
        endRunningLoopsNow(status, failure);
        endRunningGroupsNow(status);
      },
    },
    ({ signal, stdoutOpen }) =>
      runCandidates({
        prompt,
        base,
        candidates,
        jobs,
        judge: options.judge !== false,
        sessionsDirectory: sessionsDir(),
        sidecarDirectory: (sessionId) => sidecarDir(sessionId),
        groupsDirectory: groupsDir(),
        worktreesDirectory: worktreesDir(),
        store,
        signal,
        onEvent: (event) => {
          if (options.events === 'ndjson') {
            if (stdoutOpen()) process.stdout.write(JSON.stringify(event) + '\n');
          } else if (!options.quiet) writeLines(process.stderr, describeGroupEvent(event));
        },
        onWarning: (message) => {
          if (!options.events) process.stderr.write(`warning: ${sanitizeForTerminal(message)}\n`);
        },
      }),
  ).catch((error: unknown) => {
    reportRefusal(options, error);
    throw error;
  });
  if (options.jsonOutput) process.stdout.write(JSON.stringify(result.comparison) + '\n');
  else if (!options.events && !options.quiet) process.stderr.write(renderComparison(result.comparison, colorEnabled(process.stderr)));
  return exitCodeOf(result.status, result.comparison);
}

/** Interrupted: 130; otherwise the best candidate's outcome, as a single run's exit code. */
function exitCodeOf(status: GroupStatus, comparison: GroupComparison): number {
  if (status === 'interrupted') return EXIT_CODES.interrupted;
  const best = comparison.candidates[0]?.status;
  return best === 'success' || best === 'max_iterations_reached' || best === 'interrupted' || best === 'failed' ? EXIT_CODES[best] : EXIT_CODES.failed;
}

/** A group's events as lines, each candidate's prefixed with its label. */
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

const STATUS_WORDS: Readonly<Record<string, string>> = { max_iterations_reached: 'limit reached' };

/** The comparison as a table, the judge's reasoning, and what to type next. */
export function renderComparison(comparison: GroupComparison, color: boolean): string {
  const clean = sanitizeForTerminal;
  const rows = comparison.candidates.map((row) => [
    row.rank === null ? '' : String(row.rank),
    row.label,
    (STATUS_WORDS[row.status] ?? row.status) + (row.progress ? ` (${row.progress})` : '') + (row.applied ? ', applied' : ''),
    String(row.iterations),
    row.checks_total === null ? '—' : `${row.checks_passed}/${row.checks_total}`,
    row.total_cost_usd === null ? '—' : `${row.cost_estimated ? '≈' : ''}$${row.total_cost_usd.toFixed(2)}`,
    row.total_tokens > 0 ? formatCount(row.total_tokens) : '—',
    row.duration_secs === null ? '—' : formatDuration(row.duration_secs),
    row.files_changed === null ? '—' : String(row.files_changed),
    row.insertions === null ? '—' : `+${row.insertions} −${row.deletions ?? 0}`,
    row.confidence === null ? '—' : `${Math.round(row.confidence * 100)}%`,
    row.session_id ?? '—',
  ]);
  const lines = [
    paint(`Candidates of ${comparison.group_id} (${comparison.status}): ${clean(previewLine(comparison.prompt, 80))}`, 'heading', color),
    renderTable(['#', 'CANDIDATE', 'STATUS', 'ITER', 'CHECKS', 'COST', 'TOKENS', 'TIME', 'FILES', 'LINES', 'CONF', 'SESSION'], rows, 40).trimEnd(),
  ];
  for (const row of comparison.candidates) if (row.error) lines.push(paint(`${row.label}: ${clean(row.error)}`, 'error', color));
  if (comparison.judge) {
    lines.push('', paint(`Judge (${comparison.judge.agent}${comparison.judge.model ? `, ${comparison.judge.model}` : ''})`, 'heading', color));
    lines.push(indent(clean(comparison.judge.reasoning || '(no reasoning given)')));
  }
  for (const warning of comparison.warnings) lines.push(paint(`warning: ${clean(warning)}`, 'warning', color));
  const best = comparison.candidates.find((row) => row.label === comparison.winner);
  if (comparison.applied) lines.push('', `Applied: ${comparison.applied.label}. Undo with: codeloops apply --undo ${comparison.applied.session_id}`);
  else if (best?.session_id) lines.push('', `Best: ${best.label}. Put its changes into your tree with: codeloops apply ${best.session_id}`);
  else if (comparison.status !== 'running') lines.push('', 'No candidate succeeded. Apply one anyway with: codeloops apply <session>');
  return lines.join('\n') + '\n';
}

export interface CandidatesOptions {
  json?: boolean;
  discard?: boolean;
  force?: boolean;
}

/** `codeloops candidates [group]`: the groups, or one group's comparison (`--json`); `--discard` removes its worktrees. */
export async function candidatesCommand(idOrPrefix: string | undefined, options: CandidatesOptions): Promise<number> {
  const store = openStore();
  const sources = { store, sidecarDirOf: (sessionId: string) => sidecarDir(sessionId) };
  if (idOrPrefix === undefined) {
    const groups = await listGroups(groupsDir(), (message) => process.stderr.write(`warning: ${message}\n`));
    if (options.json) {
      const comparisons = [];
      for (const group of groups) comparisons.push(await compareGroup(group, sources));
      process.stdout.write(JSON.stringify(comparisons, null, 2) + '\n');
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
    if (options.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
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
  if (options.json) process.stdout.write(JSON.stringify(comparison, null, 2) + '\n');
  else process.stdout.write(renderComparison(comparison, colorEnabled(process.stdout)));
  return 0;
}

/** Exit codes of `codeloops apply`, one per result (as `rollback`'s). */
export const APPLY_EXIT_CODES: Readonly<Record<ApplyResultKind, number>> = {
  applied: 0,
  apply_undone: 0,
  nothing_to_apply: 3,
  conflict: 4,
  snapshot_missing: 5,
};

export interface ApplyOptions {
  keep?: boolean;
  force?: boolean;
  dryRun?: boolean;
  json?: boolean;
  undo?: boolean;
  workingDir?: string;
}

/** `codeloops apply <session>`: its changes into the user's tree; `--undo` takes them back out. */
export async function applyCommand(idOrPrefix: string, options: ApplyOptions): Promise<number> {
  const store = openStore();
  const sessionId = await store.resolveId(idOrPrefix);
  const outcome = await applyCandidate({
    sessionId,
    store,
    groupsDirectory: groupsDir(),
    sidecarDirOf: (id) => sidecarDir(id),
    targetDir: options.workingDir ? path.resolve(options.workingDir) : undefined,
    force: Boolean(options.force),
    dryRun: options.dryRun,
    keep: options.keep,
    undo: options.undo,
  });
  if (options.json) process.stdout.write(JSON.stringify(outcome, null, 2) + '\n');
  else printApplyOutcome(outcome);
  return APPLY_EXIT_CODES[outcome.result];
}

function printApplyOutcome(outcome: ApplyOutcome): void {
  const color = colorEnabled(process.stdout);
  const good = outcome.result === 'applied' || outcome.result === 'apply_undone';
  const lines = [
    paint(sanitizeForTerminal(outcome.message), good ? 'success' : outcome.result === 'nothing_to_apply' ? 'info' : 'error', color),
    ...movedPathLines(outcome),
  ];
  if (outcome.worktrees_removed.length > 0) lines.push(`Removed the group's worktrees (${outcome.worktrees_removed.join(', ')}); --keep keeps them.`);
  for (const kept of outcome.worktrees_kept) lines.push(paint(`kept the worktree of ${kept.label}: ${sanitizeForTerminal(kept.reason)}`, 'warning', color));
  for (const warning of outcome.warnings) lines.push(paint(`warning: ${sanitizeForTerminal(warning)}`, 'warning', color));
  if (!outcome.dry_run && outcome.result === 'applied') lines.push(`Undo it with: codeloops apply --undo ${outcome.session_id}`);
  if (outcome.result === 'conflict') {
    const overwritable = outcome.conflicts.filter((file) => !outcome.blocked.includes(file));
    if (overwritable.length > 0)
      lines.push(`Run again with --force to overwrite your changes (they stay recoverable with: codeloops apply --undo ${outcome.session_id}).`);
    if (outcome.blocked.length > 0) lines.push('--force never removes what no snapshot holds: move those paths away first.');
  }
  process.stdout.write(lines.join('\n') + '\n');
}
