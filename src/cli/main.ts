import { Command, InvalidArgumentError, Option } from 'commander';
import { AGENT_KINDS } from '../agents/agentKinds.js';
import { unsupportedPlatformMessage } from '../process/platformSupport.js';
import { CodeloopsError, failureOf, formatFailureAnswer, isCodeloopsError } from '../sessionFormat/failures.js';
import { EXIT_CODES } from './exitCodes.js';
import { cliHint } from './failureHints.js';
import { runModeOf, writeRefusal, type RunOptions } from './runSetup.js';
import { RUN_OPTION_KEYS, RUN_OPTIONS, type RunOptionKey, type RunOptionSpec } from '../sessionFormat/runOptions.js';
import { sanitizeForTerminal } from '../text/terminalText.js';

declare const CODELOOPS_VERSION: string;
const VERSION = typeof CODELOOPS_VERSION === 'string' ? CODELOOPS_VERSION : '0.0.0-dev';

function positiveInteger(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('expected a positive whole number.');
  return Number(value);
}

/** An iteration as recorded: from 1, or from 0 in the original codeloops' sessions. */
function iterationNumber(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('expected an iteration number.');
  return Number(value);
}

function portNumber(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('expected a port from 0 (any free port) to 65535.');
  return Number(value);
}

/** A run option as commander takes it, made from its declaration (`sessionFormat/runOptions.ts`); `description` words it for one command. */
function runOption(key: RunOptionKey, description?: string): Option {
  const spec: RunOptionSpec = RUN_OPTIONS[key];
  const { value } = spec;
  const option = new Option(
    `${spec.short ? `${spec.short}, ` : ''}${spec.flag}${value.placeholder ? ` ${value.placeholder}` : ''}`,
    description ?? spec.description,
  );
  if (value.kind === 'agent') return option.choices(AGENT_KINDS);
  const read = value.read;
  if (!read) return option;
  return option.argParser((typed: string, previous: unknown) => {
    const parsed = read(typed);
    if (parsed === undefined) throw new InvalidArgumentError(value.expected ?? 'expected a value.');
    // A repeatable option (`--check`) adds each value to those before it.
    return Array.isArray(parsed) ? [...((previous as unknown[] | undefined) ?? []), ...(parsed as unknown[])] : parsed;
  });
}

/** The run options of these groups, in their declared order; `descriptions` words some of them for this command. */
function runOptions(command: Command, groups: readonly RunOptionSpec['group'][], descriptions: Partial<Record<RunOptionKey, string>> = {}): Command {
  for (const key of RUN_OPTION_KEYS) if (groups.includes(RUN_OPTIONS[key].group)) command.addOption(runOption(key, descriptions[key]));
  return command;
}

/** What every command that runs a loop takes: agents and models per role, the iteration limit, how to report. */
function loopOptions(command: Command, descriptions: Partial<Record<RunOptionKey, string>> = {}): Command {
  return runOptions(command, ['agents', 'guards', 'attended'], descriptions)
    .option('--trust', "run the project's codeloops.toml commands and checks this once, without asking")
    .option('--json-output', 'print the outcome as one JSON object on stdout')
    .addOption(new Option('--events <format>', 'stream run events on stdout').choices(['ndjson']))
    .option('-q, --quiet', 'print nothing but errors while running')
    .addOption(new Option('--editor-settings <json>', "an editor's settings, ranked between the global and the project config").hideHelp());
}

/** A command's function, as a module exports it: its arguments and options in, its exit code out. */
type CommandFunction = (...args: never[]) => Promise<number>;

/**
 * Actions that load their command's module when the command runs, not when the CLI
 * starts: `sessions list` loads no git, no loop and no server. `load` is a literal
 * `import()`, so that the bundler finds the module.
 */
