import { Command, InvalidArgumentError, Option } from 'commander';
import { AGENT_KINDS } from '../agents/agentKinds.js';
import { AgentNotFoundError } from '../agents/agentProgram.js';
import { ConfigError } from '../config/configFiles.js';
import { GitNotInstalledError, MissingDirectoryError, NotAGitRepositoryError } from '../git/repository.js';
import { endRunningLoopsNow, LoopFailure } from '../loop/loopRunner.js';
import { LoopAlreadyRunningError } from '../loop/repositoryLock.js';
import { ResumeRefusedError } from '../resume/resumePlan.js';
import { InvalidFilterError } from '../sessions/sessionFilter.js';
import { AmbiguousSessionIdError, IterationNotFoundError, NotASessionError, SessionNotFoundError } from '../sessions/sessionStore.js';
import { initCommand } from './initCommand.js';
import { replayCommand } from './replayCommand.js';
import { resumeCommand, type ResumeOptions } from './resumeCommand.js';
import { rollbackCommand, type RollbackOptions } from './rollbackCommand.js';
import { runCommand, EXIT_CODES, type RunOptions } from './runCommand.js';
import { diffCommand, listCommand, showCommand, statsCommand, type ListOptions } from './sessionsCommand.js';
import { uiCommand, type UiOptions } from './uiCommand.js';
import { UsageError } from './usageError.js';

declare const CODELOOPS_VERSION: string;
const VERSION = typeof CODELOOPS_VERSION === 'string' ? CODELOOPS_VERSION : '0.0.0-dev';

/** Errors whose message says everything: printed without a stack trace. */
const EXPECTED_ERRORS = [
  UsageError,
  ConfigError,
  AgentNotFoundError,
  NotAGitRepositoryError,
  MissingDirectoryError,
  GitNotInstalledError,
  LoopAlreadyRunningError,
  InvalidFilterError,
  SessionNotFoundError,
  AmbiguousSessionIdError,
  NotASessionError,
  IterationNotFoundError,
  ResumeRefusedError,
  LoopFailure,
];

/** More iterations than anyone means; also keeps the number exact in JSON. */
const MAX_ITERATIONS_FLAG = 1_000_000;

function iterationLimit(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > MAX_ITERATIONS_FLAG) {
    throw new InvalidArgumentError(`expected a whole number from 0 (no limit) to ${MAX_ITERATIONS_FLAG.toLocaleString('en-US')}.`);
  }
  return Number(value);
}

function positiveInteger(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError('expected a positive whole number.');
  return Number(value);
}

function portNumber(value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('expected a port from 0 (any free port) to 65535.');
  return Number(value);
}

function agentOption(flags: string, description: string): Option {
  return new Option(flags, description).choices(AGENT_KINDS as unknown as string[]);
}

/** What every command that runs a loop takes: agents and models per role, the iteration limit, how to report. */
function loopOptions(command: Command, texts: { agentDefault: string; maxIterations: string }): Command {
  return command
    .addOption(agentOption('-a, --agent <agent>', `agent for both roles${texts.agentDefault}`))
    .addOption(agentOption('--actor-agent <agent>', 'agent that does the work'))
    .addOption(agentOption('--critic-agent <agent>', 'agent that reviews it'))
    .option('-m, --model <model>', 'model for both roles')
    .option('--actor-model <model>', "the actor's model")
    .option('--critic-model <model>', "the critic's model")
    .option('-n, --max-iterations <n>', texts.maxIterations, iterationLimit)
    .option('--json-output', 'print the outcome as one JSON object on stdout')
    .addOption(new Option('--events <format>', 'stream run events on stdout').choices(['ndjson']))
    .option('-q, --quiet', 'print nothing but errors while running')
    .addOption(new Option('--editor-settings <json>', "an editor's settings, ranked between the global and the project config").hideHelp());
}

