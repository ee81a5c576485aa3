import type { CheckSpec } from '../checks/runCheck.js';
import type { VerifySettings } from '../config/runSettings.js';
import type { Repository } from '../git/repository.js';
import { readTreeFiles, treeFilePaths } from '../git/treeFiles.js';
import type { TreeEntryChange } from '../git/treeDiff.js';
import type { ProtectedChange } from '../sessionFormat/verification.js';
import type { NestedRepository } from '../sessionFormat/runEvents.js';
import { checkCommandSources, sourceChange, type CommandSource } from './checkCommandSources.js';
import { ProtectedPaths } from './protectedPaths.js';
import { addedSkips, testMarkersOf } from './testMarkers.js';

/** What the loop started from, read once: the protected patterns and what the checks rest on. */
interface Baseline {
  tree: string;
  paths: ProtectedPaths;
  sources: CommandSource[];
  /** By file: the sources in it. */
  sourcesByFile: Map<string, CommandSource[]>;
}

/**
 * Judges the actor's changes to protected files against the tree the loop started
 * from (the task's first snapshot), so that a weakening made in one iteration stands
 * in every later one until it is put back. Adding tests is never weakening.
 */
export class ProtectedFilesWatch {
  private baseline: Baseline | undefined;

  constructor(
    private readonly repository: Repository,
    private readonly settings: VerifySettings,
    private readonly checks: readonly CheckSpec[],
    /** The loop's working directory from the repository's top: where checks without a folder run. */
    private readonly workingDirPrefix: string,
  ) {}

  /** The patterns in force, once the start tree is known. */
  get patterns(): readonly string[] {
    return this.baseline?.paths.patterns ?? [];
  }

  /**
   * The weakenings that stand on `tree`: `changes` are the path changes from the
   * start tree to it, `nested` the nested repositories it has that the start did not.
   */
  async weakenings(startTree: string, tree: string, changes: readonly TreeEntryChange[], nested: readonly NestedRepository[]): Promise<ProtectedChange[]> {
    const baseline = await this.baselineOf(startTree);
    const found: ProtectedChange[] = [];
    const becameRepositories = nested.map((repository) => repository.path);
    const inNested = (file: string) => becameRepositories.some((folder) => file === folder || file.startsWith(`${folder}/`));
    for (const folder of becameRepositories) {
      const hidden = changes.filter(
        (change) => change.presentInSource && (change.path === folder || change.path.startsWith(`${folder}/`)) && baseline.paths.roleOf(change.path),
      );
      if (hidden.length > 0)
        found.push({
          file: folder,
          kind: 'nested_repository',
          detail: `${hidden.length} protected file${hidden.length === 1 ? '' : 's'} in it, such as ${hidden[0]!.path}`,
        });
    }
    const judged = changes.filter(
      (change) => !change.isGitLink && !inNested(change.path) && (baseline.paths.roleOf(change.path) || baseline.sourcesByFile.has(change.path)),
    );
    const contents = await readTreeFiles(
      this.repository,
      judged.flatMap((change) => [
        { tree: startTree, rawPath: change.rawPath },
        { tree, rawPath: change.rawPath },
      ]),
    );
    judged.forEach((change, i) => {
      const before = contents[2 * i]?.toString('utf8');
      const after = contents[2 * i + 1]?.toString('utf8');
      found.push(...judgeFile(change.path, baseline, before, after));
    });
    return found;
  }

  private async baselineOf(startTree: string): Promise<Baseline> {
    if (this.baseline?.tree === startTree) return this.baseline;
    const files = await treeFilePaths(this.repository, startTree);
    const fileSet = new Set(files);
    const read = async (file: string) =>
      fileSet.has(file)
        ? (await readTreeFiles(this.repository, [{ tree: startTree, rawPath: Buffer.from(file, 'utf8').toString('latin1') }]))[0]?.toString('utf8')
        : undefined;
    const sources = await checkCommandSources(
      // An acceptance check's command and files are never named to the agents, not even as what a weakening touched.
      this.checks.filter((check) => !check.hidden).map((check) => ({ name: check.name, run: check.run, folder: check.folder ?? this.workingDirPrefix })),
      fileSet,
      read,
    );
    const sourcesByFile = new Map<string, CommandSource[]>();
    for (const source of sources) sourcesByFile.set(source.file, [...(sourcesByFile.get(source.file) ?? []), source]);
    this.baseline = { tree: startTree, paths: ProtectedPaths.of(files, this.settings.protected), sources, sourcesByFile };
    return this.baseline;
  }
}

/** One file's weakenings, from its text at the start and now (undefined: absent). */
function judgeFile(file: string, baseline: Baseline, before: string | undefined, after: string | undefined): ProtectedChange[] {
  const found: ProtectedChange[] = [];
  for (const source of baseline.sourcesByFile.get(file) ?? []) {
    const detail = sourceChange(source, before, after);
    if (detail) found.push({ file, kind: 'check_command_changed', detail: `${detail} (the ${source.check} check runs it)` });
  }
  if (found.length > 0) return found.slice(0, 1);
  const state = before === undefined ? 'added' : after === undefined ? 'deleted' : 'modified';
  switch (baseline.paths.roleOf(file)) {
    case 'config':
      return [{ file, kind: 'config_changed', detail: state }];
    case 'ci':
      return [{ file, kind: 'ci_changed', detail: state }];
    case 'runner':
      return [{ file, kind: 'check_command_changed', detail: `the test runner's configuration ${state}` }];
    case 'test':
      return testWeakenings(file, before, after);
    default:
      return [];
  }
}

function testWeakenings(file: string, before: string | undefined, after: string | undefined): ProtectedChange[] {
  if (before !== undefined && after === undefined) return [{ file, kind: 'test_file_deleted', detail: describeTests(file, before) }];
  const old = before === undefined ? { tests: 0, skips: [] } : testMarkersOf(file, before);
  const now = after === undefined ? undefined : testMarkersOf(file, after);
  if (!old || !now) return [];
  const found: ProtectedChange[] = [];
  if (now.tests < old.tests) found.push({ file, kind: 'tests_removed', detail: `${old.tests - now.tests} of ${old.tests} test cases removed` });
  // In a new file, only narrowing counts (`it.only` silences every other test); a skipped new test weakens nothing.
  const added = addedSkips(old.skips, now.skips).filter((marker) => before !== undefined || /only|^f(it|describe)$/.test(marker));
  if (added.length > 0) found.push({ file, kind: 'skip_added', detail: [...new Set(added)].join(', ') });
  return found;
}

function describeTests(file: string, text: string): string {
  const markers = testMarkersOf(file, text);
  return markers ? `it had ${markers.tests} test case${markers.tests === 1 ? '' : 's'}` : 'deleted';
}