function lazyActions(setExitCode: (code: number) => void) {
  return <M extends Record<K, CommandFunction>, K extends keyof M>(load: () => Promise<M>, name: K) =>
    async (...args: unknown[]): Promise<void> => {
      const command = (await load())[name] as unknown as (...args: unknown[]) => Promise<number>;
      // commander passes the arguments, the options and itself last: a command takes all but itself (it would fill a
      // parameter that has a default, as `uiCommand`'s).
      setExitCode(await command(...args.slice(0, -1)));
    };
}
type Lazy = ReturnType<typeof lazyActions>;

export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('codeloops')
    .description('Run a coding agent in an actor–critic loop until the work is actually done.')
    .version(VERSION, '-V, --version')
    // A command's options are its own, not its parent's of the same name: `eval merge --json` is merge's --json, not eval's.
    .enablePositionalOptions()
    .exitOverride() // before the subcommands are added, so they inherit it
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (text, write) => write(text) });
  // In the order `--help` lists them.
  const lazy = lazyActions(setExitCode);
  addRun(program, lazy);
  addForecast(program, lazy);
  addSessions(program, lazy);
  addResume(program, lazy);
  addMoves(program, lazy);
  addQueue(program, lazy);
  addReview(program, lazy);
  addTools(program, lazy);
  return program;
}

/** `codeloops run`: one loop, or a candidate group with --candidates or --parallel (each its own command module). */
function addRun(program: Command, lazy: Lazy): void {
  const run = program
    .command('run', { isDefault: true })
    .description('run the loop on a git repository (the default command)')
    .option('-p, --prompt <text>', 'the task (default: read --prompt-file)')
    .option('--prompt-file <file>', 'read the task from this file (default: prompt.md in the working directory)')
    .option('-d, --working-dir <dir>', 'the repository to work in (default: the current folder)');
  const single = lazy(() => import('./runCommand.js'), 'runCommand');
  const group = lazy(() => import('./candidateRunCommand.js'), 'runCandidatesCommand');
  loopOptions(run)
    .option(
      '--candidates <list>',
      'run several candidates, each in its own worktree: agents or agent:model pairs, comma-separated (a name twice runs it twice)',
    )
    .option('--parallel <n>', 'run the candidates (or the configured actor) n times', positiveInteger)
    .option('--jobs <n>', 'candidates running at once (default: the number of cores)', positiveInteger)
    .option('--no-judge', 'rank candidates by checks and outcome only, without asking the critic to compare them')
    .option('--dry-run', 'check the configuration and agents, print the plan, run nothing')
    .action((options: RunOptions, command: Command) => (runModeOf(options) === 'candidates' ? group : single)(options, command));
}

/** `codeloops forecast`: what a run here would take, from past tasks with the same agents; its flags are run's. */
function addForecast(program: Command, lazy: Lazy): void {
  const forecast = program
    .command('forecast')
    .description("median and 90th percentile of iterations, cost and duration of a run here, from past tasks with the run's actor and critic")
    .option('-p, --prompt <text>', 'the task, as run takes it (the forecast does not depend on its words)')
    .option('--prompt-file <file>', 'the task file, as run takes it (not read)')
    .option('-d, --working-dir <dir>', 'the repository a run would work in (default: the current folder)');
  runOptions(forecast, ['agents'])
    .addOption(runOption('maxCost', `${RUN_OPTIONS.maxCost.description} (with none, a budget is suggested)`))
    .option('--json', 'print the forecast as JSON')
    .addOption(new Option('--editor-settings <json>', "an editor's settings, ranked between the global and the project config").hideHelp())
    .action(lazy(() => import('./forecastCommand.js'), 'forecastCommand'));
}

