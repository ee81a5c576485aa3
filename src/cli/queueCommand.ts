import fs from 'node:fs';
import path from 'node:path';
import { globalConfigPath, globalConfigSchema, readConfigFile } from '../config/configFiles.js';
import type { FlagOverrides } from '../config/runSettings.js';
import type { GitIdentity } from '../git/branches.js';
import { openRepository, type Repository } from '../git/repository.js';
import { removeWorktree } from '../git/worktrees.js';
import { endLoopsInThisProcessNow } from '../loop/loopRunner.js';
import type { PreparedRun } from '../loop/prepareRun.js';
import { RunNotifier } from '../notify/runNotifier.js';
import { readRegularFileSync } from '../files/regularFile.js';
import { tasksOfChecklist } from '../queue/checklist.js';
import { mergeTask, undoTaskMerge } from '../queue/mergeTask.js';
import { QueueStore, TaskNotFoundError } from '../queue/queueStore.js';
import { runQueue, type QueueRunStatus } from '../queue/runQueue.js';
import { addSourceTasks, queueAsSource, readTaskSource, shareOf, ShardOutputs, type TaskSource } from '../queue/queueShards.js';
import { groupsDir, worktreesDir } from '../sessionFormat/candidateGroupFiles.js';
import { shardText } from '../sessionFormat/shards.js';
import { parseShardOption } from './shardOption.js';
import { CodeloopsError } from '../sessionFormat/failures.js';
import { taskStateText, taskTitle, type QueueNotice, type QueueTask, type TaskFlags } from '../sessionFormat/queueRecords.js';
import { QUEUED_RUN_OPTION_KEYS, RUN_OPTIONS } from '../sessionFormat/runOptions.js';
import { sessionsDir, sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { EXIT_CODES } from './exitCodes.js';
import { openStore } from './openStore.js';
import { renderQueueHtml, renderQueueMarkdown } from './queueReport.js';
import { runFromTerminal, writeStderr } from './terminalRun.js';
import { prepareRunAsking } from './trustPrompt.js';
import { notifyFailureText } from './runSetup.js';
import { UsageError } from './usageError.js';
import { printAnswer } from './answers.js';

/**
 * `codeloops queue add|list|remove|move|run|answer|report`: a repository's queue of
 * tasks, each a loop on its own branch in its own worktree (see `queue/runQueue.ts`);
 * the queue itself is `queue/queueStore.ts`, shared with the editor.
 */

interface QueueOptions {
  workingDir?: string;
  json?: boolean;
}

export interface QueueAddOptions extends QueueOptions, FlagOverrides {
  prompt?: string;
  file?: string;
}

async function openQueue(options: QueueOptions): Promise<{ repository: Repository; store: QueueStore }> {
  const repository = await openRepository(path.resolve(options.workingDir ?? process.cwd()));
  return { repository, store: QueueStore.of(repository) };
}

/** A task id as typed: a positive whole number. */
function taskId(typed: string): number {
  if (!/^[1-9]\d*$/.test(typed)) throw new TaskNotFoundError(typed);
  return Number(typed);
}

/** The run flags given, as the task keeps them: those a queued task takes, commander's `true` for a `--no-…` flag not given left out. */
function taskFlagsOf(options: FlagOverrides): TaskFlags {
  const flags: Record<string, unknown> = {};
  for (const key of QUEUED_RUN_OPTION_KEYS) {
    const value = options[key];
    if (value !== undefined && !(RUN_OPTIONS[key].value.kind === 'negation' && value === true)) flags[key] = value;
  }
  return flags as TaskFlags;
}

export async function queueAddCommand(options: QueueAddOptions): Promise<number> {
  if ((options.prompt === undefined) === (options.file === undefined))
    throw new UsageError('Give the task with -p "<task>", or --file <checklist.md>; one of them.');
  let prompts: string[];
  if (options.prompt !== undefined) {
    if (options.prompt.trim() === '') throw new UsageError('The task given with -p is empty.');
    prompts = [options.prompt];
  } else {
    let text: string;
    try {
      text = readRegularFileSync(path.resolve(options.file!));
    } catch (error) {
      throw new UsageError(`Cannot read ${options.file}: ${(error as Error).message}`);
    }
    prompts = tasksOfChecklist(text);
    if (prompts.length === 0) throw new UsageError(`${options.file} has no unchecked item ("- [ ] …"): nothing to add.`);
  }
  const { store } = await openQueue(options);
  const flags = taskFlagsOf(options);
  const added = await store.add(prompts.map((prompt) => ({ prompt, flags })));
  if (options.json) printAnswer('queue add', { added });
  else for (const task of added) process.stdout.write(`Added task ${task.id}: ${sanitizeForTerminal(taskTitle(task))} (branch ${task.branch})\n`);
  return EXIT_CODES.success;
}

export async function queueListCommand(options: QueueOptions): Promise<number> {
  const { store } = await openQueue(options);
  const queue = store.read();
  if (options.json) {
    printAnswer('queue list', {
      repository: queue.repository,
      file: store.file,
      base_commit: queue.base_commit,
      running_pid: store.runnerPid(),
      tasks: queue.tasks,
    });
    return EXIT_CODES.success;
  }
  if (queue.tasks.length === 0) {
    process.stdout.write('The queue is empty. Add a task: codeloops queue add -p "<task>"\n');
    return EXIT_CODES.success;
  }
  const runnerAlive = store.runnerPid() !== null;
  const rows = queue.tasks.map((task, index) => [String(index + 1), String(task.id), taskStateText(task, runnerAlive), task.branch, taskTitle(task)]);
  const headers = ['#', 'ID', 'STATE', 'BRANCH', 'TASK'];
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)));
  for (const row of [headers, ...rows])
    process.stdout.write(
      sanitizeForTerminal(
        row
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join('  ')
          .trimEnd(),
      ) + '\n',
    );
  return EXIT_CODES.success;
}

