import * as vscode from 'vscode';
import type { AskOptions, EditorCommands, EditorWindow } from './editorPorts.js';

/** The controllers' ports (`editorPorts.ts`) on the real VS Code API: one line each, nothing decided here. */

export const vscodeWindow: EditorWindow = {
  showInfo: (message, ...actions) => vscode.window.showInformationMessage(message, ...actions),
  showWarning: (message, ...actions) => vscode.window.showWarningMessage(message, ...actions),
  showError: (message, ...actions) => vscode.window.showErrorMessage(message, ...actions),
  confirm: (question, detail, action) => vscode.window.showWarningMessage(question, { modal: true, detail }, action),
  pick: async (items, placeholder) =>
    (await vscode.window.showQuickPick([...items], { placeHolder: placeholder, matchOnDescription: true, matchOnDetail: true }))?.value,
  input: (prompt, placeholder) => vscode.window.showInputBox({ prompt, placeHolder: placeholder, ignoreFocusOut: true }),
  ask: (options) => askInBox(options),
  openFile: (filePath) => vscode.window.showTextDocument(vscode.Uri.file(filePath), { preview: true }),
  flashStatus: (text) => void vscode.window.setStatusBarMessage(text, 3000),
};

export const vscodeCommands: EditorCommands = {
  execute: (command, ...args) => vscode.commands.executeCommand(command, ...args),
  setContext: (key, value) => void vscode.commands.executeCommand('setContext', key, value),
};

/** `showInputBox` cannot change its prompt once open: an input box that can, shown at once, its prompt line replaced when `promptLater` says. */
function askInBox(options: AskOptions): Promise<string | undefined> {
  return new Promise((resolve) => {
    const box = vscode.window.createInputBox();
    Object.assign(box, { title: options.title, prompt: options.prompt, placeholder: options.placeholder, value: options.value, ignoreFocusOut: true });
    let open = true;
    void options.promptLater?.then((prompt) => {
      if (open && prompt !== undefined) box.prompt = prompt;
    });
    box.onDidChangeValue((value) => (box.validationMessage = options.validate(value)));
    box.onDidAccept(() => {
      box.validationMessage = options.validate(box.value);
      if (box.validationMessage !== undefined) return;
      resolve(box.value);
      box.hide();
    });
    box.onDidHide(() => {
      open = false;
      resolve(undefined);
      box.dispose();
    });
    box.show();
  });
}
