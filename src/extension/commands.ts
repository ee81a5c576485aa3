import * as vscode from 'vscode';
import { unsupportedPlatformMessage } from '../process/platformSupport.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { applyCandidateSession, undoApplySession, type ApplyDeps } from './candidates/applyCommands.js';
import type { CandidateRuns } from './candidates/candidateRuns.js';
import { groupToCompare, runWithCandidates } from './candidates/candidatesInput.js';
import type { DiffOpener } from './diffs/diffOpener.js';
import { COMMANDS, type CommandId } from './ids.js';
import type { LazyQueueView } from './queue/queueViewLoader.js';
import type { HunkLenses, HunkRef } from './review/hunkLenses.js';
import { rejectHunkCommand, stageCommand, undoRejectionCommand, type ReviewCommandsDeps } from './review/reviewCommands.js';
import type { ReviewThreads } from './review/reviewThreads.js';
import { isRunKind, type LoopRegistry } from './runs/loopRegistry.js';
import type { LoopStarter } from './runs/loopStarter.js';
import { promptFileToRun } from './runs/promptInput.js';
import { askForTask } from './runs/taskInput.js';
import { vscodeWindow } from './vscodeWindow.js';
import type { RunController } from './runs/runController.js';
import type { SessionCommands } from './sessionCommands.js';
import type { FileNode, GroupNode, IterationNode, SessionNode, TreeNode } from './sessionsTree/sessionsTreeModel.js';
import type { CandidateGroupEntry, SessionsTreeProvider } from './sessionsTree/sessionsTreeProvider.js';
import { toggleReviewPause } from './settings.js';
import { resumeSession, rollBackIteration, undoLastRollback, type TimeTravelDeps } from './timeTravel/timeTravelCommands.js';
import type { ComparisonPanels } from './viewer/comparisonPanels.js';
import type { StatsPanels } from './viewer/statsPanels.js';
import type { ViewerPanels } from './viewer/viewerPanels.js';

type Folder = vscode.WorkspaceFolder;

/** The parts of the extension the commands hand their work to. */
export interface CommandParts {
  log: vscode.LogOutputChannel;
  store: SessionStore;
  registry: LoopRegistry<Folder>;
  runs: RunController<Folder>;
  candidateRuns: CandidateRuns<Folder>;
  starter: LoopStarter<Folder>;
  tree: SessionsTreeProvider;
  /** Every candidate group, for the comparison's picker. */
  groups: () => Promise<CandidateGroupEntry[]>;
  diffs: DiffOpener;
  viewers: ViewerPanels;
  comparisons: ComparisonPanels;
  stats: StatsPanels;
  sessionCommands: SessionCommands<Folder>;
  reviewThreads: ReviewThreads;
  hunkLenses: HunkLenses;
  review: ReviewCommandsDeps;
  timeTravel: TimeTravelDeps<Folder>;
  apply: ApplyDeps;
  queue: LazyQueueView;
}

type Handler = (...args: never[]) => unknown;

/** Registers every command of the manifest; a failure is logged and said, never silent. */
export function registerCommands(parts: CommandParts): vscode.Disposable[] {
  return Object.entries(commandTable(parts)).map(([id, handler]) => vscode.commands.registerCommand(id, reportingFailures(parts.log, id, handler)));
}

/**
 * What each command does, a line each that delegates (the type asks for every
 * command of ids.ts). What a command acts on comes from `on`: the session a tree node
 * or a caller names, or else the user's pick (a group, a hunk likewise); and a
 * command that changes files or runs agents asks for a trusted workspace first,
 * through `trusted(…)` (or `loops`, which also refuses a platform loops cannot run
 * on), in one place.
 */
