import * as vscode from 'vscode';
import { formatDuration } from '../../text/humanize.js';
import { COMMANDS } from '../ids.js';
import type { RunningGroup } from '../runs/loopRegistry.js';

/** The status bar while candidates run: how many are done, elapsed time; a click interrupts them all. */
export class GroupStatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('codeloops.candidates', vscode.StatusBarAlignment.Left, 100);
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly group: RunningGroup<vscode.WorkspaceFolder>) {
    this.item.name = 'Codeloops candidates';
    this.item.command = { command: COMMANDS.interrupt, title: 'Interrupt', arguments: [group.folder, group.kind] };
    this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    this.update();
    this.item.show();
    this.timer = setInterval(() => this.update(), 1000);
  }

  private update(): void {
    const candidates = [...this.group.candidates.values()];
    const done = candidates.filter((candidate) => candidate.progress.stage === 'ended').length;
    const elapsed = formatDuration((Date.now() - this.group.startedAt) / 1000);
    const what = candidates.length > 0 ? `${candidates.length} candidates · ${done} done` : 'starting candidates';
    this.item.text = `$(debug-stop) Codeloops: ${what} · ${elapsed}`;
    this.item.tooltip = `Codeloops candidates are running in ${this.group.folder.name} (${what}, ${elapsed}).\nClick to interrupt them all: each session ends as interrupted.`;
    this.item.accessibilityInformation = { label: `Codeloops candidates in ${this.group.folder.name}, ${what}, ${elapsed}. Interrupt.`, role: 'button' };
  }

  dispose(): void {
    clearInterval(this.timer);
    this.item.dispose();
  }
}