function addSessions(program: Command, lazy: Lazy): void {
  const sessions = program.command('sessions').description('list, show and compare recorded sessions');
  const load = () => import('./sessionsCommand.js');
  const filterOptions = (command: Command): Command =>
    command
      .option('--outcome <outcome...>', 'only these outcomes (success, failed, interrupted, max_iterations_reached)')
      .option('--after <date>', 'only sessions started on or after this date (YYYY-MM-DD or ISO 8601)')
      .option('--before <date>', 'only sessions started on or before this date')
      .option('--search <text>', 'only sessions whose prompt contains this text')
      .option('--project <name>', 'only sessions of this project (the folder name)')
      .option('--actor <agent>', 'only sessions whose actor is this agent (claude, codex, … or its name as recorded)')
      .option('--critic <agent>', 'only sessions whose critic is this agent')
      .option('--json', 'print JSON');
  filterOptions(sessions.command('list').description('list sessions, newest first'))
    .option('--eval <eval_id>', "only the sessions of this eval's runs")
    .action(lazy(load, 'listCommand'));
  sessions
    .command('show <id>')
    .description('show a session (an id, a unique prefix of one, or "latest")')
    .option('--json', 'print JSON')
    .action(lazy(load, 'showCommand'));
  sessions
    .command('diff <id>')
    .description("print a session's recorded diff")
    .option('-i, --iteration <n>', 'only this iteration (the original codeloops numbered them from 0)', iterationNumber)
    .action(lazy(load, 'diffCommand'));
  sessions
    .command('replay <id>')
    .description("a session's timeline: phases, tool calls, usage, diffs, verdicts, interruptions, rollbacks, resumes")
    .option('--json', 'one JSON entry a line (a stable, documented schema)')
    .action(lazy(() => import('./replayCommand.js'), 'replayCommand'));
  sessions
    .command('delete <id>')
    .description('delete a session: its file, its record and its snapshots (your files are not touched)')
    .option('--json', 'print what was deleted as JSON')
    .action(lazy(load, 'deleteCommand'));
  sessions
    .command('export <id...>')
    .description('write sessions, their records and their snapshots (a git bundle) into one .tar.gz, to view, replay, roll back or apply elsewhere')
    .option('-o, --output <file>', 'the bundle to write (bundle.tar.gz)')
    .option('--json', 'print what was written as JSON')
    .action(lazy(() => import('./bundleCommand.js'), 'exportCommand'));
  sessions
    .command('import <bundle>')
    .description('import a bundle written by "sessions export" into a clone of the same repository (all of it, or nothing)')
    .option('-d, --working-dir <dir>', 'the repository (default: the current folder)')
    .option('--max-unpacked-mb <n>', 'refuse a bundle that unpacks to more than this many megabytes (default: 2048)', positiveInteger)
    .option('--json', 'print what was imported as JSON')
    .action(lazy(() => import('./bundleCommand.js'), 'importCommand'));
  filterOptions(sessions.command('stats').description('success rate, iterations and durations over sessions; the agentic metrics over tasks')).action(
    lazy(load, 'statsCommand'),
  );
}

function addResume(program: Command, lazy: Lazy): void {
  const resume = program
    .command('resume <session>')
    .description('carry on an interrupted, crashed or stopped session (an id, a unique prefix, or "latest")')
    .option('--force', 'carry on even though the files differ from how the loop left them')
    .option('--answer <text>', 'your answer to the question the loop stopped on (needs_input): the next actor gets it as your words');
  loopOptions(resume, {
    agent: `${RUN_OPTIONS.agent.description} (default: as recorded)`,
    maxIterations: 'the limit on the iteration number (0: no limit; default: as recorded)',
  }).action(lazy(() => import('./resumeCommand.js'), 'resumeCommand'));
}

