import { agentWaitingText } from '../../sessionFormat/eventWording.js';
import { loopProgressText } from '../../sessionFormat/loopProgress.js';
import { formatDuration } from '../../text/humanize.js';
import type { FolderRef } from '../editorPorts.js';
import { COMMANDS, type CommandId } from '../ids.js';
import type { RunningLoop } from './loopRegistry.js';
import { spendText } from './runController.js';

/** What the status bar says of a running loop and what a click on it does; plain data, for the item and for tests. */
export interface RunStatus {
  text: string;
  tooltip: string;
  /** The screen reader's words. */
  label: string;
  command: { command: CommandId; title: string; arguments: unknown[] };
}

/**
 * Where the loop is, for the status bar: while it waits for your answer to a question,
 * a click opens the answer box (a dismissed notification cannot be brought back); while
 * it waits for your review, a click goes on; while it waits out an agent's usage limit
 * it says until when; otherwise it says the iteration, phase,
 * elapsed time and spend, and a click interrupts.
 */
export function runStatusOf<F extends FolderRef>(loop: RunningLoop<F>, now = Date.now()): RunStatus {
  const { pausedAfter, question } = loop.progress;
  const folder = loop.folder.name;
  if (question !== null) {
    return {
      text: '$(question) Codeloops: needs your answer',
      tooltip: `The loop in ${folder} waits for your answer (asked by the ${question.from}): ${question.question}\nClick to answer.`,
      label: `Codeloops loop in ${folder} needs your answer: ${question.question}. Answer.`,
      command: { command: COMMANDS.answerQuestion, title: 'Answer…', arguments: [loop.sessionId] },
    };
  }
  if (pausedAfter !== null) {
    return {
      text: `$(comment-discussion) Codeloops: waiting for your review of iteration ${pausedAfter}`,
      tooltip: `The loop in ${folder} waits: review iteration ${pausedAfter} (comment, reject hunks), then click to go on.`,
      label: `Codeloops loop in ${folder} waits for your review of iteration ${pausedAfter}. Continue.`,
      command: { command: COMMANDS.continueLoop, title: 'Continue', arguments: [loop.sessionId] },
    };
  }
  const elapsed = formatDuration((now - loop.startedAt) / 1000);
  const { waiting } = loop.progress;
  if (waiting !== null) {
    const words = agentWaitingText(waiting);
    return {
      text: `$(watch) Codeloops: ${words}`,
      tooltip: `The loop in ${folder}: ${words}; then it runs the agent again (${elapsed} so far).\nClick to interrupt: the session ends as interrupted.`,
      label: `Codeloops loop in ${folder}: ${words}. Interrupt.`,
      command: { command: COMMANDS.interrupt, title: 'Interrupt', arguments: [loop.folder, loop.kind] },
    };
  }
  const where = loopProgressText(loop.progress);
  const cost = spendText(loop);
  return {
    text: `$(debug-stop) Codeloops: ${where} · ${elapsed}${cost ? ` · ${cost}` : ''}`,
    tooltip:
      `A Codeloops loop is running in ${folder} (${where}, ${elapsed}${cost ? `, ${cost}` : ''}).\n` +
      `Click to interrupt: the agent is stopped at once and the session ends as interrupted.`,
    label: `Codeloops loop in ${folder}, ${where}, ${elapsed}${cost ? `, ${cost}` : ''}. Interrupt.`,
    command: { command: COMMANDS.interrupt, title: 'Interrupt', arguments: [loop.folder, loop.kind] },
  };
}
