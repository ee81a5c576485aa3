import type { TestReport, TestRunner } from '../sessionFormat/testResults.js';
import { readCargoTestOutput } from './cargoTestReport.js';
import { readGoTestEvents } from './goTestReport.js';
import { readJestReport } from './jestReport.js';
import { readJunitReport } from './junitReport.js';
import { readMochaReport } from './mochaReport.js';
import type { RecognisedRunner } from './recogniseRunner.js';

/**
 * A check's command as run so that its runner reports test by test: the command, with
 * the report's arguments appended when they go there, the variables that ask for it
 * otherwise, and how to read what comes back. The runner's own output to the terminal
 * stays as it was (mocha's JSON reporter aside, whose summary the check's report gives).
 */
export interface ReportedRun {
  runner: TestRunner;
  command: string;
  /** Added to the check's environment, after the variable's value there (`PYTEST_ADDOPTS`, `GOFLAGS`, `NODE_OPTIONS`). */
  variables: Record<string, string>;
  /** The report is what the command prints to stdout (go test's events, cargo's lines), not a file. */
  fromStdout: boolean;
  /** A line of stdout as the check's output shows it: go's events as the text they carry. */
  display?: (line: string) => string;
  read(text: string, ranIn: string): TestReport;
}

/**
 * How to run `command` for its runner's report in `reportFile`; null when the runner's
 * arguments cannot be reached (`via: 'none'`): the check then counts by its exit code.
 */
export function reportedRun(command: string, recognised: RecognisedRunner, reportFile: string, environment: NodeJS.ProcessEnv): ReportedRun | null {
  const { runner } = recognised;
  const appended = (words: readonly string[]): string => {
    // npm takes a script's arguments after `--`; yarn, pnpm and bun pass them on as they are.
    const separator = recognised.script?.manager === 'npm' ? ['--'] : [];
    return `${command} ${[...separator, ...words].map(shellWord).join(' ')}`;
  };
  const after = (name: string, words: string): Record<string, string> => ({ [name]: [environment[name], words].filter(Boolean).join(' ') });
  if (recognised.via === 'none') return null;
  switch (runner) {
    case 'pytest':
      return {
        runner,
        command,
        variables: after('PYTEST_ADDOPTS', `--junitxml=${shellWord(reportFile)} -o junit_family=xunit2`),
        fromStdout: false,
        read: (text) => readJunitReport(text, 'pytest'),
      };
    case 'node':
      return {
        runner,
        command,
        variables: after(
          'NODE_OPTIONS',
          `--test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=${nodeOptionWord(reportFile)}`,
        ),
        fromStdout: false,
        read: (text) => readJunitReport(text, 'node'),
      };
    case 'go':
      return { runner, command, variables: after('GOFLAGS', '-json'), fromStdout: true, display: goEventText, read: (text) => readGoTestEvents(text) };
    case 'cargo':
      return { runner, command, variables: {}, fromStdout: true, read: (text) => readCargoTestOutput(text) };
    case 'mocha':
      return {
        runner,
        command: appended(['--reporter', 'json', '--reporter-option', `output=${reportFile}`]),
        variables: {},
        fromStdout: false,
        read: readMochaReport,
      };
    case 'jest':
      return {
        runner,
        command: appended(['--json', `--outputFile=${reportFile}`]),
        variables: {},
        fromStdout: false,
        read: (text, ranIn) => readJestReport(text, 'jest', ranIn),
      };
    case 'vitest':
      return {
        runner,
        command: appended(['--reporter=default', '--reporter=json', `--outputFile.json=${reportFile}`]),
        variables: {},
        fromStdout: false,
        read: (text, ranIn) => readJestReport(text, 'vitest', ranIn),
      };
  }
}

/** A word as sh reads it back unchanged. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** NODE_OPTIONS takes double quotes around a value with spaces. */
function nodeOptionWord(word: string): string {
  return /\s|"/.test(word) ? `"${word.replace(/(["\\])/g, '\\$1')}"` : word;
}

/** A `go test -json` event shown as the text it carries; a line that is not an event as it is. */
function goEventText(line: string): string {
  if (!line.startsWith('{')) return `${line}\n`;
  try {
    const event = JSON.parse(line) as { Output?: unknown };
    return typeof event.Output === 'string' ? event.Output : '';
  } catch {
    return `${line}\n`;
  }
}
