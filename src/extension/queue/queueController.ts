import { changedPaths } from '../../git/treeDiff.js';
import { branchCommit } from '../../git/branches.js';
import { openRepository } from '../../git/repository.js';
import type { QueueTask } from '../../sessionFormat/queueRecords.js';
import type { EditorCommands, EditorWindow, FolderRef, RunLog } from '../editorPorts.js';
import { Emitter } from '../emitter.js';
import type { AnswerSchema } from '../../sessionFormat/cliAnswerReading.js';
import {
  queueAddAnswerSchema,
  queueListAnswerSchema,
  queueMoveAnswerSchema,
  queueRemoveAnswerSchema,
  type QueueListAnswer,
} from '../../sessionFormat/cliAnswers.js';
import { mergeResultSchema } from '../../sessionFormat/queueRecords.js';
import { QUESTION_TIMEOUT_MS, type RunnerAnswer, type RunnerClient, type RunnerJob } from '../runner/runnerClient.js';

/** What `queue list --json` answers; its `file` is watched to show each change as it happens. */
export type QueueListing = QueueListAnswer;

export interface QueueDeps {
  window: EditorWindow;
  commands: EditorCommands;
  log: RunLog;
  /** The runner, which changes and runs the queue. */
  runner: RunnerClient;
  /** A Markdown checklist to add, picked by the user; undefined when they cancel. */
  pickChecklist(): Thenable<string | undefined>;
  /** The addresses the multi-file diff editor takes: a file of the work tree, and a file as a commit has it (null: the side without it). */
  fileUri(filePath: string): unknown;
  blobUri(root: string, commit: string | null, filePath: string): unknown;
}

/** The multi-file diff editor's command. */
export const MULTI_DIFF_COMMAND = 'vscode.changes';

/**
 * The Queue view's actions on a folder's queue: every change goes through the CLI
 * (`codeloops queue … --json`), as a terminal would make it, and `queue run` runs as a
 * child process of the editor, stopped as Ctrl+C stops it. What a task is doing is read
 * from the queue's file, which the view watches (`onDidChange` says when to look again).
 */
export class QueueController<F extends FolderRef> {
  private readonly runs = new Map<string, RunnerJob>();
  private readonly changes = new Emitter<F>();
  readonly onDidChange = this.changes.event;

  constructor(private readonly deps: QueueDeps) {}

  /** A short queue command with `--json` (`queue list`, `queue add`…): the editor changes the queue only through the CLI, as a terminal would. */
  private cli<T>(folder: F, command: string, answer: AnswerSchema<T>, args: readonly string[]): Promise<RunnerAnswer<T>> {
    const workingDir = folder.uri.fsPath;
    // Only reading the queue may be cut short: a change stopped halfway would leave it torn.
    const answerWithinMs = command === 'list' ? QUESTION_TIMEOUT_MS : undefined;
    return this.deps.runner.ask(answer, ['queue', command, '--json', '--working-dir', workingDir, ...args], { workingDir, answerWithinMs });
  }

  /** `queue run` or `queue answer`, which run loops: the project's programs run when the workspace is trusted. */
  private start(folder: F, args: readonly string[]): RunnerJob {
    const workingDir = folder.uri.fsPath;
    return this.deps.runner.start(['queue', ...args], { workingDir, runsProjectPrograms: true });
  }

  /** The folder's queue, or undefined (said in the log) when it cannot be read. */
  async list(folder: F): Promise<QueueListing | undefined> {
    const answer = await this.cli(folder, 'list', queueListAnswerSchema, []);
    if (answer.ok) return answer.answer;
    this.deps.log.warn(`queue list in ${folder.uri.fsPath}: ${answer.failure.message}`);
    return undefined;
  }

  /** Whether this window runs the folder's queue now. */
  isRunning(folder: F): boolean {
    return this.runs.has(folder.uri.fsPath);
  }

  /** Adds a task from a prompt: the one given (the editor's selection), or one typed in a box. */
  async addPrompt(folder: F, given?: string): Promise<QueueTask[]> {
    const prompt = given ?? (await this.deps.window.input('The task to add to the queue', 'Add rate limiting to the API'));
    if (prompt === undefined || prompt.trim() === '') return [];
    return this.add(folder, ['-p', prompt]);
  }

  /** Adds each unchecked item of a Markdown checklist: the file given (the active one), or one picked. */
  async addChecklist(folder: F, given?: string): Promise<QueueTask[]> {
    const file = given ?? (await this.deps.pickChecklist());
    if (file === undefined) return [];
    return this.add(folder, ['--file', file]);
  }

  private async add(folder: F, args: string[]): Promise<QueueTask[]> {
    const answer = await this.cli(folder, 'add', queueAddAnswerSchema, args);
    if (!this.succeeded(folder, answer)) return [];
    const added = answer.answer.added;
    this.deps.window.flashStatus(added.length === 1 ? `Queued task ${added[0]!.id}` : `Queued ${added.length} tasks`);
    return added;
  }

  /** Moves a task up (-1) or down (+1) the queue, or to a position (drag and drop). */
  async move(folder: F, task: QueueTask, to: { by: number } | { position: number }): Promise<void> {
    let position: number;
    if ('position' in to) position = to.position;
    else {
      const listing = await this.list(folder);
      const index = listing?.tasks.findIndex((candidate) => candidate.id === task.id) ?? -1;
      if (index < 0) return;
      position = index + 1 + to.by;
    }
    if (position < 1) return;
    this.succeeded(folder, await this.cli(folder, 'move', queueMoveAnswerSchema, ['--', String(task.id), String(position)]));
  }

