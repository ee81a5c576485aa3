import type { CriticFinding } from '../critic/criticDecision.js';
import type { Repository } from '../git/repository.js';
import { readFileAt } from '../git/snapshots.js';
import type { Finding } from '../sessionFormat/reviewRecords.js';
import { repositoryPath } from '../text/humanize.js';

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
  const locate = fileLocator(repository, commit, workingDirPrefix);
  const anchored: Finding[] = [];
  for (const [index, finding] of findings.entries()) {
    const found = finding.file === null ? undefined : await locate(finding.file);
    const file = found?.file ?? (finding.file === null ? null : repositoryPath(finding.file));
    const lines = found?.lines;
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

/**
 * Finds a file the critic names in a snapshot, and how many lines it has: the critic
 * ran in the loop's folder, so a path is first read from there, then from the top.
 * Undefined when the snapshot has no such file. Each file is read once.
 */
export function fileLocator(
  repository: Repository,
  commit: string,
  workingDirPrefix = '',
): (named: string) => Promise<{ file: string; lines: number } | undefined> {
  const lineCounts = new Map<string, Promise<number | undefined>>();
  const linesOf = (file: string): Promise<number | undefined> => {
    if (!lineCounts.has(file))
      lineCounts.set(
        file,
        readFileAt(repository, commit, file).then(
          (bytes) => (bytes === undefined ? undefined : countLines(bytes)),
          () => undefined,
        ),
      );
    return lineCounts.get(file)!;
  };
  return async (named) => {
    const path = repositoryPath(named);
    const candidates = workingDirPrefix === '' || path.startsWith(`${workingDirPrefix}/`) ? [path] : [`${workingDirPrefix}/${path}`, path];
    for (const candidate of candidates) {
      const lines = await linesOf(candidate);
      if (lines !== undefined) return { file: candidate, lines };
    }
    return undefined;
  };
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
