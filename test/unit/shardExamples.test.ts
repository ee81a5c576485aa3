import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseShell } from 'shell-quote';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { cliPath } from '../support/cliProcess.js';
import { repoRoot } from '../support/testEnvironment.js';

/**
 * The examples a user copies to run Codeloops on other machines (examples/github-actions/,
 * examples/kubernetes/) are read as GitHub Actions and Kubernetes read them, and every
 * `codeloops …` command line in them is held against the built CLI's own `--help`: a
 * subcommand or a flag the CLI does not have fails here, not on the user's cluster at
 * the first run. The shards' arithmetic (a matrix of 1..N, `--shard I/N`, an Indexed
 * Job of N completions) and how secrets come in are checked too. Each check is also shown
 * catching a deliberate mistake, so that a check that stops checking fails.
 */

const WORKFLOW_SHARDS = 'examples/github-actions/eval-shards.yml';
const WORKFLOW_CANDIDATES = 'examples/github-actions/codeloops.yml';
const INDEXED_JOB = 'examples/kubernetes/eval-indexed-job.yaml';

type Yaml = Record<string, unknown>;

interface CodeloopsCommand {
  /** Where it was found: the file, the job and step or the container. */
  where: string;
  /** The words after `codeloops`, up to the end of that shell command (a redirection, `&&`, `|`…). */
  args: string[];
}

function exampleText(file: string): string {
  return fs.readFileSync(path.join(repoRoot(), file), 'utf8');
}

function asRecord(value: unknown): Yaml {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Yaml) : {};
}

function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

// ---- the commands in a shell script ----

/** Words after which a new simple command starts. */
const COMMAND_STARTS = new Set(['&&', '||', ';', ';;', '|', '|&', '&', '(', ')']);
const SHELL_KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', 'time', 'exec']);

/**
 * Every `codeloops …` command of a shell script, as sh would split it: lines joined at a
 * trailing backslash, quotes taken off, variables left as `$NAME`, a GitHub expression
 * `${{ … }}` kept as it is written, a comment dropped.
 */
function commandsInScript(script: string, where: string): CodeloopsCommand[] {
  const expressions: string[] = [];
  const plain = script.replace(/\$\{\{[^}]*\}\}/g, (expression) => `GHAEXPR${expressions.push(expression) - 1}X`);
  const restore = (word: string) => word.replace(/GHAEXPR(\d+)X/g, (_, index: string) => expressions[Number(index)]!);
  const found: CodeloopsCommand[] = [];
  for (const line of plain.replace(/\\\r?\n/g, ' ').split('\n')) {
    let current: string[] | undefined;
    let atStart = true;
    for (const entry of parseShell(line, (name) => `$${name}`)) {
      if (typeof entry !== 'string' && 'comment' in entry) break;
      const word = typeof entry === 'string' ? entry : entry.op === 'glob' ? entry.pattern : undefined;
      if (word === undefined) {
        // An operator ends the command (a redirection too: what follows it is a file).
        current = undefined;
        atStart = typeof entry !== 'string' && 'op' in entry && COMMAND_STARTS.has(entry.op);
        continue;
      }
      if (current) current.push(restore(word));
      else if (atStart && word === 'codeloops') found.push({ where, args: (current = []) });
      else if (atStart && !SHELL_KEYWORDS.has(word) && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) atStart = false;
    }
  }
  return found;
}

/** The script a container runs (`sh -c SCRIPT`), or its argv as one line when it runs a program directly. */
function containerScript(container: Yaml): string {
  const argv = [...asList(container.command), ...asList(container.args)].map(String);
  if (/^(\/bin\/)?(ba)?sh$/.test(argv[0] ?? '') && argv[1] === '-c') return argv[2] ?? '';
  return argv.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
}

// ---- where the examples keep their commands ----

function workflowJobs(workflow: Yaml): Array<[string, Yaml]> {
  return Object.entries(asRecord(workflow.jobs)).map(([id, job]) => [id, asRecord(job)]);
}