  async remove(folder: F, task: QueueTask): Promise<void> {
    const confirmed = await this.deps.window.confirm(`Remove task ${task.id} from the queue?`, `Its branch ${task.branch} and its sessions stay.`, 'Remove');
    if (confirmed !== 'Remove') return;
    this.succeeded(folder, await this.cli(folder, 'remove', queueRemoveAnswerSchema, ['--', String(task.id)]));
  }

  /** Runs the folder's queue until nothing can go on; resolves when the run has ended. */
  run(folder: F): Promise<void> {
    return this.runProcess(folder, ['run', '--working-dir', folder.uri.fsPath], 'The queue');
  }

  interrupt(folder: F): void {
    this.runs.get(folder.uri.fsPath)?.interrupt();
  }

  /** Answers a task's question; the run of this window carries it on, else `queue answer` does until it stops again. */
  async answer(folder: F, task: QueueTask): Promise<void> {
    if (task.state !== 'needs_input') return void this.deps.window.showInfo(`Task ${task.id} is not waiting for an answer.`);
    const answer = await this.deps.window.input(`Task ${task.id} asks: ${task.question ?? ''}`, 'Your answer');
    if (answer === undefined || answer.trim() === '') return;
    // `--` first: an answer that starts with "-" is the answer, never a flag.
    const args = ['answer', '--working-dir', folder.uri.fsPath, '--', String(task.id), answer];
    if (this.isRunning(folder)) {
      // `queue answer` hands the answer to the running queue and returns at once.
      await this.start(folder, args).done;
      return this.changes.fire(folder);
    }
    return this.runProcess(folder, args, `Task ${task.id}`);
  }

  private async runProcess(folder: F, args: string[], what: string): Promise<void> {
    if (this.isRunning(folder)) return void this.deps.window.showInfo(`The queue of ${folder.name} is running already.`);
    const process = this.start(folder, args);
    this.runs.set(folder.uri.fsPath, process);
    this.changes.fire(folder);
    this.deps.log.info(`Running: codeloops queue ${args[0]} in ${folder.uri.fsPath}`);
    const end = await process.done;
    this.runs.delete(folder.uri.fsPath);
    this.changes.fire(folder);
    for (const line of end.stderr.trim().split('\n')) if (line) this.deps.log.info(line);
    if (end.exitCode === 130) void this.deps.window.showInfo(`${what} stopped; a run carries each task on where it stopped.`);
    else if (end.exitCode !== 0) void this.deps.window.showError(`${what} could not run: ${lastLine(end.stderr)}`, 'Show Output').then(this.showOutput);
    else void this.deps.window.showInfo(`${what} of ${folder.name} is done: ${lastLine(end.stderr)}`);
  }

  private readonly showOutput = (action: string | undefined): void => {
    if (action === 'Show Output') this.deps.log.show();
  };

  /** Opens what a task's branch changed, from the commit it started at to its branch's, in the multi-file diff editor. */
  async openDiff(folder: F, task: QueueTask): Promise<void> {
    const repository = await openRepository(folder.uri.fsPath);
    const end = task.commit ?? (await branchCommit(repository, task.branch));
    if (!task.start_commit || !end) return void this.deps.window.showInfo(`Task ${task.id} has not started: its branch has nothing to show yet.`);
    const changes = await changedPaths(repository, task.start_commit, end);
    if (changes.length === 0) return void this.deps.window.showInfo(`Task ${task.id}'s branch ${task.branch} changes no files.`);
    const { fileUri, blobUri } = this.deps;
    const resources = changes.map((change) => [
      fileUri(`${repository.root}/${change.path}`),
      blobUri(repository.root, change.presentInSource ? task.start_commit : null, change.path),
      blobUri(repository.root, change.presentInTarget ? end : null, change.path),
    ]);
    await this.deps.commands.execute(MULTI_DIFF_COMMAND, `Codeloops: task ${task.id}, ${task.branch} (${changes.length} files)`, resources);
  }

  /** Merges a task's branch into the current branch (checked by the engine first); offers to undo it. */
  async merge(folder: F, task: QueueTask): Promise<void> {
    const answer = await this.cli(folder, 'merge', mergeResultSchema, ['--', String(task.id)]);
    if (!answer.ok) {
      const { code, details } = answer.failure;
      const files = (details.files ?? details.changed) as string[] | undefined;
      if (code === 'merge_conflict' || code === 'tree_changed') {
        const why = code === 'merge_conflict' ? 'git cannot merge these files cleanly' : 'you have changes in files the merge would write';
        return void this.deps.window.showWarning(`Task ${task.id} was not merged, nothing changed: ${why}: ${(files ?? []).join(', ')}.`);
      }
      return void this.succeeded(folder, answer);
    }
    const { status, branch, files } = answer.answer;
    this.changes.fire(folder);
    if (status === 'already_merged') return void this.deps.window.showInfo(`${task.branch} is already merged into ${branch}.`);
    const undo = await this.deps.window.showInfo(`Merged ${task.branch} into ${branch} (${files.length} files).`, 'Undo Merge');
    if (undo === 'Undo Merge') await this.undoMerge(folder, task);
  }

  async undoMerge(folder: F, task: QueueTask): Promise<void> {
    const answer = await this.cli(folder, 'merge', mergeResultSchema, ['--undo', '--', String(task.id)]);
    if (this.succeeded(folder, answer)) void this.deps.window.showInfo(`Undid the merge of ${task.branch} on ${answer.answer.branch}.`);
  }

  /** True when the command worked (the view looks again); else the user is told why. */
  private succeeded<T>(folder: F, answer: RunnerAnswer<T>): answer is { ok: true; answer: T } {
    this.changes.fire(folder);
    if (answer.ok) return true;
    void this.deps.window.showError(answer.failure.message);
    return false;
  }

  dispose(): void {
    for (const process of this.runs.values()) process.interrupt();
    this.changes.dispose();
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}
