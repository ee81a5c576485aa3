import { composeCommit, type TreeComposition } from '../git/composeTree.js';
import type { Repository } from '../git/repository.js';
import { changedPaths } from '../git/treeDiff.js';
import { readTreeFiles, treeFilePaths } from '../git/treeFiles.js';
import { checkCommandSources, pytestSectionHeaders, replaceSection, type CheckToFollow, type CommandSource } from './checkCommandSources.js';
import { ProtectedPaths } from './protectedPaths.js';

/**
 * What the oracle runs the start's tests on: the final code with every file that
 * decides what the tests are and how they run put back as it was at the start, and the
 * new ones left out. As SWE-bench's harness writes its own test files over an agent's
 * patch: what the actor did to the tests cannot make them pass.
 *
 * Put back: test files and folders and the runners' configuration (as the gate names
 * them), what the checks' commands run (the package scripts, the Makefile, the pytest
 * sections, the script files), the test keys of `package.json`, the package managers'
 * configuration, pytest's section of every Python config file, and files that stand
 * in for a runner or load before it (`pytest.py`, `sitecustomize.py`, a `.pth`, a
 * `node_modules` in the tree).
 */
export interface StartTestsTree {
  composition: TreeComposition;
  /** The paths put back or left out, from the top, for the record and the feedback. */
  restored: string[];
}

/** Files that stand in for a test runner, or that Python or Node load before it, wherever they are. */
const STAND_INS = /(^|\/)(pytest\.py|py\.py|sitecustomize\.py|usercustomize\.py|[^/]*\.pth)$|(^|\/)(pytest|_pytest|node_modules)\/|^\.pnp\./;
/** The package managers' and runners' configuration the gate's own list leaves to the oracle. */
const RUNNER_FILES = /(^|\/)(\.npmrc|\.yarnrc(\.yml)?|\.pnpmfile\.cjs|bunfig\.toml|pip\.conf|\.pytest\.ini|vite\.config\.[^/]+|\.cargo\/config(\.toml)?)$/;
/** `package.json`'s keys that configure a test runner. */
const TEST_KEYS = ['jest', 'mocha', 'ava', 'tap', 'c8', 'nyc'];

export async function startTestsTree(
  repository: Repository,
  start: string,
  final: string,
  checks: readonly CheckToFollow[],
  userProtected: readonly string[],
): Promise<StartTestsTree> {
  const [startFiles, finalFiles, changes] = await Promise.all([
    treeFilePaths(repository, start),
    treeFilePaths(repository, final),
    changedPaths(repository, start, final),
  ]);
  const startSet = new Set(startFiles);
  const paths = ProtectedPaths.of([...new Set([...startFiles, ...finalFiles])], userProtected);
  const read = async (file: string) =>
    startSet.has(file)
      ? (await readTreeFiles(repository, [{ tree: start, rawPath: Buffer.from(file, 'utf8').toString('latin1') }]))[0]?.toString('utf8')
      : undefined;
  const sources = await checkCommandSources(checks, startSet, read);
  const partial = new Map<string, CommandSource[]>();
  for (const source of sources) {
    if (source.part.kind === 'npm_script' || source.part.kind === 'config_section') partial.set(source.file, [...(partial.get(source.file) ?? []), source]);
  }
  const whole = new Set(sources.filter((source) => !partial.has(source.file)).map((source) => source.file));
  const taken: string[] = [];
  const rewritten: Rewritten[] = [];
  for (const change of changes) {
    if (change.isGitLink) continue;
    const role = paths.roleOf(change.path);
    // pytest reads its section from the first of these files it finds, from its arguments' folder up, whatever the
    // check's command: one the actor added (a new pyproject.toml, a setup.cfg beside the tests) can deselect a test or
    // load a plugin that patches the code, and is no file the checks' commands name. Its section is put back (taken
    // out, for a file the start had not) wherever it is, as `package.json`'s test keys are.
    const pytest = pytestSectionHeaders(change.path);
    const sections = (partial.get(change.path) ?? []).flatMap((source) => (source.part.kind === 'config_section' ? [source.part.headers] : []));
    if (role === 'test' || role === 'runner' || whole.has(change.path) || STAND_INS.test(change.path) || RUNNER_FILES.test(change.path))
      taken.push(change.rawPath);
    else if (partial.has(change.path) || pytest || (change.path.endsWith('package.json') && startSet.has(change.path)))
      rewritten.push({
        rawPath: change.rawPath,
        path: change.path,
        scripts: (partial.get(change.path) ?? []).flatMap((source) => (source.part.kind === 'npm_script' ? [source.part.name] : [])),
        sections: pytest ? [...sections, pytest] : sections,
      });
  }
  const written = await rewrittenFiles(repository, start, final, rewritten);
  return {
    composition: { taken: { source: start, rawPaths: taken }, written },
    restored: [
      ...taken.map((raw) => Buffer.from(raw, 'latin1').toString('utf8')),
      ...written.map((file) => Buffer.from(file.rawPath, 'latin1').toString('utf8')),
    ],
  };
}