export async function queueRemoveCommand(typedId: string, options: QueueOptions): Promise<number> {
  const id = taskId(typedId);
  const { repository, store } = await openQueue(options);
  const removed = await store.change((queue) => {
    const index = queue.tasks.findIndex((task) => task.id === id);
    if (index < 0) throw new TaskNotFoundError(id);
    const task = queue.tasks[index]!;
    if (task.state === 'running' && store.runnerPid() !== null)
      throw new CodeloopsError('queue_running', `Task ${id} is running; it can be removed once it has ended.`, { id, pid: store.runnerPid() });
    queue.tasks.splice(index, 1);
    return task;
  });
  // Its worktree goes with it; its branch and sessions stay.
  if (removed.worktree) await removeWorktree(repository, removed.worktree).catch(() => undefined);
  if (options.json) printAnswer('queue remove', { removed });
  else process.stdout.write(`Removed task ${id}: ${sanitizeForTerminal(taskTitle(removed))}\n`);
  return EXIT_CODES.success;
}

export async function queueMoveCommand(typedId: string, typedPosition: string, options: QueueOptions): Promise<number> {
  const id = taskId(typedId);
  if (!/^[1-9]\d*$/.test(typedPosition)) throw new UsageError(`The position "${typedPosition}" is not a position in the queue (1 is the first).`);
  const { store } = await openQueue(options);
  const position = await store.change((queue) => {
    const index = queue.tasks.findIndex((task) => task.id === id);
    if (index < 0) throw new TaskNotFoundError(id);
    const to = Math.min(Number(typedPosition), queue.tasks.length);
    const [task] = queue.tasks.splice(index, 1);
    queue.tasks.splice(to - 1, 0, task!);
    return to;
  });
  if (options.json) printAnswer('queue move', { id, position });
  else process.stdout.write(`Moved task ${id} to position ${position}.\n`);
  return EXIT_CODES.success;
}

export interface QueueRunOptions extends QueueOptions {
  jobs?: number;
  stack?: boolean;
  trust?: boolean;
  /** Across machines (`queueShards.ts`): this machine's share, the tasks file, where success branches are pushed, the bundle written. */
  shard?: string;
  tasks?: string;
  push?: string;
  export?: string;
}

