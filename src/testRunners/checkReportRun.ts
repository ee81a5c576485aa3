import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { TestReport, TestRunner } from '../sessionFormat/testResults.js';
import { LineSplitter } from '../text/lineSplitter.js';
import { recogniseRunner } from './recogniseRunner.js';
import { reportedRun, type ReportedRun } from './reportedRun.js';

/** A report bigger than this is not read (a suite of a million tests): the check counts by its exit code. */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;

/**
 * One run of a check for its runner's report: the command and variables to run it
 * with, its stdout taken as it comes (kept whole in the report file when the report is
 * what it prints, and shown as the runner means it to be read), then the report read
 * and its folder removed.
 */
export interface ReportRun {
  runner: TestRunner;
  command: string;
  variables: Record<string, string>;
  takeStdout(chunk: Buffer, show: (text: string) => void): void;
  endStdout(show: (text: string) => void): void;
  /** The runner's report; null when it wrote none or one that cannot be read. */
  read(): TestReport | null;
  close(): void;
}

/** Null when the check counts by its exit code alone: its runner is unknown, named `none`, or out of reach. */
export function openReportRun(check: { run: string; runner?: TestRunner | 'none' }, cwd: string, environment: NodeJS.ProcessEnv): ReportRun | null {
  if (check.runner === 'none') return null;
  const recognised = recogniseRunner(check.run, cwd, check.runner);
  if (!recognised) return null;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-report-'));
  const file = path.join(folder, 'report');
  const run = reportedRun(check.run, recognised, file, environment);
  if (!run) {
    fs.rmSync(folder, { recursive: true, force: true });
    return null;
  }
  return new StdoutReportRun(run, file, folder, cwd);
}

class StdoutReportRun implements ReportRun {
  readonly runner: TestRunner;
  readonly command: string;
  readonly variables: Record<string, string>;
  private readonly sink: number | null;
  private readonly decoder = new StringDecoder('utf8');
  private show: (text: string) => void = () => {};
  private readonly lines: LineSplitter | null;

  constructor(
    private readonly run: ReportedRun,
    private readonly file: string,
    private readonly folder: string,
    private readonly ranIn: string,
  ) {
    this.runner = run.runner;
    this.command = run.command;
    this.variables = run.variables;
    this.sink = run.fromStdout ? fs.openSync(file, 'w') : null;
    const display = run.display;
    this.lines = display ? new LineSplitter((line) => this.show(display(line))) : null;
  }

  takeStdout(chunk: Buffer, show: (text: string) => void): void {
    if (this.sink !== null) fs.writeSync(this.sink, chunk);
    this.show = show;
    const text = this.decoder.write(chunk);
    if (this.lines) this.lines.push(text);
    else show(text);
  }

  endStdout(show: (text: string) => void): void {
    this.show = show;
    const text = this.decoder.end();
    if (this.lines) {
      this.lines.push(text);
      this.lines.flush();
    } else show(text);
    if (this.sink !== null) fs.closeSync(this.sink);
  }

  read(): TestReport | null {
    try {
      if (fs.statSync(this.file).size > MAX_REPORT_BYTES) return null;
      return this.run.read(fs.readFileSync(this.file, 'utf8'), this.ranIn);
    } catch {
      return null;
    }
  }

  close(): void {
    fs.rmSync(this.folder, { recursive: true, force: true });
  }
}
