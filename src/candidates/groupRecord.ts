import fs from 'node:fs';
import path from 'node:path';
import {
  groupRecordLineSchema,
  isGroupId,
  type GroupRecordInput,
  type GroupRecordLine,
  type GroupRecordLineOf,
  type GroupStatus,
  type Judgment,
} from '../sessionFormat/candidateGroups.js';
import { GROUP_RECORD_FILE } from '../sessionFormat/candidateGroupFiles.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { AppendOnlyFile } from '../sessionWriter/appendOnlyFile.js';
import { isProcessAlive } from '../process/processGroup.js';
import { readJsonlRecords } from '../sessions/sidecarReader.js';

/**
 * A candidate group's record, `sidecars/_groups/<group>/group.jsonl`: written
 * append-only by the runner of the group (and by `apply`, a discard or a prune), read
 * back into a `GroupState`.
 */

export class GroupNotFoundError extends CodeloopsError {
  override name = 'GroupNotFoundError';
  constructor(what: string, directory: string) {
    super('group_not_found', `No candidate group "${what}" in ${directory}.`, { id: what, directory });
  }
}

/** Appends lines to a group's record; every line is checked against its schema first and synced. */
export class GroupRecorder {
  private constructor(
    readonly groupId: string,
    readonly directory: string,
    private readonly file: AppendOnlyFile,
  ) {}

  /** Creates the group's folder (it must not exist: that is how two groups never share an id). */
  static create(groupsDirectory: string, groupId: string): GroupRecorder {
    fs.mkdirSync(groupsDirectory, { recursive: true, mode: 0o700 });
    const directory = path.join(groupsDirectory, groupId);
    fs.mkdirSync(directory, { mode: 0o700 });
    return new GroupRecorder(groupId, directory, AppendOnlyFile.createExclusive(path.join(directory, GROUP_RECORD_FILE)));
  }

  static open(groupsDirectory: string, groupId: string): GroupRecorder {
    const directory = path.join(groupsDirectory, groupId);
    return new GroupRecorder(groupId, directory, AppendOnlyFile.openForAppend(path.join(directory, GROUP_RECORD_FILE)));
  }

  record(input: GroupRecordInput, at: Date = new Date()): GroupRecordLine {
    const line = groupRecordLineSchema.parse({ ...input, timestamp: at.toISOString(), group_id: this.groupId });
    this.file.appendLine(line);
    this.file.sync();
    return line;
  }

  close(): void {
    this.file.close();
  }
}

/** Appends one line to a group's record and closes it: for `apply`, a discard, a prune. */
export function appendToGroup(groupsDirectory: string, groupId: string, input: GroupRecordInput): void {
  const recorder = GroupRecorder.open(groupsDirectory, groupId);
  try {
    recorder.record(input);
  } finally {
    recorder.close();
  }
}

/** A group as its record tells it. */
export interface GroupState {
  id: string;
  directory: string;
  started: GroupRecordLineOf<'group_started'>;
  /** Session ids by candidate label, as their loops started. */
  sessions: Map<string, string>;
  finished: Map<string, GroupRecordLineOf<'candidate_finished'>>;
  judgment: Judgment | null;
  end: GroupRecordLineOf<'group_finished'> | null;
  /** The candidate whose changes are in the user's tree (an apply not undone). */
  applied: { label: string; session_id: string; apply: number } | null;
  /** Candidates whose worktrees were removed. */
  removed: Set<string>;
  /** Lines that were skipped, and why. */
  warnings: string[];
}

/** Running, or how it ended; `crashed` when it never ended and its runner is gone. */
export function groupStatus(state: GroupState): GroupStatus {
  if (state.end) return state.end.status;
  return isProcessAlive(state.started.pid) ? 'running' : 'crashed';
}