export async function queueRunCommand(options: QueueRunOptions): Promise<number> {
  if (options.stack && options.jobs !== undefined && options.jobs > 1)
    throw new UsageError('--stack runs each task from the one before it: one at a time, so not with --jobs above 1.');
  if (options.push !== undefined && (options.push === '' || options.push.startsWith('-')))
    throw new UsageError(`--push "${options.push}" is not a remote: give a remote's name or URL (such as origin).`);
  const { repository, store } = await openQueue(options);
  const sharded = await shardedRun(repository, store, options);
  if (!sharded) return runTheQueue(repository, store, options);
  const { share, outputs, label } = sharded;
  if (!store.read().tasks.some((task) => share.includes(task.id) && (task.state === 'queued' || task.state === 'answered'))) {
    writeStderr(`${label}: no task of its share is left to run (${share.length === 0 ? 'its share is empty' : `tasks ${share.join(', ')}`}).\n`);
    await settleOutputs(outputs);
    return EXIT_CODES.success;
  }
  let code: number;
  try {
    code = await runTheQueue(repository, store, options, share, outputs);
  } finally {
    await settleOutputs(outputs);
  }
  return code;
}

/**
 * With `--shard`, `--tasks`, `--push` or `--export`: the tasks file's tasks added to this
 * queue (once), this machine's share of them, and what is done as each ends.
 */
async function shardedRun(repository: Repository, store: QueueStore, options: QueueRunOptions) {
  const choice = parseShardOption(options.shard);
  if (!choice && options.tasks === undefined && options.push === undefined && options.export === undefined) return null;
  let source: TaskSource;
  if (options.tasks !== undefined) {
    source = await readTaskSource(path.resolve(repository.root, options.tasks), repository, {});
    const added = await addSourceTasks(store, source);
    if (added.length > 0)
      writeStderr(`Added ${added.length} task(s) of ${sanitizeForTerminal(options.tasks)} to the queue: ${added.map((task) => task.id).join(', ')}\n`);
  } else source = await queueAsSource(store, repository);
  const shard = choice?.shard ?? null;
  const share = shareOf(source, shard);
  const label = shard ? `Shard ${shardText(shard)}` : 'The queue';
  if (shard) writeStderr(`${label} (${choice!.source}): tasks ${share.join(', ') || 'none'} of ${source.file.tasks.length}.\n`);
  const paths = { store: openStore(), sidecarDirOf: (id: string) => sidecarDirOf(id), groupsDirectory: groupsDir() };
  const output = options.export === undefined ? null : path.resolve(options.export);
  const outputs = new ShardOutputs({
    store,
    repository,
    remote: options.push ?? null,
    bundle: output ? { store, repository, source, shard, share, output, paths } : null,
    onPushed: (task, branch, push) =>
      writeStderr(
        push.pushed
          ? `Task ${task}: pushed ${branch} to ${sanitizeForTerminal(push.remote)}\n`
          : `Task ${task}: pushing ${branch} to ${sanitizeForTerminal(push.remote)} failed: ${sanitizeForTerminal(push.error ?? '')}\n`,
      ),
    onBundleFailed: (error) => writeStderr(`warning: the bundle ${sanitizeForTerminal(output!)} could not be written: ${sanitizeForTerminal(error.message)}\n`),
  });
  return { share, outputs, label };
}

async function settleOutputs(outputs: ShardOutputs): Promise<void> {
  const written = await outputs.settle();
  if (written) {
    const finished = written.sessions.length;
    writeStderr(
      `Wrote ${sanitizeForTerminal(written.file)}: ${finished} session(s). Bring it home with: codeloops queue import ${path.basename(written.file)}\n`,
    );
  }
}

/**
 * Runs the queue (all of it, or `only` some tasks), telling what happens on stderr.
 * Every task's agents and config are checked before the first starts (asking to trust
 * the project file at a terminal); a task added meanwhile is checked when it starts.
 */
