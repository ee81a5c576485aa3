import type { CriticCommand, RequirementStatus } from '../sessionFormat/verification.js';
import type { CriticRequirement } from './criticDecision.js';
import { requirementId, type TaskRequirement } from './taskRequirements.js';

/**
 * A requirement's evidence, as the critic wrote it, checked against the record: a
 * check it names must have passed on the iteration's tree, a command it names must be
 * among the critic's own recorded tool calls and not have failed, a file and line it
 * names must exist in the iteration's snapshot. Evidence nothing in the record
 * confirms counts as none; evidence the record contradicts (a named check that failed,
 * a named command that only failed) counts as none too. Pure: the caller reads the files.
 */

export interface EvidenceRecord {
  /** The iteration's checks, run on its tree. */
  checks: readonly { name: string; passed: boolean }[];
  /** What the critic ran, from its stream. */
  commands: readonly CriticCommand[];
  /** How many lines each file `fileReferences` named has in the snapshot; undefined: no such file. */
  lines: ReadonlyMap<string, number | undefined>;
}

export interface FileReference {
  file: string;
  line: number;
  endLine: number;
}

/** `src/a.js:12`, `src/a.js:12-14`, `src/a.js#L12`, `src/a.js line 12`, `` `src/a.js`, lines 3–5 ``: a path with an extension or a folder, then lines. */
const FILE_REFERENCE =
  /(?<![\w/.@-])(?:\.\/)?((?:[\w@.-]+\/)*[\w@-][\w@.-]*\.\w+|(?:[\w@.-]+\/)+[\w@.-]+)`?(?::(\d+)(?:\s*[-–]\s*(\d+))?|#L(\d+)(?:-L?(\d+))?|,?\s+(?:at\s+|on\s+)?lines?\s+(\d+)(?:\s*(?:[-–]|to)\s*(\d+))?)/g;

/**
 * The checklist on one iteration: each requirement as the critic answered it (by its
 * id, else by its text verbatim), with its evidence checked against the record. One
 * the critic did not answer is not judged (`met` null), and so not met.
 */
export function judgeRequirements(checklist: readonly TaskRequirement[], answered: readonly CriticRequirement[], record: EvidenceRecord): RequirementStatus[] {
  return checklist.map((requirement) => {
    const answer =
      answered.find((each) => each.id !== null && requirementId(each.id) === requirement.id) ??
      answered.find((each) => squash(each.text).toLowerCase() === squash(requirement.text).toLowerCase());
    const evidence = answer?.evidence ?? '';
    return {
      id: requirement.id,
      text: requirement.text,
      met: answer?.met ?? null,
      evidence,
      confirmed_by: evidence ? confirmEvidence(evidence, record) : null,
    };
  });
}

/** The checklist a critic's first decision gives, when the task's prompt has none: its requirements in order, numbered afresh. */
export function checklistOfCritic(answered: readonly CriticRequirement[]): TaskRequirement[] {
  return answered.filter((each) => each.text.trim()).map((each, index) => ({ id: `REQ${index + 1}`, text: each.text.trim() }));
}

/** Every file the critic's evidence names, for the caller to count their lines in the snapshot. */
export function filesNamedIn(answered: readonly CriticRequirement[]): string[] {
  return [...new Set(answered.flatMap((each) => fileReferences(each.evidence).map((reference) => reference.file)))];
}

/** The files and lines a piece of evidence names. */
export function fileReferences(evidence: string): FileReference[] {
  const references: FileReference[] = [];
  for (const match of evidence.matchAll(FILE_REFERENCE)) {
    const line = Number(match[2] ?? match[4] ?? match[6]);
    const end = match[3] ?? match[5] ?? match[7];
    if (!Number.isInteger(line) || line < 1) continue;
    references.push({ file: match[1]!, line, endLine: end === undefined ? line : Math.max(line, Number(end)) });
  }
  return references;
}

/**
 * What in the record confirms the evidence (`check tests passed`, `` `npm test` ok ``,
 * `src/a.js:12`), or null when nothing does or something contradicts it.
 */
export function confirmEvidence(evidence: string, record: EvidenceRecord): string | null {
  const confirmed: string[] = [];
  for (const check of record.checks) {
    if (!mentions(evidence, check.name)) continue;
    if (!check.passed) return null;
    confirmed.push(`check ${check.name} passed`);
  }
  for (const named of namedCommands(evidence, record.commands)) {
    const good = named.find((command) => command.ok !== false);
    if (!good) return null;
    confirmed.push(`\`${good.command}\` ${good.ok === null ? 'ran' : 'ok'}`);
  }
  for (const reference of fileReferences(evidence)) {
    const lines = record.lines.get(reference.file);
    if (lines !== undefined && reference.endLine <= lines) confirmed.push(`${reference.file}:${reference.line}`);
  }
  return confirmed.length > 0 ? [...new Set(confirmed)].join(', ') : null;
}

/**
 * The recorded commands the evidence names, grouped by what named them: a quoted span
 * (`` `npm test` ``) names every recorded command that contains it; a recorded command
 * written out in full in the evidence names itself.
 */
function namedCommands(evidence: string, commands: readonly CriticCommand[]): CriticCommand[][] {
  const named: CriticCommand[][] = [];
  for (const span of evidence.matchAll(/`([^`\n]+)`/g)) {
    const wanted = squash(span[1]!);
    if (wanted.length < 2 || FILE_ONLY.test(wanted)) continue;
    const matching = commands.filter((command) => squash(command.command).includes(wanted));
    if (matching.length > 0) named.push(matching);
  }
  for (const command of commands) {
    const inner = squash(unwrapShell(command.command));
    if (inner.length >= 3 && mentions(evidence, inner) && !named.some((group) => group.includes(command))) named.push([command]);
  }
  return named;
}

/** A quoted file name (`src/a.js`, `src/a.js:3`) is a file, not a command. */
const FILE_ONLY = /^[\w@./-]+\.\w+(?::\d+(?:-\d+)?)?$/;

/** `bash -lc 'npm test'` as the command it runs: the way Codex and others record a shell call. */
function unwrapShell(command: string): string {
  const wrapped = /^(?:\S*\/)?(?:ba|z|da)?sh\s+-\w*c\s+(['"]?)([\s\S]*)\1\s*$/.exec(command.trim());
  return wrapped ? wrapped[2]! : command;
}

function squash(text: string): string {
  return text.trim().replace(/\s+/g, ' ');
}

/** Whether the text names it as a whole (`tests` in "the tests check passed", not in "contests"). */
function mentions(text: string, name: string): boolean {
  const escaped = squash(name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // Not inside a path: a check named `test` is not named by `test/sum.test.js:4`.
  return new RegExp(`(?<![\\w./-])${escaped}(?![\\w/-]|\\.\\w)`, 'i').test(squash(text));
}