/** What moves the user's files: rollback, and a candidate's changes applied (and the comparison that picks one). */
function addMoves(program: Command, lazy: Lazy): void {
  program
    .command('rollback <session>')
    .description('put the files a session changed back to how they were before an iteration (undoable)')
    .option('-i, --iteration <n>', 'roll back to before this iteration (default: the last one)', positiveInteger)
    .option('--undo', "undo the session's last rollback")
    .option('--force', 'overwrite files you changed since the loop (they stay recoverable with --undo)')
    .option('--dry-run', 'say what would be restored, removed or overwritten; change nothing')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nResults and exit codes: rolled_back or undone 0, nothing_to_roll_back 3, conflict 4 (nothing changed), snapshot_missing 5.')
    .action(lazy(() => import('./rollbackCommand.js'), 'rollbackCommand'));

  const evaluation = program
    .command('eval [suite]')
    .description("measure your setup: run a suite's tasks with each of its configs, each run judged by the task's hidden acceptance command")
    .option('--resume <eval_id>', 'carry on an interrupted or crashed eval, without running its finished runs again ("latest": the newest)')
    .option('--jobs <n>', 'runs at once (default: 1, or as the eval ran)', positiveInteger)
    .option('--trust', "run what the task repositories' codeloops.toml adds without asking")
    .option('--json', 'print the results as JSON')
    .option('--html <file>', 'also write the results as a self-contained HTML report (tables and charts)')
    .option(
      '--shard <I/N>',
      'run only shard I of N (every N-th run from the I-th; the same split on every machine); auto/N: I from JOB_COMPLETION_INDEX or CI_NODE_INDEX; auto: from CI_NODE_INDEX and CI_NODE_TOTAL',
    )
    .option('--export <file>', 'when this process ends, however it ends, write its runs as a bundle (.tar.gz) for "eval merge"')
    .option('--dry-run', 'say which runs would run (and where the shard came from); run nothing')
    .enablePositionalOptions()
    .action(lazy(() => import('./evalCommand.js'), 'evalCommand'));
  evaluation
    .command('merge <bundle...>')
    .description("make one eval here of the shards' bundles (eval --shard I/N --export): every run once, the missing ones said; then as eval prints it")
    .option('-d, --working-dir <dir>', 'a clone of the repository the eval ran in (default: the current folder)')
    .option('--max-unpacked-mb <n>', 'refuse a bundle that unpacks to more than this many megabytes (default: 2048)', positiveInteger)
    .option('--partial', 'also take the bundle of a shard that stopped midway (the runs it finished; the rest missing here, for --resume)')
    .option('--json', 'print the results as JSON')
    .option('--html <file>', 'also write the results as a self-contained HTML report (tables and charts)')
    .addHelpText(
      'after',
      '\nExit codes: 0 every run of the eval is here, 3 some are missing (listed; "codeloops eval --resume <id>" runs them), 2 nothing imported.',
    )
    .action(lazy(() => import('./evalCommand.js'), 'evalMergeCommand'));

  program
    .command('candidates [group]')
    .description(
      'compare a candidate group\'s candidates and their ranking (a group id, a unique prefix, "latest", or one of its sessions); without a group, list them',
    )
    .option('--json', 'print the comparison as JSON')
    .option('--discard', "remove the group's worktrees (their sessions and snapshots stay)")
    .option('--force', 'with --discard: also remove worktrees holding changes no snapshot has (those changes are kept under a ref first)')
    .action(lazy(() => import('./candidatesCommand.js'), 'candidatesCommand'));

  program
    .command('apply <session>')
    .description("put a session's changes (a finished candidate's) into your working tree, conflict-checked and undoable")
    .option('--undo', 'undo the last apply of this session')
    .option('--keep', "keep the candidate group's worktrees (default: removed after the apply)")
    .option('--force', 'overwrite files you changed since the candidates started (they stay recoverable with --undo)')
    .option('--dry-run', 'say what would be written, removed or overwritten; change nothing')
    .option('-d, --working-dir <dir>', "where to apply (default: the group's working directory, or the session's own)")
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nResults and exit codes: applied or apply_undone 0, nothing_to_apply 3, conflict 4 (nothing changed), snapshot_missing 5.')
    .action(lazy(() => import('./applyCommand.js'), 'applyCommand'));
}