export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('codeloops')
    .description('Run a coding agent in an actor–critic loop until the work is actually done.')
    .version(VERSION, '-V, --version')
    .exitOverride() // before the subcommands are added, so they inherit it
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({ outputError: (text, write) => write(text) });

  const run = program
    .command('run', { isDefault: true })
    .description('run the loop on a git repository (the default command)')
    .option('-p, --prompt <text>', 'the task (default: read --prompt-file)')
    .option('--prompt-file <file>', 'read the task from this file (default: prompt.md in the working directory)')
    .option('-d, --working-dir <dir>', 'the repository to work in (default: the current folder)');
  loopOptions(run, { agentDefault: '', maxIterations: 'stop after n iterations (0: no limit)' })
    .option('--dry-run', 'check the configuration and agents, print the plan, run nothing')
    .action(async (options: RunOptions) => setExitCode(await runCommand(options)));

  const sessions = program.command('sessions').description('list, show and compare recorded sessions');
  const filterOptions = (command: Command): Command =>
    command
      .option('--outcome <outcome...>', 'only these outcomes (success, failed, interrupted, max_iterations_reached)')
      .option('--after <date>', 'only sessions started on or after this date (YYYY-MM-DD or ISO 8601)')
      .option('--before <date>', 'only sessions started on or before this date')
      .option('--search <text>', 'only sessions whose prompt contains this text')
      .option('--project <name>', 'only sessions of this project (the folder name)')
      .option('--json', 'print JSON');
  filterOptions(sessions.command('list').description('list sessions, newest first')).action(async (options: ListOptions) => {
    setExitCode(await listCommand(options));
  });
  sessions
    .command('show <id>')
    .description('show a session (an id, a unique prefix of one, or "latest")')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }) => setExitCode(await showCommand(id, options)));
  sessions
    .command('diff <id>')
    .description("print a session's recorded diff")
    .option('-i, --iteration <n>', 'only this iteration', positiveInteger)
    .action(async (id: string, options: { iteration?: number }) => setExitCode(await diffCommand(id, options)));
  sessions
    .command('replay <id>')
    .description("a session's timeline: phases, tool calls, usage, diffs, verdicts, interruptions, rollbacks, resumes")
    .option('--json', 'one JSON entry a line (a stable, documented schema)')
    .action(async (id: string, options: { json?: boolean }) => setExitCode(await replayCommand(id, options)));
  filterOptions(sessions.command('stats').description('success rate, iterations and durations over sessions')).action(async (options: ListOptions) => {
    setExitCode(await statsCommand(options));
  });

  const resume = program
    .command('resume <session>')
    .description('carry on an interrupted, crashed or stopped session (an id, a unique prefix, or "latest")')
    .option('--force', 'carry on even though the files differ from how the loop left them');
  loopOptions(resume, { agentDefault: ' (default: as recorded)', maxIterations: 'the limit on the iteration number (0: no limit; default: as recorded)' })
    .action(async (id: string, options: ResumeOptions) => setExitCode(await resumeCommand(id, options)));

  program
    .command('rollback <session>')
    .description('put the files a session changed back to how they were before an iteration (undoable)')
    .option('-i, --iteration <n>', 'roll back to before this iteration (default: the last one)', positiveInteger)
    .option('--undo', "undo the session's last rollback")
    .option('--force', 'overwrite files you changed since the loop (they stay recoverable with --undo)')
    .option('--dry-run', 'say what would be restored, removed or overwritten; change nothing')
    .option('--json', 'print the result as JSON')
    .addHelpText(
      'after',
      '\nResults and exit codes: rolled_back or undone 0, nothing_to_roll_back 3, conflict 4 (nothing changed), snapshot_missing 5.',
    )
    .action(async (id: string, options: RollbackOptions) => {
      if (options.undo && options.iteration !== undefined) throw new UsageError('--undo takes no --iteration: it undoes the last rollback.');
      setExitCode(await rollbackCommand(id, options));
    });

  program
    .command('ui')
    .description('browse sessions in a web browser, live (serves 127.0.0.1 only, read-only)')
    .option('--port <port>', 'port to listen on (default 3100, or any free port when that one is taken; 0: any free port)', portNumber)
    .option('--no-open', 'print the URL without opening a browser')
    .action(async (options: UiOptions) => setExitCode(await uiCommand(options)));

  program
    .command('init')
    .description('write a commented global config after detecting the installed agents')
    .option('--force', 'replace an existing config')
    .action((options: { force?: boolean }) => setExitCode(initCommand(options)));

  return program;
}

export async function main(argv: readonly string[]): Promise<number> {
  let exitCode = 0;
  const program = buildProgram((code) => (exitCode = code));
  try {
    await program.parseAsync(argv as string[], { from: 'user' });
    return exitCode;
  } catch (error) {
    const commanderError = error as { code?: string; exitCode?: number };
    if (typeof commanderError.code === 'string' && commanderError.code.startsWith('commander.')) {
      // --help and --version end here too, with exit code 0.
      return commanderError.exitCode === 0 ? 0 : EXIT_CODES.failed;
    }
    const expected = EXPECTED_ERRORS.some((kind) => error instanceof kind);
    process.stderr.write(`codeloops: ${(error as Error).message}\n`);
    if (!expected || process.env.CODELOOPS_DEBUG) process.stderr.write(`${(error as Error).stack ?? ''}\n`);
    return EXIT_CODES.failed;
  }
}

if (require.main === module) {
  // Until an outcome is known, an exit is a failure: nothing may end as a silent 0.
  process.exitCode = EXIT_CODES.failed;
  process.on('uncaughtException', (error) => {
    endRunningLoopsNow('failed', `the runner crashed: ${error.message}`);
    process.stderr.write(`codeloops: the runner crashed: ${error.stack ?? error.message}\n`);
    process.exit(EXIT_CODES.failed);
  });
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`codeloops: ${String(error)}\n`);
      process.exitCode = EXIT_CODES.failed;
    },
  );
}