/** A file whose test parts are put back and the rest kept: the scripts the checks run, the config sections by their headers. */
interface Rewritten {
  rawPath: string;
  path: string;
  scripts: readonly string[];
  sections: readonly (readonly string[])[];
}

/** The files whose test parts are put back and the rest kept: a `package.json`'s scripts and test keys, a config's pytest section. */
async function rewrittenFiles(repository: Repository, start: string, final: string, files: readonly Rewritten[]): Promise<TreeComposition['written']> {
  const contents = await readTreeFiles(
    repository,
    files.flatMap((file) => [
      { tree: start, rawPath: file.rawPath },
      { tree: final, rawPath: file.rawPath },
    ]),
  );
  const written: { rawPath: string; content: Buffer; mode: string }[] = [];
  files.forEach((file, i) => {
    const after = contents[2 * i + 1]?.toString('utf8');
    // A config file the start had not: its sections as the start had them are none.
    const before = contents[2 * i]?.toString('utf8') ?? (file.path.endsWith('package.json') ? undefined : '');
    if (before === undefined || after === undefined) return;
    const text = file.path.endsWith('package.json') ? withStartTestKeys(before, after, file.scripts) : withStartSections(before, after, file.sections);
    if (text !== after) written.push({ rawPath: file.rawPath, content: Buffer.from(text, 'utf8'), mode: '100644' });
  });
  return written;
}

/** The final `package.json` with the start's scripts the checks run (and their `pre`/`post`) and test keys; the rest as the actor left it. */
function withStartTestKeys(before: string, after: string, scriptNames: readonly string[]): string {
  const old = parseObject(before);
  const now = parseObject(after);
  if (!old || !now) return before;
  const scripts = { ...(objectOf(now.scripts) ?? {}) };
  const oldScripts = objectOf(old.scripts) ?? {};
  for (const name of scriptNames) {
    for (const key of [`pre${name}`, name, `post${name}`]) {
      if (key in oldScripts) scripts[key] = oldScripts[key];
      else delete scripts[key];
    }
  }
  const result: Record<string, unknown> = { ...now, scripts };
  for (const key of TEST_KEYS) {
    if (key in old) result[key] = old[key];
    else delete result[key];
  }
  return `${JSON.stringify(result, null, 2)}\n`;
}

function withStartSections(before: string, after: string, sections: readonly (readonly string[])[]): string {
  let text = after;
  for (const headers of sections) text = replaceSection(text, before, headers);
  return text;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    return objectOf(JSON.parse(text));
  } catch {
    return null;
  }
}

function objectOf(value: unknown): Record<string, unknown> | null {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

/** The oracle's tree as a commit on top of `final`: the final code with the start's tests (see above). */
export async function startTestsCommit(
  repository: Repository,
  start: string,
  final: string,
  checks: readonly CheckToFollow[],
  userProtected: readonly string[],
): Promise<{ commit: string; restored: string[] }> {
  const tree = await startTestsTree(repository, start, final, checks, userProtected);
  const { commit } = await composeCommit(repository, final, tree.composition, `codeloops: the start's tests on ${final.slice(0, 12)}`);
  return { commit, restored: tree.restored };
}
