import { acceptProtectedChange, acceptStartTest, undoAcceptance, undoTestAcceptance } from '../review/acceptedChanges.js';
import { reviewTargetOf } from '../review/reviewTarget.js';
import { protectedChangeText } from '../sessionFormat/verification.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { openStore } from './openStore.js';
import { UsageError } from './usageError.js';
import { formatCliAnswer, type CliAnswerInput } from '../sessionFormat/cliAnswerIndex.js';

/** What an accept did, beside which session and what (`accept --json`). */
type AcceptFacts = Omit<CliAnswerInput<'accept'>, 'session_id' | 'file' | 'test'>;

/**
 * `codeloops accept <session> --iteration N --file F [--reason …]`: the user lets a
 * protected change stand; `--test ID [--reason …]`: one of the start's tests fail on
 * the final code; `--undo --file F` or `--undo --test ID` takes it back. Exit 0 when
 * recorded, 3 when `--undo` finds nothing to take back.
 */
export async function acceptCommand(
  idOrPrefix: string,
  options: { iteration?: number; file?: string; test?: string; reason?: string; undo?: boolean; json?: boolean },
): Promise<number> {
  if (options.test !== undefined && options.file !== undefined) throw new UsageError('Accept a file (--file) or a test (--test), not both at once.');
  if (options.test !== undefined) return acceptTest(idOrPrefix, { ...options, test: options.test });
  if (!options.file) throw new UsageError('Say what to accept: --file <path> (a protected change) or --test <id> (a start test), as the run named it.');
  if (!options.undo && options.iteration === undefined) throw new UsageError('Say which iteration recorded the change: --iteration <n>.');
  const store = openStore();
  const target = await reviewTargetOf(store, (id) => sidecarDirOf(id), await store.resolveId(idOrPrefix));
  const say = (text: string, json: AcceptFacts) =>
    process.stdout.write(
      options.json ? formatCliAnswer('accept', { session_id: target.sessionId, file: options.file, ...json }) : sanitizeForTerminal(text) + '\n',
    );
  if (options.undo) {
    const undone = await undoAcceptance(target, options.file);
    say(undone ? `${options.file} is no longer accepted: while its change stands, DONE is refused.` : `${options.file} was not accepted.`, {
      result: undone ? 'acceptance_undone' : 'nothing_to_do',
    });
    return undone ? 0 : 3;
  }
  const { record, changes } = await acceptProtectedChange(target, { iteration: options.iteration!, file: options.file, reason: options.reason ?? null });
  say(
    `Accepted ${changes.map(protectedChangeText).join('; ')}.\nIt no longer refuses DONE${record.reason ? '; the critic is told why' : ''}. ` +
      `Undo with: codeloops accept --undo ${target.sessionId} --file ${options.file}`,
    { result: 'accepted', iteration: record.iteration, kinds: record.kinds, reason: record.reason },
  );
  return 0;
}

/** `accept --test ID`: one of the start's tests may fail on the final code; `--undo` takes it back. */
async function acceptTest(idOrPrefix: string, options: { test: string; reason?: string; undo?: boolean; json?: boolean }): Promise<number> {
  const store = openStore();
  const target = await reviewTargetOf(store, (id) => sidecarDirOf(id), await store.resolveId(idOrPrefix));
  const say = (text: string, json: AcceptFacts) =>
    process.stdout.write(
      options.json ? formatCliAnswer('accept', { session_id: target.sessionId, test: options.test, ...json }) : sanitizeForTerminal(text) + '\n',
    );
  if (options.undo) {
    const undone = await undoTestAcceptance(target, options.test);
    say(undone ? `${options.test} is no longer accepted: while it fails on the final code, DONE is refused.` : `${options.test} was not accepted.`, {
      result: undone ? 'acceptance_undone' : 'nothing_to_do',
    });
    return undone ? 0 : 3;
  }
  const record = await acceptStartTest(target, { id: options.test, reason: options.reason ?? null });
  say(
    `Accepted the start's test ${options.test} failing on the final code.\nIt no longer refuses DONE${record.reason ? '; the critic and the actor are told why' : ''}. ` +
      `Undo with: codeloops accept --undo ${target.sessionId} --test ${JSON.stringify(options.test)}`,
    { result: 'accepted', reason: record.reason },
  );
  return 0;
}
