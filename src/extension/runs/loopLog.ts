import { describeEvent, type LineTone } from '../../sessionFormat/eventWording.js';
import type { RunEvent } from '../../sessionFormat/runEvents.js';
import type { EditorWindow, RunLog } from '../editorPorts.js';

/**
 * The Codeloops log (the output channel) as the loops write to it: each run event in
 * the same words as the CLI prints it, and errors whose details are there.
 */

/** Text into the log, line by line, at its tone's level. */
export function writeLog(log: RunLog, text: string, tone: LineTone): void {
  for (const line of text.split('\n')) {
    if (tone === 'error') log.error(line);
    else if (tone === 'warning') log.warn(line);
    else log.info(line);
  }
}

/** A run event into the log; each line of a candidate's starts with its label. */
export function logEvent(log: RunLog, event: RunEvent, options: { showAgentText: boolean; label?: string }): void {
  const { label } = options;
  for (const line of describeEvent(event, { showAgentText: options.showAgentText }))
    writeLog(log, label === undefined ? line.text : line.text.replace(/^/gm, `[${label}] `), line.tone);
}

const SHOW_LOG = 'Show Log';

/**
 * An error whose details are in the log: shown with its actions and "Show Log" last,
 * which opens the log. Resolves to the other action chosen, if any.
 */
export async function showErrorWithLog(ports: { window: EditorWindow; log: RunLog }, message: string, ...actions: string[]): Promise<string | undefined> {
  const choice = await ports.window.showError(message, ...actions, SHOW_LOG);
  if (choice !== SHOW_LOG) return choice;
  ports.log.show(true);
  return undefined;
}