async function runTheQueue(repository: Repository, store: QueueStore, options: QueueRunOptions, only?: number[], outputs?: ShardOutputs): Promise<number> {
  const prepared = new Map<number, Promise<PreparedRun>>();
  const prepare = (task: QueueTask, interactive: boolean): Promise<PreparedRun> => {
    const known = prepared.get(task.id);
    if (known) return known;
    const run = prepareRunAsking({ workingDir: repository.root, flags: task.flags, userLayers: [], trust: options.trust }, interactive);
    prepared.set(task.id, run);
    return run;
  };
  for (const task of store.read().tasks) if (task.state !== 'finished' && (!only || only.includes(task.id))) await prepare(task, true);
  // `[notify]` is the global config's alone, so any task's settings carry it.
  const [anyTask] = prepared.values();
  const notifier = new RunNotifier(anyTask ? (await anyTask).settings.notify : null, repository.root, (failure) => writeStderr(notifyFailureText(failure)));
  const sessionOfTask = new Map<number, string>();
  const status: QueueRunStatus = await runFromTerminal(
    { stopping: 'stopping every task of the queue (each carries on from its session at the next "codeloops queue run")', endNow: endLoopsInThisProcessNow },
    ({ signal }) =>
      runQueue({
        store,
        repository,
        prepared: (task) => prepare(task, false),
        jobs: options.jobs ?? 1,
        stack: Boolean(options.stack),
        only,
        author: configuredAuthor(),
        sessionStore: openStore(),
        sessionsDirectory: sessionsDir(),
        sidecarDirOf: (sessionId) => sidecarDirOf(sessionId),
        worktreesDirectory: worktreesDir(),
        signal,
        onNotice: (notice) => {
          announce(notice);
          if (notice.type === 'task_finished') outputs?.taskFinished(notice.task, notice.outcome, notice.branch);
          if (notice.type === 'queue_finished')
            notifier.send({
              event: 'queue_finished',
              session_id: null,
              project: path.basename(repository.root),
              outcome: null,
              summary: queueCountsText(notice),
            });
        },
        // Each task's loop says when it needs an answer and when it ends, as a loop of `codeloops run` does.
        onEvent: (task, event) => {
          if (event.type === 'run_started') sessionOfTask.set(task, event.session_id);
          notifier.observe(event, sessionOfTask.get(task));
        },
      }),
  );
  // Bounded by the notify timeout: word of the queue's end goes out before the process does.
  await notifier.settled();
  return status === 'interrupted' ? EXIT_CODES.interrupted : EXIT_CODES.success;
}

/** `[queue] author` in the global config, `"Name <email>"`. */
function configuredAuthor(): GitIdentity | null {
  const author = readConfigFile(globalConfigPath(), globalConfigSchema)?.queue?.author;
  const match = author ? /^(.+) <(.+)>$/.exec(author) : null;
  return match ? { name: match[1]!, email: match[2]! } : null;
}

/** What the queue tells as it runs, said on stderr (`[notify]` hears its loops' own events and the queue's end). */
function announce(notice: QueueNotice): void {
  switch (notice.type) {
    case 'task_started':
      return writeStderr(`Task ${notice.task}: ${notice.resumed ? 'carrying on' : 'started'} on ${notice.branch}\n`);
    case 'task_finished': {
      const error = notice.error && notice.outcome !== 'success' ? `: ${sanitizeForTerminal(notice.error)}` : '';
      const branch = notice.branch_changed ? `\n  ${sanitizeForTerminal(notice.branch_changed)}` : '';
      return writeStderr(`Task ${notice.task}: ${notice.outcome}${error}${branch}\n`);
    }
    case 'task_end_failed':
      return writeStderr(
        `Task ${notice.task}: its loop ended, but recording its end failed: ${sanitizeForTerminal(notice.error)}\n` +
          `  It stays queued with its worktree; the next "codeloops queue run" finishes it from its session ${notice.session_id}.\n`,
      );
    case 'needs_input':
      return writeStderr(
        `Task ${notice.task} needs your answer: ${sanitizeForTerminal(notice.question)}\n  Answer it: codeloops queue answer ${notice.task} "<your answer>"\n`,
      );
    case 'queue_finished':
      return writeStderr(`Queue ${notice.interrupted ? 'stopped' : 'done'}: ${queueCountsText(notice)}. See: codeloops queue report\n`);
  }
}

