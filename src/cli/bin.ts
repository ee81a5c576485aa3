/**
 * The `codeloops` program: runs the command line and sets the exit code. Kept apart
 * from `main.ts`, which tests import without running anything.
 */
import { runCrashHandlers } from './crashHandlers.js';
import { EXIT_CODES } from './exitCodes.js';
import { main } from './main.js';

// Until an outcome is known, an exit is a failure: nothing may end as a silent 0.
process.exitCode = EXIT_CODES.failed;
process.on('uncaughtException', (error) => {
  runCrashHandlers(`the runner crashed: ${error.message}`);
  process.stderr.write(`codeloops: the runner crashed: ${error.stack ?? error.message}\n`);
  process.exit(EXIT_CODES.failed);
});
// Whoever reads stdout went away (`codeloops sessions list | head`): they had what they
// wanted, and that is no crash. A command that must react (a running loop ends its
// session) listens itself, and then this one leaves it to that command.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  if (process.stdout.listenerCount('error') === 1) process.exit(0);
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
