/**
 * Every identifier the manifest (package.json) and the code share, in one place.
 * A test checks that the manifest and the registered commands agree.
 */

export const COMMANDS = {
  runPrompt: 'codeloops.runPrompt',
  runPromptFile: 'codeloops.runPromptFile',
  interrupt: 'codeloops.interrupt',
  openViewer: 'codeloops.openViewer',
  showIterationChanges: 'codeloops.showIterationChanges',
  showFileDiff: 'codeloops.showFileDiff',
  copyPrompt: 'codeloops.copyPrompt',
  revealSessionFile: 'codeloops.revealSessionFile',
  deleteSession: 'codeloops.deleteSession',
  refreshSessions: 'codeloops.refreshSessions',
  showMoreSessions: 'codeloops.showMoreSessions',
  showOutput: 'codeloops.showOutput',
  rollbackIteration: 'codeloops.rollbackIteration',
  undoRollback: 'codeloops.undoRollback',
  resumeSession: 'codeloops.resumeSession',
  runPromptWithCandidates: 'codeloops.runPromptWithCandidates',
  compareCandidates: 'codeloops.compareCandidates',
  applyCandidate: 'codeloops.applyCandidate',
  undoApply: 'codeloops.undoApply',
  continueLoop: 'codeloops.continueLoop',
  answerQuestion: 'codeloops.answerQuestion',
  toggleReviewPause: 'codeloops.toggleReviewPause',
  rejectHunk: 'codeloops.rejectHunk',
  undoRejection: 'codeloops.undoRejection',
  stageIteration: 'codeloops.stageIteration',
  stageSession: 'codeloops.stageSession',
  addComment: 'codeloops.addComment',
  resolveThread: 'codeloops.resolveThread',
  reopenThread: 'codeloops.reopenThread',
  showStats: 'codeloops.showStats',
  queueAdd: 'codeloops.queueAdd',
  queueAddSelection: 'codeloops.queueAddSelection',
  queueAddChecklist: 'codeloops.queueAddChecklist',
  queueRun: 'codeloops.queueRun',
  queueInterrupt: 'codeloops.queueInterrupt',
  queueRefresh: 'codeloops.queueRefresh',
  queueMoveUp: 'codeloops.queueMoveUp',
  queueMoveDown: 'codeloops.queueMoveDown',
  queueRemove: 'codeloops.queueRemove',
  queueAnswer: 'codeloops.queueAnswer',
  queueOpenDiff: 'codeloops.queueOpenDiff',
  queueMerge: 'codeloops.queueMerge',
} as const;
export type CommandId = (typeof COMMANDS)[keyof typeof COMMANDS];

export const VIEWS = {
  container: 'codeloops',
  sessions: 'codeloops.sessions',
  queue: 'codeloops.queue',
} as const;

export const VIEWER_PANEL_TYPE = 'codeloops.viewer';

/** The comparison page of a candidate group. */
export const COMPARISON_PANEL_TYPE = 'codeloops.comparison';

/** The stats page (Codeloops: Show Statistics). */
export const STATS_PANEL_TYPE = 'codeloops.stats';

/** Set while a loop runs in this window, for `when` clauses. */
export const CONTEXT_RUNNING = 'codeloops.running';

/** Set while this window runs the Queue view's folder's queue. */
export const CONTEXT_QUEUE_RUNNING = 'codeloops.queueRunning';

/** What a task dragged in the Queue view carries (VS Code's tree drag and drop). */
export const QUEUE_DRAG_MIME = 'application/vnd.code.tree.codeloops.queue';

/** Set while a loop of this window waits for the user's review. */
export const CONTEXT_PAUSED = 'codeloops.pausedForReview';

export const URI_SCHEMES = {
  /** A file as it was in one of an iteration's snapshots. */
  snapshot: 'codeloops-snapshot',
  /** An iteration's recorded diff, when its snapshots are gone. */
  recordedDiff: 'codeloops-diff',
  /** A file as a commit has it (a queued task's branch diff). */
  gitBlob: 'codeloops-git',
} as const;

export const SETTINGS_SECTION = 'codeloops';

/** `contextValue`s of tree items, matched by the manifest's menus. */
export const TREE_ITEM_KINDS = {
  session: 'session',
  runningSession: 'session.running',
  /** Ended interrupted, failed or at its limit, or stopped without an end: it can be resumed. */
  resumableSession: 'session.resumable',
  /** A candidate group: its candidates are under it. */
  group: 'group',
  runningGroup: 'group.running',
  /** A candidate's session once it has ended: it can be applied. */
  candidateSession: 'session.candidate',
  iteration: 'iteration',
  file: 'file',
  more: 'more',
} as const;

/** `@codeloops` in the chat, and its slash commands. */
export const CHAT_PARTICIPANT_ID = 'codeloops.loop';
export const CHAT_COMMANDS = { run: 'run', status: 'status', sessions: 'sessions', resume: 'resume' } as const;

/** The language model tools, as the manifest's `languageModelTools` names them. */
export const TOOL_NAMES = { runLoop: 'codeloops_runLoop', getSession: 'codeloops_getSession', listSessions: 'codeloops_listSessions' } as const;

/** The MCP server definition provider (`codeloops mcp`, offered to VS Code's agents). */
export const MCP_PROVIDER_ID = 'codeloops.mcp';