function commandTable(parts: CommandParts): Record<CommandId, Handler> {
  const { log, store, registry, runs, candidateRuns, starter, tree, diffs, viewers, comparisons, stats, sessionCommands, reviewThreads } = parts;
  const { review, timeTravel, apply, queue } = parts;
  const { on, trusted, loops } = commandTargets(parts);
  return {
    [COMMANDS.runPrompt]: loops.run(() => starter.start(askForTask(vscodeWindow))),
    [COMMANDS.runPromptFile]: loops.run(() => starter.start(promptFileToRun)),
    [COMMANDS.runPromptWithCandidates]: loops.run(() => runWithCandidates(starter, candidateRuns, log)),
    // The status bar items say which run of their folder they stop; a tree's context menu passes the selection second.
    [COMMANDS.interrupt]: (target?: Folder | SessionNode | GroupNode, kind?: unknown) => registry.interrupt(target, isRunKind(kind) ? kind : undefined),
    [COMMANDS.continueLoop]: (sessionId?: unknown) => runs.resumeAfterReview('continue', typeof sessionId === 'string' ? sessionId : undefined),
    [COMMANDS.answerQuestion]: (sessionId?: unknown) => runs.answerQuestion(typeof sessionId === 'string' ? sessionId : undefined),
    [COMMANDS.toggleReviewPause]: () => toggleReviewPause(),
    [COMMANDS.showOutput]: () => log.show(),
    [COMMANDS.refreshSessions]: () => tree.refresh(),
    [COMMANDS.showMoreSessions]: () => tree.showMore(),
    [COMMANDS.showStats]: () => stats.show(),
    [COMMANDS.openViewer]: on.session((sessionId) => viewers.open(sessionId)),
    [COMMANDS.showFileDiff]: (node: FileNode) => diffs.openFile(node.sessionId, node.iteration, node.file),
    [COMMANDS.showIterationChanges]: (node: IterationNode) => diffs.openIteration(node.sessionId, node.number),
    [COMMANDS.copyPrompt]: (node?: SessionNode) => sessionCommands.copyPrompt(node?.id),
    [COMMANDS.revealSessionFile]: on.session((sessionId) => revealSessionFile(store, sessionId)),
    [COMMANDS.deleteSession]: (node?: TreeNode) => sessionCommands.delete(node?.kind === 'session' ? node.id : undefined),
    [COMMANDS.resumeSession]: loops.session((sessionId) => resumeSession(timeTravel, sessionId)),
    [COMMANDS.rollbackIteration]: trusted('roll back files').iteration((node) => rollBackIteration(timeTravel, node.sessionId, node.number)),
    [COMMANDS.undoRollback]: trusted('undo a rollback').session((sessionId) => undoLastRollback(timeTravel, sessionId)),
    [COMMANDS.compareCandidates]: on.group((groupId) => comparisons.open(groupId)),
    [COMMANDS.applyCandidate]: trusted('apply a candidate').session((sessionId) => applyCandidateSession(apply, sessionId)),
    [COMMANDS.undoApply]: trusted('undo an apply').session((sessionId) => undoApplySession(apply, sessionId)),
    [COMMANDS.rejectHunk]: trusted('change files').hunk(({ sessionId, iteration, hunk }) => rejectHunkCommand(review, sessionId, iteration, hunk)),
    [COMMANDS.undoRejection]: trusted('change files').session((sessionId) => undoRejectionCommand(review, sessionId)),
    [COMMANDS.stageIteration]: trusted('stage changes').iteration((node) => stageCommand(review, node.sessionId, node.number)),
    [COMMANDS.stageSession]: trusted('stage changes').session((sessionId) => stageCommand(review, sessionId, null)),
    [COMMANDS.addComment]: (reply: vscode.CommentReply) => reviewThreads.addComment(review, reply),
    [COMMANDS.resolveThread]: (thread: vscode.CommentThread) => reviewThreads.setResolved(review, thread, true),
    [COMMANDS.reopenThread]: (thread: vscode.CommentThread) => reviewThreads.setResolved(review, thread, false),
    [COMMANDS.queueAdd]: queue.command('add'),
    [COMMANDS.queueAddSelection]: queue.command('addSelection'),
    [COMMANDS.queueAddChecklist]: queue.command('addChecklist'),
    [COMMANDS.queueRun]: loops.queue(queue.command('run')),
    [COMMANDS.queueInterrupt]: queue.command('interrupt'),
    [COMMANDS.queueRefresh]: queue.command('refresh'),
    [COMMANDS.queueMoveUp]: queue.command('moveUp'),
    [COMMANDS.queueMoveDown]: queue.command('moveDown'),
    [COMMANDS.queueRemove]: queue.command('remove'),
    [COMMANDS.queueAnswer]: loops.queue(queue.command('answer')),
    [COMMANDS.queueOpenDiff]: queue.command('openDiff'),
    [COMMANDS.queueMerge]: trusted('merge a branch').task(queue.command('merge')),
  };
}