/** `codeloops queue …`: a repository's tasks, each a loop on its own branch in its own worktree. */
function addQueue(program: Command, lazy: Lazy): void {
  const queue = program.command('queue').description('a queue of tasks, each run as a loop on its own branch (codeloops/<id>-<slug>) in its own worktree');
  const load = () => import('./queueCommand.js');
  // Every subcommand works on the queue of a repository; `json` names what --json prints, when it has the option.
  const inRepository = (command: Command, json?: string): Command => {
    command.option('-d, --working-dir <dir>', 'the repository (default: the current folder)');
    return json ? command.option('--json', json) : command;
  };
  const trust = "run the project's codeloops.toml commands and checks without asking";
  const add = inRepository(queue.command('add').description('add a task (or each unchecked item of a Markdown checklist) at the end of the queue'))
    .option('-p, --prompt <text>', 'the task')
    .option('--file <file>', 'a Markdown checklist: each unchecked item is a task, the text indented under it its details');
  runOptions(add, ['agents', 'guards']).option('--json', 'print the tasks added as JSON').action(lazy(load, 'queueAddCommand'));
  inRepository(queue.command('list').description("the queue's tasks in order: id, state, branch"), 'print JSON').action(lazy(load, 'queueListCommand'));
  inRepository(queue.command('remove <id>').description('remove a task (its branch and sessions stay)'), 'print JSON').action(lazy(load, 'queueRemoveCommand'));
  const move = queue.command('move <id> <position>').description('move a task to a position in the queue (1: first); ids do not change');
  inRepository(move, 'print JSON').action(lazy(load, 'queueMoveCommand'));
  inRepository(queue.command('run').description('run the tasks not finished, in order; carries on after a crash without running a finished task again'))
    .option('--jobs <n>', 'tasks at once (default: 1)', positiveInteger)
    .option('--stack', "start each task's branch from the last successful task's branch (one at a time)")
    .option('--trust', trust)
    .option('--shard <I/N>', "run this machine's share of the tasks: I of N (auto/N, auto: the index from the CI job)")
    .option('--tasks <file>', 'first add the tasks of a file (written by "queue export", or a Markdown checklist; from the repository\'s top), once')
    .option('--push <remote>', 'push each success branch to this remote (git push <remote> codeloops/<id>-<slug>)')
    .option('--export <bundle>', 'write the share\'s tasks, sessions and success branches to this bundle, for "queue import" (rewritten as each task ends)')
    .action(lazy(load, 'queueRunCommand'));
  const shards = () => import('./queueShardsCommand.js');
  inRepository(
    queue.command('export').description('write the tasks not finished to a file to commit, for clones elsewhere to run (queue run --shard)'),
    'print JSON',
  )
    .option('-o, --output <file>', 'where (default: codeloops-queue.json at the top of the repository)')
    .action(lazy(shards, 'queueExportCommand'));
  inRepository(
    queue
      .command('import <bundle...>')
      .description("bring shards' bundles home (queue run --export): their tasks' outcomes, sessions and branches, all or nothing"),
    'print what was imported as JSON',
  )
    .option('--partial', 'also take the bundle of a shard that stopped midway (the tasks it finished; the rest queued here)')
    .option('--max-unpacked-mb <n>', 'refuse a bundle that unpacks to more than this many megabytes (default: 2048)', positiveInteger)
    .action(lazy(shards, 'queueImportCommand'));
  inRepository(queue.command('answer <id> <answer>').description("answer a task's question and carry it on (the running queue does, or this command)"))
    .option('--trust', trust)
    .action(lazy(load, 'queueAnswerCommand'));
  inRepository(
    queue
      .command('merge <id>')
      .description('merge a task that succeeded into the current branch, if git can merge it cleanly and your changes are not in its way'),
    'print the result as JSON',
  )
    .option('--undo', 'undo that merge: move the branch back (if the files it wrote are unchanged)')
    .action(lazy(load, 'queueMergeCommand'));
  inRepository(
    queue.command('report').description("what the queue did: each task's outcome, branch, changes, checks, cost; Markdown on stdout"),
    'print the tasks as JSON instead of Markdown',
  )
    .option('--html <file>', 'also write the report as a self-contained HTML page')
    .action(lazy(load, 'queueReportCommand'));
}