function stepsOf(job: Yaml): Yaml[] {
  return asList(job.steps).map(asRecord);
}

function workflowCommands(file: string, workflow: Yaml): CodeloopsCommand[] {
  return workflowJobs(workflow).flatMap(([id, job]) =>
    stepsOf(job).flatMap((step, index) =>
      typeof step.run === 'string' ? commandsInScript(step.run, `${file}: jobs.${id}.steps[${index}] (${String(step.name ?? step.run)})`) : [],
    ),
  );
}

function podTemplate(document: Yaml): Yaml {
  return asRecord(asRecord(asRecord(asRecord(document.spec).template)).spec);
}

function containersOf(document: Yaml): Yaml[] {
  const pod = podTemplate(document);
  return [...asList(pod.initContainers), ...asList(pod.containers)].map(asRecord);
}

function manifestDocuments(text: string): Yaml[] {
  const documents = parseAllDocuments(text);
  assert.ok(Array.isArray(documents), 'the manifest is YAML');
  for (const document of documents) assert.deepEqual(document.errors, [], 'the manifest is YAML');
  return documents.map((document) => asRecord(document.toJS()));
}

function manifestCommands(file: string, documents: Yaml[]): CodeloopsCommand[] {
  return documents.flatMap((document) =>
    containersOf(document).flatMap((container) =>
      commandsInScript(containerScript(container), `${file}: ${String(asRecord(document.metadata).name)}/${String(container.name)}`),
    ),
  );
}

// ---- the CLI's own word ----

interface CommandHelp {
  usage: string;
  options: Set<string>;
  commands: Set<string>;
}

const helpCache = new Map<string, CommandHelp>();

/** `node dist/cli.js WORDS… --help`, read: its usage line, its flags (long and short) and its subcommands. */
function helpOf(words: readonly string[]): CommandHelp {
  const key = words.join(' ');
  const cached = helpCache.get(key);
  if (cached) return cached;
  const result = spawnSync(process.execPath, [cliPath(), ...words, '--help'], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });
  const text = `${result.stdout}\n${result.stderr}`;
  const help: CommandHelp = { usage: /^Usage: (.*)$/m.exec(text)?.[1] ?? '', options: new Set(), commands: new Set() };
  let section = '';
  for (const line of text.split('\n')) {
    if (/^\S.*:$/.test(line)) section = line;
    // A term starts 2 spaces in; a description wrapped onto the next line starts further in.
    const term = /^ {2}(\S.*?)(?: {2,}|$)/.exec(line)?.[1];
    if (!term) continue;
    if (section === 'Options:') for (const flag of term.match(/(?<![\w-])--?[A-Za-z0-9][\w-]*/g) ?? []) help.options.add(flag);
    if (section === 'Commands:') help.commands.add(term.split(' ')[0]!);
  }
  helpCache.set(key, help);
  return help;
}

type HelpOf = (words: readonly string[]) => CommandHelp;

/** A word that names a subcommand when it comes first: `eval`, `merge`, `sessions`. */
const BARE_WORD = /^[a-z][a-z-]*$/;

function leadingWords(args: readonly string[]): string[] {
  const end = args.findIndex((arg) => !BARE_WORD.test(arg));
  return end < 0 ? [...args] : args.slice(0, end);
}

/**
 * What the CLI would refuse in a command: each leading bare word (`eval`, `merge`) must be
 * a subcommand, listed by its parent's help and named by its own usage line, and each flag
 * after them must be one its help lists. (So an example passes an argument that looks like
 * a bare word, such as `latest`, after a flag or quoted as `"latest"` — a rule these
 * examples keep.)
 */
