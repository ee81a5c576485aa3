// The lint: typescript-eslint's recommended rules, and the import rules that keep the
// design's layers apart. `npm test` runs it before the tests; a test of this file
// (test/unit/lintLayers.test.ts) shows each rule catching a deliberate violation.
import js from '@eslint/js';
import globals from 'globals';
import { builtinModules } from 'node:module';
import tseslint from 'typescript-eslint';
import codeloops from './eslint-rules/plugin.mjs';

/**
 * The engine's folders, lowest first, and what each may import besides itself.
 * A folder never imports one above it: a lower layer that needs something of a
 * higher one means the thing belongs lower (or in sessionFormat/, the home of every
 * record and wire format).
 */
const LOWER = [
  'text',
  'process',
  'files',
  'sessionFormat',
  'git',
  'agents',
  'testRunners',
  'checks',
  'budget',
  'config',
  'notify',
  'critic',
  'sessionWriter',
  'sessions',
  'verify',
];
const ENGINE = [...LOWER, 'loop', 'worktreeLoops', 'rollback', 'review', 'resume', 'replay', 'sessionView', 'candidates', 'sessionBundle', 'eval', 'queue'];
const MAY_IMPORT = {
  text: [],
  process: [],
  files: [],
  sessionFormat: ['text'],
  git: ['text', 'process', 'files', 'sessionFormat'],
  agents: ['text', 'process', 'sessionFormat'],
  // Test runners' own reports, test by test: which runner a command runs, how its report is asked for, how it is read.
  testRunners: ['text', 'sessionFormat'],
  checks: ['text', 'process', 'sessionFormat', 'testRunners'],
  budget: ['text', 'sessionFormat'],
  config: ['text', 'files', 'sessionFormat', 'agents', 'checks', 'budget'],
  // Word sent where the global config's [notify] says: a program run, a webhook posted.
  notify: ['text', 'process', 'sessionFormat', 'config'],
  critic: ['text', 'sessionFormat', 'agents', 'checks'],
  // The records it appends to are opened as the readers open them (files/regularFile.ts).
  sessionWriter: ['text', 'files', 'sessionFormat'],
  sessions: ['text', 'process', 'files', 'sessionFormat', 'git'],
  // What the actor changed that the gate rests on: tests, CI, the config, what the checks run.
  verify: ['text', 'sessionFormat', 'git', 'checks', 'config'],
  loop: LOWER,
  // A loop in a worktree made for it (a candidate's, an eval run's, a queued task's): its place, its readying, its removal.
  worktreeLoops: [...LOWER, 'loop'],
  rollback: [...LOWER, 'loop'],
  review: [...LOWER, 'loop'],
  resume: [...LOWER, 'loop'],
  replay: [...LOWER, 'loop'],
  sessionView: [...LOWER, 'loop'],
  // Candidate groups run loops in worktrees and apply one (rollback's move, the other way).
  candidates: [...LOWER, 'loop', 'worktreeLoops', 'rollback'],
  // Sessions exported and imported as bundles, candidate groups' records with them.
  sessionBundle: [...LOWER, 'candidates'],
  // Evals run a suite's loops in worktrees, then each task's acceptance in a clean one; shards travel as session bundles.
  eval: [...LOWER, 'loop', 'worktreeLoops', 'sessionBundle'],
  // A queue of tasks runs each as a loop in its own worktree, resumed after a crash or an answer; a shard's tasks leave as a bundle.
  queue: [...LOWER, 'loop', 'worktreeLoops', 'resume', 'sessionBundle'],
  // The three surfaces drive the engine; none of them imports another, but the CLI starts the server (`codeloops ui`).
  server: ENGINE,
  cli: [...ENGINE, 'server'],
  extension: ENGINE,
};
const FOLDERS = Object.keys(MAY_IMPORT);

/** Import patterns (gitignore-style, as no-restricted-imports reads them) that reach a folder of src/ from anywhere. */
const folderPatterns = (folder) => [`**/${folder}/*`, `**/${folder}`];

/**
 * The one module of the extension that starts the runner (a child process): every other
 * module asks it, so that the runner's answers are read one way and `--trust` is passed
 * from one place.
 */
const RUNNER_CLIENT = 'src/extension/runner/runnerClient.ts';
const PROCESS_MODULES = ['child_process', 'node:child_process', 'execa'].map((name) => ({
  name,
  message: `Only ${RUNNER_CLIENT} starts processes in the extension: ask the RunnerClient (extension/runner/) instead.`,
}));

/**
 * The extension's own layers, lowest first: what each folder of src/extension/ may
 * import of its siblings. The runner client and the diff documents serve everything;
 * the loops' controllers (runs/) serve the views and commands above them; candidate
 * groups, the top feature, build on runs, the sessions tree and time travel. The base
 * files at its root (ports, ids, settings, the emitter, the lazy loader, VS Code's
 * window) import no folder; the composition (extension.ts, commands.ts,
 * sessionCommands.ts) imports any.
 */
const EXTENSION_MAY_IMPORT = {
  runner: [],
  diffs: [],
  runs: ['runner'],
  sessionsTree: ['runner', 'runs'],
  timeTravel: ['runner', 'runs'],
  review: ['diffs'],
  viewer: ['diffs', 'runner', 'runs'],
  queue: ['runner'],
  chat: ['runner', 'runs', 'timeTravel'],
  candidates: ['runner', 'runs', 'sessionsTree', 'timeTravel'],
};
const EXTENSION_BASE = ['editorPorts', 'emitter', 'ids', 'settings', 'lazyBundle', 'vscodeWindow'];