/** Reviewing a session like a pull request. */
function addReview(program: Command, lazy: Lazy): void {
  const load = () => import('./reviewCommand.js');
  program
    .command('review <session>')
    .description("an iteration's changes hunk by hunk, numbered, with the critic's findings and your comments")
    .option('-i, --iteration <n>', 'only this iteration', positiveInteger)
    .option('--json', 'print JSON')
    .action(lazy(load, 'reviewCommand'));

  program
    .command('reject <session>')
    .description('undo one hunk of an iteration in your files; the reason goes to the next actor run')
    .option('-i, --iteration <n>', 'the iteration', positiveInteger)
    .option('--hunk <k>', 'the hunk, as "codeloops review" numbers it', positiveInteger)
    .option('--reason <text>', 'why: the actor is told')
    .option('--undo', 'put a rejected hunk back (the last one, or --id)')
    .option('--id <rejection>', 'with --undo: which rejection (R<iteration>.<n>)')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nResults and exit codes: rejected or rejection_undone 0, nothing_to_do 3, conflict 4 (nothing changed), snapshot_missing 5.')
    .action(lazy(load, 'rejectCommand'));

  program
    .command('comment <session> <text>')
    .description('leave a comment for the next actor run, on a file and line of an iteration or on the session')
    .option('-i, --iteration <n>', 'the iteration whose code it is about', positiveInteger)
    .option('--file <path>', 'the file (relative to the repository)')
    .option('--line <n>', 'the line', positiveInteger)
    .option('--end-line <n>', 'the last line of a range', positiveInteger)
    .option('--json', 'print the comment as JSON')
    .action(lazy(load, 'commentCommand'));

  program
    .command('resolve <session> <item>')
    .description('mark a finding (F…) or comment (U…) resolved: it is no longer told to the actor')
    .option('--reopen', 'open it again')
    .action(lazy(load, 'resolveCommand'));

  program
    .command('stage <session>')
    .description("put exactly an iteration's changes (or the whole session's) into your index; your unstaged edits stay")
    .option('-i, --iteration <n>', 'only this iteration (default: the whole session)', positiveInteger)
    .option('--json', 'print the result as JSON')
    .action(lazy(load, 'stageCommand'));

  program
    .command('accept <session>')
    .description(
      "let a protected change stand (a test removed or skipped, a check's command changed), or one of the start's tests fail: it no longer refuses DONE",
    )
    .option('-i, --iteration <n>', 'the iteration it was recorded in', positiveInteger)
    .option('--file <path>', 'the file (relative to the repository), as the run named it')
    .option('--test <id>', "one of the start's tests that fails on the final code, by its id as the run named it")
    .option('--reason <text>', 'why: the critic is told')
    .option('--undo', 'take the acceptance of --file or --test back')
    .option('--json', 'print the result as JSON')
    .action(lazy(() => import('./acceptCommand.js'), 'acceptCommand'));
}

