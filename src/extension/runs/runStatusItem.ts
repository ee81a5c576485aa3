import * as vscode from 'vscode';
import type { RunningLoop } from './loopRegistry.js';
import { runStatusOf } from './runStatus.js';

/** The status bar while a loop runs, as `runStatusOf` says it, brought up to date every second. */
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
    const status = runStatusOf(this.loop);
    this.item.text = status.text;
    this.item.tooltip = status.tooltip;
    this.item.command = status.command;
    this.item.accessibilityInformation = { label: status.label, role: 'button' };
  }

  dispose(): void {
    clearInterval(this.timer);
    this.item.dispose();
  }
}