function cliProblems(command: CodeloopsCommand, help: HelpOf): string[] {
  const line = `codeloops ${command.args.join(' ')}`;
  const words: string[] = [];
  for (const arg of leadingWords(command.args)) {
    if (!help(words).commands.has(arg))
      return [`${command.where}: "${line}": "${[...words, arg].join(' ')}" is not a command of codeloops (${['codeloops', ...words, '--help'].join(' ')})`];
    words.push(arg);
  }
  if (words.length === 0) return [`${command.where}: "${line}": names no command`];
  const own = help(words);
  const usage = `codeloops ${words.join(' ')}`;
  if (own.usage !== usage && !own.usage.startsWith(`${usage} `)) return [`${command.where}: "${line}": ${usage} --help shows "Usage: ${own.usage}"`];
  const flags = command.args.slice(words.length).filter((arg) => /^--[A-Za-z0-9]/.test(arg) || /^-[A-Za-z]$/.test(arg));
  return flags
    .map((flag) => flag.split('=')[0]!)
    .filter((flag) => !own.options.has(flag))
    .map((flag) => `${command.where}: "${line}": ${usage} has no option ${flag} (${usage} --help)`);
}

/** The value given to a flag (`--shard 1/4` or `--shard=1/4`), or undefined. */
function flagValue(args: readonly string[], flag: string): string | undefined {
  const index = args.findIndex((arg) => arg === flag || arg.startsWith(`${flag}=`));
  if (index < 0) return undefined;
  return args[index]!.includes('=') ? args[index]!.slice(flag.length + 1) : args[index + 1];
}

// ---- the workflows ----

const SECRET_NAME = /(API_KEY|TOKEN|SECRET|PASSWORD)$/;
const SECRET_EXPRESSION = /^\$\{\{\s*secrets\.[A-Za-z_][A-Za-z0-9_]*\s*\}\}$/;

