import readline from 'node:readline';
import { runControlSchema, type RunControl } from '../sessionFormat/reviewRecords.js';

/**
 * How a loop paused for review (`--review`, `review = "pause"`) hears the user's
 * word: lines on stdin. With `--events ndjson` (the editor) each line is a JSON
 * control (`{"type":"continue"}` or `{"type":"stop"}`); in a terminal, Enter goes on
 * and `stop` stops. Only lines typed while the loop waits count: an Enter pressed
 * while the agent worked does not skip the next review. A closed stdin cannot say
 * "go on": the loop stops.
 */
export interface ReviewControl {
  wait(iteration: number, signal: AbortSignal): Promise<RunControl['type']>;
  close(): void;
}

export function stdinReviewControl(options: { json: boolean; sessionId: () => string | undefined; say: (text: string) => void }): ReviewControl {
  let lines: readline.Interface | undefined;
  let closed = false;
  const open = (): readline.Interface => {
    if (!lines) {
      lines = readline.createInterface({ input: process.stdin, terminal: false });
      lines.on('close', () => (closed = true));
    }
    return lines;
  };
  return {
    wait(iteration, signal) {
      const input = open();
      if (!options.json) {
        const id = options.sessionId() ?? '<session>';
        options.say(
          `\nPaused for review after iteration ${iteration}. Look at it (codeloops review ${id} --iteration ${iteration}), ` +
            `comment (codeloops comment ${id} …) or reject hunks (codeloops reject ${id} --iteration ${iteration} --hunk K), ` +
            `then press Enter to continue, or type stop.\n`,
        );
      }
      return new Promise((resolve) => {
        const done = (action: RunControl['type']) => {
          input.off('line', onLine);
          input.off('close', onClose);
          signal.removeEventListener('abort', onAbort);
          resolve(action);
        };
        const onLine = (line: string) => {
          const action = options.json ? controlFromJson(line) : controlFromText(line);
          if (action) done(action);
        };
        const onClose = () => {
          if (!options.json) options.say('stdin is closed, so nobody can say to go on: stopping the loop.\n');
          done('stop');
        };
        const onAbort = () => done('stop');
        if (closed) return onClose();
        if (signal.aborted) return onAbort();
        input.on('line', onLine);
        input.once('close', onClose);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    close() {
      lines?.close();
      // Let go of stdin so that the process can end.
      process.stdin.pause();
      process.stdin.unref?.();
    },
  };
}

function controlFromJson(line: string): RunControl['type'] | undefined {
  try {
    const parsed = runControlSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data.type : undefined;
  } catch {
    return undefined;
  }
}

function controlFromText(line: string): RunControl['type'] | undefined {
  const word = line.trim().toLowerCase();
  if (word === '' || word === 'c' || word === 'continue' || word === 'y' || word === 'yes') return 'continue';
  if (word === 's' || word === 'stop' || word === 'q' || word === 'quit' || word === 'n' || word === 'no') return 'stop';
  return undefined;
}
