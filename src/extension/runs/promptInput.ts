import fs from 'node:fs';
import path from 'node:path';
import * as vscode from 'vscode';
import type { LoopPrompt } from './loopStarter.js';

const PROMPT_FILE = 'prompt.md';

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
