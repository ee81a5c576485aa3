import fs from 'node:fs';
import path from 'node:path';
import { forecastLine, type Forecast } from '../../sessionFormat/forecast.js';
import type { EditorWindow, FolderRef } from '../editorPorts.js';
import type { LoopPrompt } from './loopStarter.js';

const PROMPT_FILE = 'prompt.md';

/** The Run Prompt box's line while the forecast is worked out. */
export const FORECASTING = 'Forecast: looking at past tasks with these agents…';

/**
 * "Run Prompt": asks for the task, prefilled from the folder's prompt.md when it has
 * one. The box opens at once; the forecast of the run (`codeloops forecast` for this
 * folder, started before the box) joins its prompt line when it arrives, and the
 * user can type, run or cancel meanwhile.
 */
export function askForTask(window: Pick<EditorWindow, 'ask'>) {
  // No forecast for a candidate group: its actors differ.
  return async (folder: FolderRef, forecast?: Promise<Forecast | undefined>): Promise<LoopPrompt | undefined> => {
    const prefill = readPromptFile(folder);
    const prompt = prefill
      ? `What should the agent do? (prefilled from ${PROMPT_FILE})`
      : 'What should the agent do? The critic checks the result until it is done.';
    const text = await window.ask({
      title: `Codeloops: Run Prompt in ${folder.name}`,
      prompt: forecast ? `${prompt} ${FORECASTING}` : prompt,
      placeholder: 'e.g. Add input validation to the registration endpoint, with tests',
      value: prefill,
      validate: (value) => (value.trim() ? undefined : 'Describe the task.'),
      // No forecast to be had (the runner could not say): the line just loses its "looking".
      promptLater: forecast?.then((known) => (known ? `${prompt} ${forecastLine(known)}` : prompt)),
    });
    return text?.trim() ? { text } : undefined;
  };
}

function readPromptFile(folder: FolderRef): string {
  try {
    return fs.readFileSync(path.join(folder.uri.fsPath, PROMPT_FILE), 'utf8').replace(/\s+/g, ' ').trim();
  } catch {
    return ''; // no prompt.md: an empty box
  }
}