/** The import patterns that keep a folder of src/extension/ from its siblings above it (or the base files from every folder). */
function extensionInnerPatterns(folder) {
  const siblings = Object.keys(EXTENSION_MAY_IMPORT);
  const forbidden = folder === null ? siblings : siblings.filter((other) => other !== folder && !EXTENSION_MAY_IMPORT[folder].includes(other));
  if (forbidden.length === 0) return [];
  const allowed = folder === null ? 'no folder of src/extension/' : EXTENSION_MAY_IMPORT[folder].join(', ') || 'no other folder of src/extension/';
  return [
    {
      regex: `^\\.{1,2}/(${forbidden.join('|')})/`,
      message: `${folder === null ? 'The base files of src/extension/' : `src/extension/${folder}/`} may import ${allowed}: the extension's layers go one way (EXTENSION_MAY_IMPORT in eslint.config.mjs).`,
    },
  ];
}

const layerRule = (folder, { mayStartProcesses = false, innerPatterns = [] } = {}) => {
  const forbidden = FOLDERS.filter((other) => other !== folder && !MAY_IMPORT[folder].includes(other));
  const below = MAY_IMPORT[folder].length > 0 ? MAY_IMPORT[folder].join(', ') : 'nothing else of src/';
  return {
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths:
            folder === 'extension'
              ? mayStartProcesses
                ? []
                : PROCESS_MODULES
              : [{ name: 'vscode', message: 'Only src/extension/ may import vscode: the engine runs in the CLI and the web server too.' }],
          patterns: [
            {
              group: forbidden.flatMap(folderPatterns),
              message: `src/${folder}/ may import only ${below}: the layers go one way (see eslint.config.mjs).`,
            },
            ...(folder === 'sessionFormat' ? [] : [{ group: ['zod', 'zod/*'], message: 'Import z from src/sessionFormat/zod.ts: one zod, configured once.' }]),
            ...innerPatterns,
          ],
        },
      ],
    },
  };
};

const layerRules = [
  ...FOLDERS.map((folder) => ({ files: [`src/${folder}/**/*.ts`], ...layerRule(folder) })),
  ...Object.keys(EXTENSION_MAY_IMPORT).map((inner) => ({
    files: [`src/extension/${inner}/**/*.ts`],
    ...layerRule('extension', { innerPatterns: extensionInnerPatterns(inner) }),
  })),
  { files: EXTENSION_BASE.map((name) => `src/extension/${name}.ts`), ...layerRule('extension', { innerPatterns: extensionInnerPatterns(null) }) },
  { files: [RUNNER_CLIENT], ...layerRule('extension', { mayStartProcesses: true, innerPatterns: extensionInnerPatterns('runner') }) },
];

const NODE_MODULES = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

const NO_BARRELS = { selector: 'ExportAllDeclaration', message: 'No barrel files: import from the module that declares the thing.' };

/**
 * A CLI command never imports another command (type-only imports and lazy `import()`s
 * included): what two commands share lives in a module of its own, so that each
 * command reads, changes and loads alone, and no two import each other.
 */
const COMMAND_IMPORT_MESSAGE =
  'A command (src/cli/*Command.ts) never imports another: put what commands share in a module of its own (runSetup.ts, openStore.ts, moveOutcomeText.ts…).';
const commandRules = {
  files: ['src/cli/*Command.ts'],
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ regex: '(^|/)[A-Za-z]*Command(\\.js)?$', message: COMMAND_IMPORT_MESSAGE }] }],
    'no-restricted-syntax': ['error', NO_BARRELS, { selector: 'ImportExpression[source.value=/Command(\\.js)?$/]', message: COMMAND_IMPORT_MESSAGE }],
  },
};

/**
 * Sizes a reader can hold in mind: a function fits on a screen (80 lines, blank lines
 * and comments aside) and nests at most 4 blocks deep; a class body holds at most 400
 * lines and a file 600 (eslint-rules/maxClassLines.mjs; blank lines and comments aside
 * too): past that, a cohesive part wants a collaborator or a module of its own. A
 * declarative table may be longer when an eslint-disable comment beside it says why.
 * Tests are exempt from the lengths (a `describe` is a list of cases), not from the depth.
 */
const sizeRules = [
  {
    files: ['src/**/*.ts', 'webview-ui/**/*.ts'],
    plugins: { codeloops },
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 600, skipBlankLines: true, skipComments: true }],
      'codeloops/max-class-lines': ['error', { max: 400 }],
    },
  },
  { files: ['**/*.ts'], rules: { 'max-depth': ['error', 4] } },
];

/** No import cycles anywhere, type-only imports included (see eslint-rules/noImportCycles.mjs). */
const cycleRules = { files: ['**/*.ts'], plugins: { codeloops }, rules: { 'codeloops/no-import-cycles': 'error' } };

export default tseslint.config(
  { ignores: ['dist/', 'out/', '.cache/', 'node_modules/', 'test-output/', 'test/fixtures/', 'media/', '**/*.js', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-syntax': ['error', NO_BARRELS],
    },
  },
  ...layerRules,
  commandRules,
  ...sizeRules,
  cycleRules,
  {
    files: ['webview-ui/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'The webview talks to the extension by messages (src/sessionView/viewerProtocol.ts), never through the API.' }],
          patterns: [
            { group: NODE_MODULES, message: 'The viewer runs in a web page: no Node modules (webview-ui/tsconfig.json has no Node types either).' },
            {
              group: FOLDERS.filter((folder) => !['text', 'sessionFormat', 'sessionView', 'server'].includes(folder)).flatMap(folderPatterns),
              message: 'The viewer may use only what a page can run: src/text, src/sessionFormat, src/sessionView and the API payloads of src/server.',
            },
          ],
        },
      ],
    },
  },
  {
    // The build and test scripts run in Node.
    files: ['**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests reach into anything, and stand in for agents and APIs with loose data.
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
