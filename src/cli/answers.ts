import { formatCliAnswer, type CliAnswerInput, type CliCommand } from '../sessionFormat/cliAnswerIndex.js';

/**
 * Prints a command's machine-readable answer on stdout, as `CLI_ANSWERS` declares it:
 * the one way a command writes JSON, so that what it prints and what readers parse are
 * the same declaration.
 */
export function printAnswer<C extends CliCommand>(command: C, answer: CliAnswerInput<C>): void {
  process.stdout.write(formatCliAnswer(command, answer));
}