/**
 * What a command acts on: `on.session(…)` and the like; `trusted(action)` the same,
 * in a trusted workspace only; `loops` for what runs a loop, on a platform that can.
 */
function commandTargets({ store, starter, sessionCommands, hunkLenses, groups }: CommandParts) {
  const on = {
    session: (handler: (sessionId: string) => unknown) => async (target?: TreeNode | string) => {
      const sessionId = typeof target === 'string' ? target : target?.kind === 'session' ? target.id : await sessionCommands.pickSession();
      if (sessionId) await handler(sessionId);
    },
    group: (handler: (groupId: string) => unknown) => async (target?: GroupNode | SessionNode | string) => {
      const groupId = await groupToCompare(target, store, groups);
      if (groupId) await handler(groupId);
    },
    hunk: (handler: (hunk: HunkRef) => unknown) => async (ref?: unknown) => {
      const hunk = await hunkLenses.hunkOf(ref);
      if (hunk) await handler(hunk);
    },
    iteration: (handler: (node: IterationNode) => unknown) => async (node?: IterationNode) => {
      if (node) await handler(node);
    },
  };
  /** The workspace must be trusted first; the action names what is refused (none: running loops). */
  const whenTrusted =
    <T>(action: string | undefined, handler: (target?: T) => Promise<void>) =>
    async (target?: T): Promise<void> => {
      if (await starter.ensureTrusted(action)) await handler(target);
    };
  const trusted = (action: string) => ({
    session: (handler: (sessionId: string) => unknown) => whenTrusted(action, on.session(handler)),
    hunk: (handler: (hunk: HunkRef) => unknown) => whenTrusted(action, on.hunk(handler)),
    iteration: (handler: (node: IterationNode) => unknown) => whenTrusted(action, on.iteration(handler)),
    /** A queued task, as its item passes it (the handler says when there is none). */
    task: <T>(handler: (task?: T) => unknown) => whenTrusted<T>(action, async (task) => void (await handler(task))),
  });
  // Loops need POSIX process groups and sh: on a native Windows host they are refused, saying where to run them; sessions stay browsable.
  const platformRefusal = unsupportedPlatformMessage(process.platform, 'editor');
  const onThisPlatform =
    <T>(handler: (target?: T) => unknown) =>
    async (target?: T): Promise<void> => {
      if (platformRefusal) void vscode.window.showErrorMessage(platformRefusal);
      else await handler(target);
    };
  /** Running a loop: where loops can run (the folder's trust is asked as the folder is chosen). */
  const loops = {
    run: (handler: () => unknown) => onThisPlatform(handler),
    session: (handler: (sessionId: string) => unknown) => onThisPlatform(whenTrusted(undefined, on.session(handler))),
    /** The queue's runs: `queue run`, and `queue answer`, which carries the task on. */
    queue: <T>(handler: (task?: T) => unknown) => onThisPlatform(whenTrusted<T>(undefined, async (task) => void (await handler(task)))),
  };
  return { on, trusted, loops };
}

/** A command's failure, written to the log with its stack and said in a notification: a command never fails silently. */
function reportingFailures(log: vscode.LogOutputChannel, id: string, handler: (...args: never[]) => unknown) {
  return async (...args: never[]): Promise<void> => {
    try {
      await handler(...args);
    } catch (error) {
      log.error(`${id}: ${(error as Error).stack ?? String(error)}`);
      void vscode.window.showErrorMessage(`Codeloops: ${(error as Error).message}`);
    }
  };
}

/** Shows a session's file: in the OS file manager, or (on a remote such as code-server or SSH, whose file manager is not the user's) in an editor. */
async function revealSessionFile(store: SessionStore, sessionId: string): Promise<void> {
  const uri = vscode.Uri.file(store.filePathOf(sessionId));
  if (vscode.env.remoteName) await vscode.window.showTextDocument(uri, { preview: true });
  else await vscode.commands.executeCommand('revealFileInOS', uri);
}
