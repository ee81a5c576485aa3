import * as vscode from 'vscode';
import { loopProgressText } from '../../sessionFormat/loopProgress.js';
import { formatDuration } from '../../text/humanize.js';
import { COMMANDS } from '../ids.js';
import type { RunningLoop } from './loopRegistry.js';
import { spendText } from './runController.js';

/** The status bar while a loop runs: iteration, phase, elapsed time; a click interrupts, or, while it waits for your review, goes on. */
export class RunStatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('codeloops.run', vscode.StatusBarAlignment.Left, 100);
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly loop: RunningLoop<vscode.WorkspaceFolder>) {
    this.item.name = 'Codeloops loop';
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.update();
    this.item.show();
    this.timer = setInterval(() => this.update(), 1000);
  }

  private update(): void {
    const { loop } = this;
    const { pausedAfter } = loop.progress;
    if (pausedAfter !== null) {
      this.item.text = `$(comment-discussion) Codeloops: waiting for your review of iteration ${pausedAfter}`;
      this.item.tooltip = `The loop in ${loop.folder.name} waits: review iteration ${pausedAfter} (comment, reject hunks), then click to go on.`;
      this.item.command = { command: COMMANDS.continueLoop, title: 'Continue', arguments: [loop.sessionId] };
      this.item.accessibilityInformation = {
        label: `Codeloops loop in ${loop.folder.name} waits for your review of iteration ${pausedAfter}. Continue.`,
        role: 'button',
      };
      return;
    }
    this.item.command = { command: COMMANDS.interrupt, title: 'Interrupt', arguments: [loop.folder, loop.kind] };
    const elapsed = formatDuration((Date.now() - loop.startedAt) / 1000);
    const where = loopProgressText(loop.progress);
    const cost = spendText(loop);
    this.item.text = `$(debug-stop) Codeloops: ${where} · ${elapsed}${cost ? ` · ${cost}` : ''}`;
    this.item.tooltip =
      `A Codeloops loop is running in ${loop.folder.name} (${where}, ${elapsed}${cost ? `, ${cost}` : ''}).\n` +
      `Click to interrupt: the agent is stopped at once and the session ends as interrupted.`;
    this.item.accessibilityInformation = {
      label: `Codeloops loop in ${loop.folder.name}, ${where}, ${elapsed}${cost ? `, ${cost}` : ''}. Interrupt.`,
      role: 'button',
    };
  }

  dispose(): void {
    clearInterval(this.timer);
    this.item.dispose();
  }
}