/** A key in plain text: the prefixes of the agents' providers, or NAME=value / NAME: value for a secret's name that is no variable or expression. */
function literalSecrets(text: string): string[] {
  const problems = [...text.matchAll(/\b(sk-ant-[\w-]{8,}|sk-[A-Za-z0-9_-]{20,}|AIza[\w-]{20,})/g)].map(
    (match) => `a key written out: ${match[1]!.slice(0, 10)}…`,
  );
  for (const match of text.matchAll(/\b([A-Z][A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD))[ \t]*[:=][ \t]*([^\s#]+)/g)) {
    const value = match[2]!.replace(/^["']/, '');
    if (!value.startsWith('$')) problems.push(`${match[1]} is given a value in the file: ${match[0]}`);
  }
  return problems;
}

/** Every `env:` of a workflow (its own, each job's, each step's) whose name is a secret's takes it from `secrets`. */
function workflowSecretProblems(file: string, workflow: Yaml): string[] {
  const envs: Array<[string, Yaml]> = [[`${file}: env`, asRecord(workflow.env)]];
  for (const [id, job] of workflowJobs(workflow)) {
    envs.push([`${file}: jobs.${id}.env`, asRecord(job.env)]);
    stepsOf(job).forEach((step, index) => envs.push([`${file}: jobs.${id}.steps[${index}].env`, asRecord(step.env)]));
  }
  return envs.flatMap(([where, env]) =>
    Object.entries(env)
      .filter(([name, value]) => SECRET_NAME.test(name) && !SECRET_EXPRESSION.test(String(value)))
      .map(([name, value]) => `${where}.${name} is ${JSON.stringify(value)}, not \${{ secrets.… }}`),
  );
}

/** Every upload of an artifact runs with `if: always()`: a failed or crashed step's partial results still arrive. */
function uploadProblems(file: string, workflow: Yaml): string[] {
  return workflowJobs(workflow).flatMap(([id, job]) =>
    stepsOf(job)
      .map((step, index) => ({ step, index }))
      .filter(({ step }) => String(step.uses ?? '').startsWith('actions/upload-artifact@'))
      .filter(({ step }) => !/\balways\(\)/.test(String(step.if ?? '')))
      .map(({ index }) => `${file}: jobs.${id}.steps[${index}] uploads without if: always()`),
  );
}

/** A glob of download-artifact's `pattern` (`*`, `?`) as a regular expression. */
function globPattern(glob: string): RegExp {
  return new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
}

/**
 * The eval's shards on GitHub Actions: a matrix `shard: [1..N]` whose every `--shard` is
 * `${{ matrix.shard }}/N`, each exporting a bundle and uploading it; a merge job that needs
 * the shards, runs after a failed one too, downloads every shard's artifact and merges them.
 */
function shardWorkflowProblems(file: string, workflow: Yaml, commands: readonly CodeloopsCommand[]): string[] {
  const problems: string[] = [];
  const shardJobs = workflowJobs(workflow).filter(([, job]) => 'shard' in asRecord(asRecord(job.strategy).matrix));
  if (shardJobs.length !== 1) return [`${file}: ${shardJobs.length} jobs have a matrix of shards, not 1`];
  const [shardJobId, shardJob] = shardJobs[0]!;
  const strategy = asRecord(shardJob.strategy);
  const shards = asList(asRecord(strategy.matrix).shard);
  const total = shards.length;
  if (JSON.stringify(shards) !== JSON.stringify(Array.from({ length: total }, (_, index) => index + 1)))
    problems.push(`${file}: the matrix's shards are ${JSON.stringify(shards)}, not 1..${total}`);
  if (strategy['fail-fast'] !== false) problems.push(`${file}: jobs.${shardJobId} lacks fail-fast: false (a failed shard would cancel the others)`);
  const sharded = commands.filter((command) => flagValue(command.args, '--shard') !== undefined);
  for (const command of sharded) {
    const value = flagValue(command.args, '--shard')!;
    if (value !== `\${{ matrix.shard }}/${total}`)
      problems.push(`${command.where}: --shard ${value}, not \${{ matrix.shard }}/${total} (a matrix of ${total})`);
    if (!command.where.includes(`jobs.${shardJobId}.`)) problems.push(`${command.where}: --shard outside the matrix job ${shardJobId}`);
    if (flagValue(command.args, '--export') === undefined) problems.push(`${command.where}: a shard without --export writes no bundle`);
  }
  if (!sharded.some((command) => command.args[0] === 'eval')) problems.push(`${file}: no codeloops eval … --shard`);
  const checkouts = workflowJobs(workflow).flatMap(([id, job]) =>
    stepsOf(job)
      .filter((step) => String(step.uses ?? '').startsWith('actions/checkout@') && !('repository' in asRecord(step.with)))
      .map((step) => ({ id, step })),
  );
  for (const { id, step } of checkouts)
    if (asRecord(step.with)['fetch-depth'] !== 0) problems.push(`${file}: jobs.${id} checks out without fetch-depth: 0 (the suite's commits may be missing)`);
  return [...problems, ...mergeJobProblems(file, workflow, shardJobId, shardJob, commands)];
}

function mergeJobProblems(file: string, workflow: Yaml, shardJobId: string, shardJob: Yaml, commands: readonly CodeloopsCommand[]): string[] {
  const merges = commands.filter((command) => command.args[0] === 'eval' && command.args[1] === 'merge');
  if (merges.length === 0) return [`${file}: no codeloops eval merge`];
  const problems: string[] = [];
  const uploaded = stepsOf(shardJob)
    .filter((step) => String(step.uses ?? '').startsWith('actions/upload-artifact@'))
    .map((step) => String(asRecord(step.with).name ?? '').replace(/\$\{\{[^}]*\}\}/g, '1'));
  for (const [id, job] of workflowJobs(workflow)) {
    if (!merges.some((command) => command.where.includes(`jobs.${id}.`))) continue;
    const needs = [job.needs].flat().map(String);
    if (!needs.includes(shardJobId)) problems.push(`${file}: jobs.${id} merges without needs: ${shardJobId}`);
    if (!/\balways\(\)/.test(String(job.if ?? ''))) problems.push(`${file}: jobs.${id} does not run with if: always() (a failed shard would skip the merge)`);
    const downloads = stepsOf(job).filter((step) => String(step.uses ?? '').startsWith('actions/download-artifact@'));
    const takesEveryShard = downloads.some((step) => {
      const inputs = asRecord(step.with);
      return inputs['merge-multiple'] === true && uploaded.length > 0 && uploaded.every((name) => globPattern(String(inputs.pattern ?? '')).test(name));
    });
    if (!takesEveryShard)
      problems.push(`${file}: jobs.${id} downloads no pattern with merge-multiple: true that matches the shards' artifacts (${uploaded.join(', ')})`);
  }
  return problems;
}

// ---- the Kubernetes manifest ----

/**
 * The eval's shards as an Indexed Job: completions N and `--shard auto/N`, the bundle named
 * by the shell's `${JOB_COMPLETION_INDEX}` on the claim this file makes, the keys from a
 * Secret, no `$(` in a script (Kubernetes expands `$(NAME)` in command and args itself),
 * and a second Job that merges the bundles from the same claim.
 */
function indexedJobProblems(file: string, documents: readonly Yaml[], commands: readonly CodeloopsCommand[]): string[] {
  const problems: string[] = [];
  const jobs = documents.filter((document) => document.kind === 'Job');
  const indexed = jobs.filter((job) => asRecord(job.spec).completionMode === 'Indexed');
  if (indexed.length !== 1) return [`${file}: ${indexed.length} Jobs have completionMode: Indexed, not 1`];
  const shardJob = indexed[0]!;
  const shardJobName = String(asRecord(shardJob.metadata).name);
  const { completions, parallelism } = asRecord(shardJob.spec);
  if (parallelism !== completions) problems.push(`${file}: ${shardJobName} has parallelism ${String(parallelism)}, completions ${String(completions)}`);
  const sharded = commands.filter((command) => flagValue(command.args, '--shard') !== undefined);
  if (!sharded.some((command) => command.args[0] === 'eval')) problems.push(`${file}: no codeloops eval … --shard`);
  for (const command of sharded) {
    const value = flagValue(command.args, '--shard');
    if (value !== `auto/${String(completions)}`)
      problems.push(`${command.where}: --shard ${value}, not auto/${String(completions)} (completions: ${String(completions)})`);
    if (!command.where.includes(`: ${shardJobName}/`)) problems.push(`${command.where}: --shard outside the Indexed Job ${shardJobName}`);
    if (flagValue(command.args, '--export') === undefined) problems.push(`${command.where}: a shard without --export writes no bundle`);
  }
  for (const job of jobs) {
    const name = String(asRecord(job.metadata).name);
    if (asRecord(podTemplate(job)).restartPolicy !== 'Never') problems.push(`${file}: ${name} restarts its pods (restartPolicy is not Never)`);
    for (const container of containersOf(job)) {
      const where = `${file}: ${name}/${String(container.name)}`;
      const argv = [...asList(container.command), ...asList(container.args)].map(String);
      if (argv.some((word) => /(^|[^$])\$\(/.test(word))) problems.push(`${where}: $( in command or args, which Kubernetes expands itself`);
      for (const entry of asList(container.env).map(asRecord)) {
        if (!SECRET_NAME.test(String(entry.name))) continue;
        if ('value' in entry || !asRecord(asRecord(entry.valueFrom).secretKeyRef).name)
          problems.push(`${where}: ${String(entry.name)} is not taken from a Secret (secretKeyRef)`);
      }
    }
  }
  const script = containersOf(shardJob).map(containerScript).join('\n');
  if (!/\$\{?JOB_COMPLETION_INDEX\}?/.test(script)) problems.push(`${file}: ${shardJobName} does not name its bundle by the shell's $JOB_COMPLETION_INDEX`);
  if (documents.some((document) => document.kind === 'Secret')) problems.push(`${file}: a Secret written in the file`);
  return [...problems, ...claimProblems(file, documents, jobs, shardJobName, commands)];
}

function claimProblems(file: string, documents: readonly Yaml[], jobs: readonly Yaml[], shardJobName: string, commands: readonly CodeloopsCommand[]): string[] {
  const claims = documents.filter((document) => document.kind === 'PersistentVolumeClaim').map((claim) => String(asRecord(claim.metadata).name));
  const claimOf = (job: Yaml) =>
    asList(podTemplate(job).volumes)
      .map((volume) => asRecord(asRecord(volume).persistentVolumeClaim).claimName)
      .find((name) => typeof name === 'string');
  const merges = commands.filter((command) => command.args[0] === 'eval' && command.args[1] === 'merge');
  if (merges.length === 0) return [`${file}: no codeloops eval merge`];
  const problems: string[] = [];
  const shardClaim = claimOf(jobs.find((job) => asRecord(job.metadata).name === shardJobName)!);
  if (!shardClaim || !claims.includes(shardClaim)) problems.push(`${file}: ${shardJobName} mounts no claim this file makes (${claims.join(', ')})`);
  for (const merge of merges) {
    const job = jobs.find((candidate) => merge.where.includes(`: ${String(asRecord(candidate.metadata).name)}/`))!;
    if (job === undefined || claimOf(job) !== shardClaim) problems.push(`${merge.where}: merges from another volume than the shards write to`);
  }
  return problems;
}

// ---- the tests ----

describe('the examples for other machines: as GitHub Actions and Kubernetes read them, against the CLI’s own --help', function () {
  // Each command's --help is a start of the built CLI.
  this.timeout(60_000);

  const shardsText = exampleText(WORKFLOW_SHARDS);
  const candidatesText = exampleText(WORKFLOW_CANDIDATES);
  const jobText = exampleText(INDEXED_JOB);
  const shardsWorkflow = asRecord(parseYaml(shardsText));
  const candidatesWorkflow = asRecord(parseYaml(candidatesText));
  const jobDocuments = manifestDocuments(jobText);
  const shardsCommands = workflowCommands(WORKFLOW_SHARDS, shardsWorkflow);
  const candidatesCommands = workflowCommands(WORKFLOW_CANDIDATES, candidatesWorkflow);
  const jobCommands = manifestCommands(INDEXED_JOB, jobDocuments);
  /** The subcommands used: each command's leading bare words. */
  const pathsOf = (commands: readonly CodeloopsCommand[]) => [...new Set(commands.map((command) => leadingWords(command.args).join(' ')))].sort();

  it('finds every codeloops command line of the three examples', () => {
    assert.deepEqual(pathsOf(shardsCommands), ['eval', 'eval merge']);
    assert.deepEqual(pathsOf(candidatesCommands), ['run', 'sessions export']);
    assert.deepEqual(pathsOf(jobCommands), ['eval', 'eval merge']);
    assert.deepEqual(commandsInScript('(cd .codeloops-tool && npm link)\necho codeloops run # codeloops eval', 'x'), [], 'only codeloops in a command’s place');
    assert.deepEqual(commandsInScript('FOO=1 codeloops run -p "a b" \\\n  --trust > out.json && codeloops eval x --json', 'x'), [
      { where: 'x', args: ['run', '-p', 'a b', '--trust'] },
      { where: 'x', args: ['eval', 'x', '--json'] },
    ]);
  });

  it('uses only commands and flags the built CLI has', () => {
    const problems = [...shardsCommands, ...candidatesCommands, ...jobCommands].flatMap((command) => cliProblems(command, helpOf));
    assert.deepEqual(problems, []);
  });

  it('runs the eval’s shards on GitHub Actions as 1..N of N, and merges them after every shard, failed ones too', () => {
    assert.deepEqual(shardWorkflowProblems(WORKFLOW_SHARDS, shardsWorkflow, shardsCommands), []);
    assert.deepEqual(uploadProblems(WORKFLOW_SHARDS, shardsWorkflow), []);
    assert.deepEqual(uploadProblems(WORKFLOW_CANDIDATES, candidatesWorkflow), []);
  });

  it('runs the eval’s shards as an Indexed Job of N completions with --shard auto/N, and merges them from the same claim', () => {
    assert.deepEqual(indexedJobProblems(INDEXED_JOB, jobDocuments, jobCommands), []);
  });

  it('takes every key from secrets (a Secret on Kubernetes), never written in the file', () => {
    assert.deepEqual(workflowSecretProblems(WORKFLOW_SHARDS, shardsWorkflow), []);
    assert.deepEqual(workflowSecretProblems(WORKFLOW_CANDIDATES, candidatesWorkflow), []);
    for (const text of [shardsText, candidatesText, jobText]) assert.deepEqual(literalSecrets(text), []);
    assert.ok(
      workflowJobs(shardsWorkflow).some(([, job]) => 'ANTHROPIC_API_KEY' in asRecord(job.env)),
      'the shards have the agents’ key',
    );
    const keyEntries = jobDocuments.flatMap(containersOf).flatMap((container) => asList(container.env).map(asRecord));
    assert.ok(
      keyEntries.some((entry) => entry.name === 'ANTHROPIC_API_KEY'),
      'the pods have the agents’ key',
    );
  });

  describe('each check catches a deliberate mistake', () => {
    /** The problems of the shards' workflow with `from` replaced by `to`. */
    function workflowWith(from: string | RegExp, to: string): string[] {
      const text = shardsText.replace(from, to);
      assert.notEqual(text, shardsText, `${String(from)} is in the workflow`);
      const workflow = asRecord(parseYaml(text));
      const commands = workflowCommands(WORKFLOW_SHARDS, workflow);
      return [
        ...commands.flatMap((command) => cliProblems(command, helpOf)),
        ...shardWorkflowProblems(WORKFLOW_SHARDS, workflow, commands),
        ...uploadProblems(WORKFLOW_SHARDS, workflow),
        ...workflowSecretProblems(WORKFLOW_SHARDS, workflow),
        ...literalSecrets(text),
      ];
    }

    function jobWith(from: string | RegExp, to: string): string[] {
      const text = jobText.replace(from, to);
      assert.notEqual(text, jobText, `${String(from)} is in the manifest`);
      const documents = manifestDocuments(text);
      const commands = manifestCommands(INDEXED_JOB, documents);
      return [...commands.flatMap((command) => cliProblems(command, helpOf)), ...indexedJobProblems(INDEXED_JOB, documents, commands), ...literalSecrets(text)];
    }

    /** A CLI of one command, `run`, with one flag, `--trust`. */
    const fakeHelp: HelpOf = (words) =>
      words.length === 0
        ? { usage: 'codeloops [options] [command]', options: new Set(['-h', '--help']), commands: new Set(['run']) }
        : { usage: 'codeloops run [options]', options: new Set(['--trust']), commands: new Set() };

    it('a flag or a command the CLI does not have', () => {
      assert.match(cliProblems({ where: 'x', args: ['run', '--trust', '--frobnicate', '3'] }, fakeHelp).join('\n'), /codeloops run has no option --frobnicate/);
      assert.match(cliProblems({ where: 'x', args: ['run', '-q'] }, fakeHelp).join('\n'), /codeloops run has no option -q/);
      assert.match(cliProblems({ where: 'x', args: ['frobnicate', '--trust'] }, helpOf).join('\n'), /"frobnicate" is not a command of codeloops/);
      assert.match(
        cliProblems({ where: 'x', args: ['eval', 'merge', 'a.tar.gz', '--htlm', 'r.html'] }, helpOf).join('\n'),
        /no option --htlm|"eval merge" is not a command/,
      );
      assert.match(workflowWith(/--export shard-/, '--exprot shard-').join('\n'), /codeloops eval has no option --exprot/);
      assert.match(jobWith('--shard auto/4 --export', '--shard auto/4 --exprot').join('\n'), /codeloops eval has no option --exprot/);
    });

    it('shards that do not add up', () => {
      assert.match(
        workflowWith('shard: [1, 2, 3, 4]', 'shard: [1, 2, 3]').join('\n'),
        /--shard \$\{\{ matrix\.shard \}\}\/4, not \$\{\{ matrix\.shard \}\}\/3/,
      );
      assert.match(workflowWith('shard: [1, 2, 3, 4]', 'shard: [0, 1, 2, 3]').join('\n'), /the matrix's shards are \[0,1,2,3\], not 1\.\.4/);
      assert.match(workflowWith('fail-fast: false', 'fail-fast: true').join('\n'), /lacks fail-fast: false/);
      assert.match(jobWith('completions: 4', 'completions: 3').join('\n'), /--shard auto\/4, not auto\/3/);
      assert.match(jobWith('completionMode: Indexed', 'completionMode: NonIndexed').join('\n'), /0 Jobs have completionMode: Indexed/);
      assert.match(jobWith('shard-${JOB_COMPLETION_INDEX}', 'shard-$(JOB_COMPLETION_INDEX)').join('\n'), /\$\( in command or args/);
    });

    it('a merge that does not wait for the shards, or not after a failed one, and uploads that skip a failed step', () => {
      assert.match(workflowWith('needs: shard', 'needs: []').join('\n'), /merges without needs: shard/);
      assert.match(workflowWith(/(needs: shard\n\s+#.*\n\s+)if: always\(\)/, '$1if: success()').join('\n'), /does not run with if: always\(\)/);
      assert.match(workflowWith(/(upload-artifact@v4\n\s+)if: always\(\)/, '$1if: success()').join('\n'), /uploads without if: always\(\)/);
      assert.match(workflowWith('merge-multiple: true', 'merge-multiple: false').join('\n'), /downloads no pattern with merge-multiple: true/);
      assert.match(workflowWith('pattern: eval-shard-*', 'pattern: shard-*').join('\n'), /downloads no pattern/);
      assert.match(workflowWith('fetch-depth: 0', 'fetch-depth: 1').join('\n'), /without fetch-depth: 0/);
      assert.match(jobWith(/claimName: codeloops-shards\s*$/, 'claimName: elsewhere\n').join('\n'), /merges from another volume/);
    });

    it('a key written out', () => {
      assert.match(
        workflowWith('${{ secrets.ANTHROPIC_API_KEY }}', 'sk-ant-api03-abcdefghijklmnop').join('\n'),
        /ANTHROPIC_API_KEY is "sk-ant-api03-abcdefghijklmnop", not \$\{\{ secrets/,
      );
      assert.match(workflowWith('${{ secrets.OPENAI_API_KEY }}', '${{ vars.OPENAI_API_KEY }}').join('\n'), /OPENAI_API_KEY is "\$\{\{ vars/);
      const literal = jobWith(
        /valueFrom:\n\s+secretKeyRef:\n\s+name: codeloops-agent-keys\n\s+key: ANTHROPIC_API_KEY/,
        'value: sk-ant-api03-abcdefghijklmnop',
      ).join('\n');
      assert.match(literal, /ANTHROPIC_API_KEY is not taken from a Secret/);
      assert.match(literal, /a key written out: sk-ant-api/);
      assert.deepEqual(literalSecrets('kubectl create secret generic k --from-literal=OPENAI_API_KEY="$OPENAI_API_KEY"'), []);
      assert.match(literalSecrets('--from-literal=OPENAI_API_KEY=abc123').join('\n'), /OPENAI_API_KEY is given a value/);
    });
  });
});
