import { EXIT_CODES } from './exitCodes.js';
import { onCrash } from './crashHandlers.js';

export interface TerminalRunOptions {
  /** Events go to stdout (`--events ndjson`): nothing else is said on the terminal. */
  events?: 'ndjson';
  /** What a first Ctrl+C says it does. */
  stopping: string;
  /** Ends whatever runs at once, synchronously: a second Ctrl+C, a crash. */
  endNow: (status: 'interrupted' | 'failed', failure: { error: string; code: 'internal' } | null) => void;
}

export interface TerminalRun {
  signal: AbortSignal;
  /** False once whoever reads stdout went away. */
  stdoutOpen: () => boolean;
}

/**
 * Runs something long from the terminal: Ctrl+C (and SIGTERM, SIGHUP, SIGQUIT) aborts
 * it, a second one ends it at once (its records still end properly: every write is
 * synchronous) and exits 130; a crash of the runner ends it `failed`; a closed stdout
 * (`| head -1`) stops it as if interrupted. Shared by `run`, `resume` and candidate groups.
 */
export async function runFromTerminal<T>(options: TerminalRunOptions, body: (run: TerminalRun) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signals === 1) {
      const name = signal === 'SIGINT' ? 'Ctrl+C' : signal === 'SIGHUP' ? 'the terminal closed' : signal;
      if (!options.events) writeStderr(`\n${name}: ${options.stopping}… (again to quit at once)\n`);
      controller.abort();
    } else {
      options.endNow('interrupted', null);
      process.exit(EXIT_CODES.interrupted);
    }
  };
  const signalNames: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
  for (const name of signalNames) process.on(name, onSignal);
  const forgetCrash = onCrash((message) => options.endNow('failed', { error: message, code: 'internal' }));
  let stdoutOpen = true;
  const onStdoutError = (): void => {
    stdoutOpen = false;
    controller.abort();
  };
  process.stdout.on('error', onStdoutError);
  try {
    return await body({ signal: controller.signal, stdoutOpen: () => stdoutOpen });
  } finally {
    for (const name of signalNames) process.off(name, onSignal);
    forgetCrash();
    process.stdout.off('error', onStdoutError);
  }
}

export function writeStderr(text: string): void {
  try {
    process.stderr.write(text);
  } catch {
    // a closed terminal cannot be told anything
  }
}
