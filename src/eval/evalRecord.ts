import fs from 'node:fs';
import path from 'node:path';
import { evalIdFor, evalRecordLineSchema, isEvalId, type EvalRecordInput, type EvalRecordLine, type EvalRecordLineOf } from '../sessionFormat/evalRecords.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { AppendOnlyFile } from '../sessionWriter/appendOnlyFile.js';
import { readJsonlRecords } from '../sessions/sidecarReader.js';

/** An eval's record (`evals/<eval_id>.jsonl`, see `evalRecords.ts`): written by the process running it, read back by `--resume`, the results and `sessions list --eval`. */

export class EvalNotFoundError extends CodeloopsError {
  override name = 'EvalNotFoundError';
  constructor(what: string, directory: string) {
    super('eval_not_found', `No eval "${what}" in ${directory}.`, { id: what, directory });
  }
}

/** Which run: a task, a config, a repetition. */
export interface RunKey {
  task: string;
  config: string;
  repetition: number;
}

export function runKeyText(key: RunKey): string {
  return JSON.stringify([key.task, key.config, key.repetition]);
}

/** Appends lines to an eval's record, each checked against its schema and synced. */
export class EvalRecorder {
  private constructor(
    readonly evalId: string,
    private readonly file: AppendOnlyFile,
  ) {}

  /** The record of a new eval (its file must not exist: that is how two evals never share an id). */
  static create(evalsDirectory: string, evalId: string): EvalRecorder {
    fs.mkdirSync(evalsDirectory, { recursive: true, mode: 0o700 });
    return new EvalRecorder(evalId, AppendOnlyFile.createExclusive(path.join(evalsDirectory, `${evalId}.jsonl`)));
  }

  /** The record of a new eval of this suite, named by this second or, when another eval of the suite took it, the next free one. */
  static createNamed(evalsDirectory: string, suiteName: string, now = new Date()): EvalRecorder {
    for (let offsetSecs = 0; ; offsetSecs++) {
      try {
        return EvalRecorder.create(evalsDirectory, evalIdFor(new Date(now.getTime() + offsetSecs * 1000), suiteName));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || offsetSecs >= 3600) throw error;
      }
    }
  }

  static open(evalsDirectory: string, evalId: string): EvalRecorder {
    return new EvalRecorder(evalId, AppendOnlyFile.openForAppend(path.join(evalsDirectory, `${evalId}.jsonl`)));
  }

  record(input: EvalRecordInput): EvalRecordLine {
    return this.copy({ ...input, timestamp: new Date().toISOString() } as EvalRecordLine);
  }

  /** A line with its own time (a run another machine recorded, brought here by `eval merge`). */
  copy(input: EvalRecordLine): EvalRecordLine {
    const line = evalRecordLineSchema.parse(input);
    this.file.appendLine(line);
    this.file.sync();
    return line;
  }

  close(): void {
    this.file.close();
  }
}

/** An eval as its record tells it. */
export interface EvalState {
  id: string;
  started: EvalRecordLineOf<'eval_started'>;
  /** The runs that finished, by `runKeyText`: never run again. */
  finished: Map<string, EvalRecordLineOf<'run_finished'>>;
  /** Every session the eval's runs started, finished or not, in the order they started. */
  sessionIds: string[];
  /** The process that ran it last (started or resumed it), and whether that process recorded its end. */
  runner: { pid: number; stopped: boolean } | null;
}

export async function readEval(evalsDirectory: string, evalId: string, warn: (message: string) => void = () => {}): Promise<EvalState> {
  const lines = fs.existsSync(path.join(evalsDirectory, `${evalId}.jsonl`))
    ? await readJsonlRecords(path.join(evalsDirectory, `${evalId}.jsonl`), evalRecordLineSchema, warn, (line) => line)
    : [];
  const started = lines.find((line): line is EvalRecordLineOf<'eval_started'> => line.type === 'eval_started');
  if (!started) throw new EvalNotFoundError(evalId, evalsDirectory);
  const finished = new Map<string, EvalRecordLineOf<'run_finished'>>();
  const sessionIds: string[] = [];
  let runner: EvalState['runner'] = null;
  for (const line of lines) {
    if (line.type === 'eval_started' || line.type === 'eval_resumed') runner = { pid: line.pid, stopped: false };
    if (line.type === 'eval_stopped' && runner) runner.stopped = true;
    if (line.type === 'run_finished') finished.set(runKeyText(line), line);
    const sessionId = line.type === 'run_started' || line.type === 'run_finished' ? line.session_id : null;
    if (sessionId && !sessionIds.includes(sessionId)) sessionIds.push(sessionId);
  }
  return { id: evalId, started, finished, sessionIds, runner };
}

/** An eval id as typed: the whole id, a unique prefix of one, or `latest`. */
export function resolveEvalId(evalsDirectory: string, typed: string): string {
  let names: string[];
  try {
    names = fs.readdirSync(evalsDirectory);
  } catch {
    names = [];
  }
  const ids = names
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => name.slice(0, -'.jsonl'.length))
    .filter(isEvalId)
    .sort();
  if (typed === 'latest' && ids.length > 0) return ids[ids.length - 1]!;
  if (ids.includes(typed)) return typed;
  const matches = typed === '' ? [] : ids.filter((id) => id.startsWith(typed));
  if (matches.length === 1) return matches[0]!;
  throw new EvalNotFoundError(typed, evalsDirectory);
}