export async function readGroup(groupsDirectory: string, groupId: string): Promise<GroupState> {
  if (!isGroupId(groupId)) throw new GroupNotFoundError(groupId, groupsDirectory);
  const directory = path.join(groupsDirectory, groupId);
  const file = path.join(directory, GROUP_RECORD_FILE);
  if (!fs.existsSync(file)) throw new GroupNotFoundError(groupId, groupsDirectory);
  const warnings: string[] = [];
  const lines = await readJsonlRecords(
    file,
    groupRecordLineSchema,
    (warning) => warnings.push(warning),
    (line) => line,
  );
  return foldGroup(groupId, directory, lines, warnings);
}

export function foldGroup(groupId: string, directory: string, lines: readonly GroupRecordLine[], warnings: string[] = []): GroupState {
  const first = lines[0];
  if (first?.type !== 'group_started')
    throw new CodeloopsError('group_not_found', `The record of candidate group ${groupId} has no start; it cannot be read.`, { id: groupId });
  const state: GroupState = {
    id: groupId,
    directory,
    started: first,
    sessions: new Map(),
    finished: new Map(),
    judgment: null,
    end: null,
    applied: null,
    removed: new Set(),
    warnings,
  };
  for (const line of lines.slice(1)) {
    switch (line.type) {
      case 'candidate_started':
        state.sessions.set(line.label, line.session_id);
        break;
      case 'candidate_finished':
        state.finished.set(line.label, line);
        break;
      case 'judged':
        state.judgment = line.judgment;
        break;
      case 'group_finished':
        state.end = line;
        break;
      case 'candidate_applied':
        state.applied = { label: line.label, session_id: line.session_id, apply: line.apply };
        break;
      case 'candidate_apply_undone':
        if (state.applied?.session_id === line.session_id && state.applied.apply === line.apply) state.applied = null;
        break;
      case 'worktrees_removed':
        for (const label of line.removed) state.removed.add(label);
        break;
      case 'group_started':
        break;
    }
  }
  return state;
}

/** Every group's id, newest first (ids sort by their start time). */
export function listGroupIds(groupsDirectory: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(groupsDirectory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names.filter(isGroupId).sort().reverse();
}

/** Every readable group, newest first; unreadable ones are skipped with a warning. */
export async function listGroups(groupsDirectory: string, warn: (message: string) => void = () => {}): Promise<GroupState[]> {
  const groups: GroupState[] = [];
  for (const id of listGroupIds(groupsDirectory)) {
    try {
      groups.push(await readGroup(groupsDirectory, id));
    } catch (error) {
      warn(`candidate group ${id}: ${(error as Error).message}`);
    }
  }
  return groups;
}

/**
 * What a user typed: a group id, a unique prefix of one, `latest`, or the id of one
 * of its candidates' sessions (read from that session's `session_start`).
 */
export async function resolveGroupId(
  groupsDirectory: string,
  idOrPrefix: string,
  groupOfSession: (sessionId: string) => Promise<string | undefined>,
): Promise<string> {
  // Every id starts with the empty prefix: it would pick whichever group is alone, or any of them.
  if (idOrPrefix === '')
    throw new CodeloopsError('usage', 'The group id is empty: give a group id, a unique prefix of one, "latest", or one of its sessions.', { id: '' });
  const ids = listGroupIds(groupsDirectory);
  if (idOrPrefix === 'latest' || idOrPrefix === 'last') {
    if (ids[0]) return ids[0];
    throw new GroupNotFoundError(idOrPrefix, groupsDirectory);
  }
  if (ids.includes(idOrPrefix)) return idOrPrefix;
  const matches = ids.filter((id) => id.startsWith(idOrPrefix) || id.startsWith(`group-${idOrPrefix}`));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    throw new CodeloopsError('usage', `"${idOrPrefix}" matches ${matches.length} candidate groups (${matches.slice(0, 5).join(', ')}); give more of the id.`, {
      matches: matches.slice(0, 20),
    });
  const fromSession = await groupOfSession(idOrPrefix).catch(() => undefined);
  if (fromSession && ids.includes(fromSession)) return fromSession;
  throw new GroupNotFoundError(idOrPrefix, groupsDirectory);
}
