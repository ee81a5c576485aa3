import type { CriticFinding } from '../critic/criticDecision.js';
import type { Repository } from '../git/repository.js';
import { readFileAt } from '../git/snapshots.js';
import type { Finding } from '../sessionFormat/reviewRecords.js';

/**
 * The loop's side of review: the critic's findings checked against the tree they
 * are about, and the actor's word on what it addressed.
 */

/**
 * Gives each finding its id (`F<iteration>.<n>`) and checks it against the
 * iteration's tree after the actor: the file must be there and the lines within it.
 * A finding that points nowhere (a file the critic misnamed, lines past the end) is
 * kept, as a general finding: what it says still counts.
 */
export async function anchorFindings(
  repository: Repository,
  commit: string,
  iteration: number,
  findings: readonly CriticFinding[],
  /** Where the loop ran, from the top of the repository (`''` at the top): a critic there names files from there. */
  workingDirPrefix = '',
): Promise<Finding[]> {
  const lineCounts = new Map<string, number | undefined>();
  const linesOf = async (file: string): Promise<number | undefined> => {
    if (!lineCounts.has(file)) {
      const bytes = await readFileAt(repository, commit, normalizePath(file)).catch(() => undefined);
      lineCounts.set(file, bytes === undefined ? undefined : countLines(bytes));
    }
    return lineCounts.get(file);
  };
  const anchored: Finding[] = [];
  for (const [index, finding] of findings.entries()) {
    // The critic ran in the loop's folder: a path is first read from there, then from the top.
    const named = finding.file === null ? null : normalizePath(finding.file);
    const candidates =
      named === null ? [] : workingDirPrefix === '' || named.startsWith(`${workingDirPrefix}/`) ? [named] : [`${workingDirPrefix}/${named}`, named];
    let file = named;
    let lines: number | undefined;
    for (const candidate of candidates) {
      lines = await linesOf(candidate);
      if (lines !== undefined) {
        file = candidate;
        break;
      }
    }
    const inRange = lines !== undefined && (finding.line === null || (finding.line <= lines && (finding.endLine ?? finding.line) <= Math.max(lines, 1)));
    anchored.push({
      id: `F${iteration}.${index + 1}`,
      file,
      line: finding.line,
      end_line: finding.endLine,
      severity: finding.severity,
      message: finding.message,
      anchored: file !== null && inRange,
    });
  }
  return anchored;
}

/** A path as a critic may write it (`./src/a.ts`, `/src/a.ts`) as the repository has it. */
function normalizePath(file: string): string {
  return file
    .replace(/\\/g, '/')
    .replace(/^(\.\/)+/, '')
    .replace(/^\/+/, '');
}

function countLines(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at >= 0; at = bytes.indexOf(0x0a, at + 1)) lines += 1;
  return bytes[bytes.length - 1] === 0x0a ? lines : lines + 1;
}

const REVIEW_ID = /\b[FUR]\d+\.\d+\b/g;

/**
 * The review items the actor says it addressed: the ids on its last `Addressed:`
 * line (the actor prompt asks for one), among those it was given.
 */
export function addressedClaims(actorText: string, given: ReadonlySet<string>): string[] {
  const lines = actorText.split('\n').filter((line) => /^\W*addressed\W*:/i.test(line.trim()));
  const last = lines.at(-1);
  if (!last) return [];
  return [...new Set(last.match(REVIEW_ID) ?? [])].filter((id) => given.has(id));
}
