import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { LoopPrompt } from './loopStarter.js';

const PROMPT_FILE = 'prompt.md';

/** Asks for the task, prefilled from the folder's prompt.md when it has one. */
export async function askForPrompt(folder: vscode.WorkspaceFolder): Promise<LoopPrompt | undefined> {
  const promptFile = path.join(folder.uri.fsPath, PROMPT_FILE);
  let prefill = '';
  try {
    prefill = fs.readFileSync(promptFile, 'utf8').replace(/\s+/g, ' ').trim();
  } catch {
    // no prompt.md: an empty box
  }
  const text = await vscode.window.showInputBox({
    title: `Codeloops: Run Prompt in ${folder.name}`,
    prompt: prefill ? `What should the agent do? (prefilled from ${PROMPT_FILE})` : 'What should the agent do? The critic checks the result until it is done.',
    placeHolder: 'e.g. Add input validation to the registration endpoint, with tests',
    value: prefill,
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim() ? undefined : 'Describe the task.'),
  });
  return text?.trim() ? { text } : undefined;
}

/** The active Markdown file, or the folder's prompt.md, as it is on disk (saved first). */
export async function promptFileToRun(folder: vscode.WorkspaceFolder): Promise<LoopPrompt | undefined> {
  const editor = vscode.window.activeTextEditor;
  const active = editor?.document;
  if (
    active &&
    active.languageId === 'markdown' &&
    active.uri.scheme === 'file' &&
    vscode.workspace.getWorkspaceFolder(active.uri)?.uri.toString() === folder.uri.toString()
  ) {
    if (active.isDirty) await active.save();
    return { file: active.uri.fsPath };
  }
  const promptFile = path.join(folder.uri.fsPath, PROMPT_FILE);
  if (fs.existsSync(promptFile)) return { file: promptFile };
  const create = `Create ${PROMPT_FILE}`;
  const choice = await vscode.window.showErrorMessage(`No prompt to run: open a Markdown file, or write the task in ${PROMPT_FILE} in ${folder.name}.`, create);
  if (choice === create) {
    fs.writeFileSync(promptFile, '# Task\n\nDescribe what the agent should do, and how the critic can tell it is done.\n', { flag: 'wx' });
    await vscode.window.showTextDocument(vscode.Uri.file(promptFile));
  }
  return undefined;
}