function queueCountsText(notice: Extract<QueueNotice, { type: 'queue_finished' }>): string {
  return `${notice.finished} finished, ${notice.waiting} waiting for an answer, ${notice.left} left`;
}

/**
 * `queue answer <id> "…"`: the answer is recorded with the task. A `queue run` running
 * now carries the task on as soon as it has a free slot; when none runs, this command
 * carries it on itself (that task only), as `queue run` would.
 */
export async function queueAnswerCommand(typedId: string, answer: string, options: QueueRunOptions): Promise<number> {
  const id = taskId(typedId);
  if (answer.trim() === '') throw new UsageError('The answer is empty.');
  const { repository, store } = await openQueue(options);
  const runner = await store
    .changeTask(id, (task) => {
      if (task.state !== 'needs_input' && task.state !== 'answered')
        throw new CodeloopsError('usage', `Task ${id} is not waiting for an answer (it is ${taskStateText(task)}).`, { id, state: task.state });
      task.state = 'answered';
      task.answer = answer.trim();
    })
    .then(() => store.runnerPid());
  if (runner !== null) {
    writeStderr(`Answered task ${id}; the queue running in process ${runner} carries it on.\n`);
    return EXIT_CODES.success;
  }
  writeStderr(`Answered task ${id}; carrying it on.\n`);
  try {
    return await runTheQueue(repository, store, options, [id]);
  } catch (error) {
    // A `queue run` started meanwhile: it carries the task on.
    if (error instanceof CodeloopsError && error.code === 'queue_running') return EXIT_CODES.success;
    throw error;
  }
}

export interface QueueReportOptions extends QueueOptions {
  html?: string;
}

export async function queueReportCommand(options: QueueReportOptions): Promise<number> {
  const { store } = await openQueue(options);
  const queue = store.read();
  if (queue.tasks.length === 0) throw new CodeloopsError('queue_empty', `The queue of ${queue.repository} has no task.`, {});
  const runnerAlive = store.runnerPid() !== null;
  // A task's prompt is anyone's (a tasks file, a shard's bundle): no escape sequence of it reaches the terminal.
  if (options.json) printAnswer('queue report', { repository: queue.repository, base_commit: queue.base_commit, tasks: queue.tasks });
  else process.stdout.write(sanitizeForTerminal(renderQueueMarkdown(queue, runnerAlive)));
  if (options.html !== undefined) {
    fs.writeFileSync(options.html, renderQueueHtml(queue, runnerAlive));
    writeStderr(`Wrote the report to ${sanitizeForTerminal(options.html)}.\n`);
  }
  return EXIT_CODES.success;
}

export interface QueueMergeOptions extends QueueOptions {
  undo?: boolean;
}

/**
 * `queue merge <id>`: a task that succeeded, merged into the current branch (a merge
 * commit; nothing changed when git cannot merge cleanly or your changes are in the way);
 * `--undo` moves the branch back from that merge.
 */
export async function queueMergeCommand(typedId: string, options: QueueMergeOptions): Promise<number> {
  const id = taskId(typedId);
  const { repository, store } = await openQueue(options);
  const task = store.task(id);
  const result = options.undo ? await undoTaskMerge(repository, task) : await mergeTask(repository, task, configuredAuthor());
  if (options.json) printAnswer('queue merge', result);
  else if (result.status === 'already_merged') process.stdout.write(`${task.branch} is already merged into ${sanitizeForTerminal(result.branch)}.\n`);
  else {
    const what = result.status === 'merged' ? `Merged ${task.branch} into` : `Undid the merge of ${task.branch} on`;
    process.stdout.write(`${what} ${sanitizeForTerminal(result.branch)} (${result.to.slice(0, 12)}): ${result.files.length} file(s) written.\n`);
    if (result.status === 'merged') process.stdout.write(`Undo it: codeloops queue merge ${id} --undo\n`);
  }
  return EXIT_CODES.success;
}
