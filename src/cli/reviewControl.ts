import readline from 'node:readline';
import { needsInputText, type NeedsInput } from '../sessionFormat/needsInput.js';
import { runControlSchema, type ReviewAction, type RunControl } from '../sessionFormat/reviewRecords.js';

/**
 * How a paused loop hears the user's word: lines on stdin. With `--events ndjson`
 * (the editor) each line is a JSON control (`{"type":"continue"}`, `{"type":"stop"}`,
 * `{"type":"answer","text":"…"}`); in a terminal, Enter goes on, `stop` stops, and a
 * question is answered by typing the answer. Only lines typed while the loop waits
 * count: an Enter pressed while the agent worked does not skip the next review. A
 * closed stdin cannot say "go on": a review stops the loop, and so does a question
 * at a terminal (Ctrl+D); a question over the control channel is left for
 * `codeloops resume --answer`.
 */
export interface ReviewControl {
  /** Paused for review (`review = "pause"`): go on, or stop. */
  wait(iteration: number, signal: AbortSignal): Promise<ReviewAction>;
  /** The loop needs the user (`needs_input`): their answer, go on without one, stop, or null when the control channel closed and nobody can answer. */
  ask(iteration: number, needs: NeedsInput, signal: AbortSignal): Promise<RunControl | null>;
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
  /** The first line that means something, or what a closed stdin or an interrupt means. */
  const next = <T>(signal: AbortSignal, read: (line: string) => T | undefined, ends: { closed: () => T; aborted: T }): Promise<T> => {
    const input = open();
    return new Promise((resolve) => {
      const done = (value: T) => {
        input.off('line', onLine);
        input.off('close', onClose);
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      };
      const onLine = (line: string) => {
        const value = read(line);
        if (value !== undefined) done(value);
      };
      const onClose = () => done(ends.closed());
      const onAbort = () => done(ends.aborted);
      if (closed) return onClose();
      if (signal.aborted) return onAbort();
      input.on('line', onLine);
      input.once('close', onClose);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  };
  return {
    wait(iteration, signal) {
      if (!options.json) {
        const id = options.sessionId() ?? '<session>';
        options.say(
          `\nPaused for review after iteration ${iteration}. Look at it (codeloops review ${id} --iteration ${iteration}), ` +
            `comment (codeloops comment ${id} …) or reject hunks (codeloops reject ${id} --iteration ${iteration} --hunk K), ` +
            `then press Enter to continue, or type stop.\n`,
        );
      }
      const read = (line: string): ReviewAction | undefined => {
        const control = options.json ? controlFromJson(line) : controlFromText(line);
        return control?.type === 'answer' ? undefined : control?.type;
      };
      const closedNow = (): ReviewAction => {
        if (!options.json) options.say('stdin is closed, so nobody can say to go on: stopping the loop.\n');
        return 'stop';
      };
      return next(signal, read, { closed: closedNow, aborted: 'stop' });
    },
    ask(iteration, needs, signal) {
      if (!options.json) {
        options.say(`\nIteration ${iteration}: ${needsInputText(needs, true)}\nType your answer and press Enter (or type stop to stop the loop):\n`);
      }
      const read = (line: string): RunControl | undefined => (options.json ? controlFromJson(line) : answerFromText(line));
      const closedNow = (): RunControl | null => {
        // Over the control channel a closed stdin means the editor went away: nobody can answer.
        if (options.json) return null;
        // At a terminal it is the user's Ctrl+D: they chose not to answer now, as with `stop`.
        options.say('No answer (end of input): stopping the loop.\n');
        return { type: 'stop' };
      };
      return next<RunControl | null>(signal, read, { closed: closedNow, aborted: { type: 'stop' } });
    },
    close() {
      if (!lines) return; // stdin was never read
      lines.close();
      // Let go of stdin so that the process can end.
      process.stdin.pause();
      process.stdin.unref?.();
    },
  };
}

function controlFromJson(line: string): RunControl | undefined {
  try {
    const parsed = runControlSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function controlFromText(line: string): RunControl | undefined {
  const word = line.trim().toLowerCase();
  if (word === '' || word === 'c' || word === 'continue' || word === 'y' || word === 'yes') return { type: 'continue' };
  if (word === 's' || word === 'stop' || word === 'q' || word === 'quit' || word === 'n' || word === 'no') return { type: 'stop' };
  return undefined;
}

/** A line typed to answer a question: the answer, or `stop`; an empty line is no answer yet. */
function answerFromText(line: string): RunControl | undefined {
  const text = line.trim();
  if (text === '') return undefined;
  return text.toLowerCase() === 'stop' ? { type: 'stop' } : { type: 'answer', text };
}