/** Around the loop: the browser, trust, the agents' check-up, a first config. */
function addTools(program: Command, lazy: Lazy): void {
  program
    .command('ui')
    .description('browse sessions in a web browser, live (serves 127.0.0.1 only, read-only)')
    .option('--port <port>', 'port to listen on (default 3100, or any free port when that one is taken; 0: any free port)', portNumber)
    .option('--no-open', 'print the URL without opening a browser')
    .action(lazy(() => import('./uiCommand.js'), 'uiCommand'));

  program
    .command('trust')
    .description("trust the project's codeloops.toml as it is now: loops may run its commands and checks")
    .option('-d, --working-dir <dir>', 'the project (default: the current folder)')
    .option('--revoke', 'take the trust back')
    .action(lazy(() => import('./trustCommand.js'), 'trustCommand'));

  program
    .command('doctor')
    .description('check the agents a run here would use: found, their versions (tested or not), logged in; and how to fix what is not')
    .option('-d, --working-dir <dir>', 'the repository (default: the current folder)')
    .addOption(runOption('agent', 'check this agent for both roles'))
    .addOption(runOption('actorAgent', 'check this agent as the actor'))
    .addOption(runOption('criticAgent', 'check this agent as the critic'))
    .option('--json', 'print the report as JSON')
    .addOption(new Option('--editor-settings <json>', "an editor's settings, ranked between the global and the project config").hideHelp())
    .addHelpText('after', '\nExit codes: 0 a run could start (warnings aside), 1 a problem would stop it (an unreadable config included), 2 a usage error.')
    .action(lazy(() => import('./doctorCommand.js'), 'doctorCommand'));

  program
    .command('mcp')
    .description('serve MCP over stdio: any agent (Claude Code, Codex, Gemini CLI, Copilot) can run loops, wait for them and read them')
    .action(lazy(() => import('./mcpCommand.js'), 'mcpCommand'));

  program
    .command('init')
    .description("write a commented global config (the agents found) and, in a repository, a codeloops.toml suggesting the project's checks")
    .option('--force', 'replace existing files')
    .action(lazy(() => import('./initCommand.js'), 'initCommand'));
}

/** Whether a command line that commander refused asked for the run's NDJSON events (`--events ndjson` or `--events=ndjson`). */
function eventsRequested(options: readonly string[]): boolean {
  return options.some((arg, index) => arg === '--events=ndjson' || (arg === '--events' && options[index + 1] === 'ndjson'));
}

export async function main(argv: readonly string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram((code) => (exitCode = code));
  // A command asked for JSON answers in JSON when it fails too: a script reads the code, not the words.
  let answersInJson = false;
  program.hook('preAction', (_program, command) => {
    answersInJson = command.opts<{ json?: boolean }>().json === true;
    // Said before any command starts, rather than failing somewhere inside one (--help and --version still answer).
    const unsupported = unsupportedPlatformMessage(process.platform, 'cli');
    if (unsupported) throw new CodeloopsError('platform_unsupported', unsupported, { platform: process.platform });
  });
  try {
    await program.parseAsync(argv as string[], { from: 'user' });
    return exitCode;
  } catch (error) {
    const commanderError = error as { code?: string; exitCode?: number; message?: string };
    if (typeof commanderError.code === 'string' && commanderError.code.startsWith('commander.')) {
      // --help and --version end here too, with exit code 0.
      if (commanderError.exitCode === 0) return 0;
      // Refused while parsing, before any command ran (commander has said why on stderr): --json, if asked for, is read from the arguments.
      const options = argv.indexOf('--') < 0 ? argv : argv.slice(0, argv.indexOf('--'));
      const message = (commanderError.message ?? 'the command line cannot be used as given').replace(/^error: /, '');
      const failure = { code: 'usage' as const, message, details: {}, hint: 'Run "codeloops help <command>" for its arguments and options.' };
      if (options.includes('--json')) process.stdout.write(formatFailureAnswer(failure));
      // A run's readers too (`--json-output`, `--events ndjson`): the editor reads a usage error as the refusal it is, not a crash.
      else writeRefusal({ jsonOutput: options.includes('--json-output'), events: eventsRequested(options) ? 'ndjson' : undefined }, failure);
      return EXIT_CODES.failed;
    }
    // An expected failure says everything in its message and the hint: no stack trace.
    const expected = isCodeloopsError(error);
    const hint = expected ? cliHint(error) : undefined;
    if (answersInJson) process.stdout.write(formatFailureAnswer(failureOf(error, hint ?? null)));
    // A message can name what an agent made (a file, its words): as text, never as a terminal's commands.
    process.stderr.write(`codeloops: ${sanitizeForTerminal((error as Error).message)}\n${hint ? `${sanitizeForTerminal(hint)}\n` : ''}`);
    if (!expected || process.env.CODELOOPS_DEBUG) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    return EXIT_CODES.failed;
  }
}
