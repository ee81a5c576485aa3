import type { Forecast } from '../../sessionFormat/forecast.js';
import type { SessionSummary } from '../../sessionFormat/sessionSummaries.js';
import type { SessionStore } from '../../sessions/sessionStore.js';
import { listedSession, readModelSession, type ModelSession } from '../../sessionView/modelSession.js';
import { previewLine } from '../../text/truncate.js';
import { relativeTime } from '../../text/humanize.js';
import type { FolderRef } from '../editorPorts.js';
import { CHAT_COMMANDS, COMMANDS } from '../ids.js';
import type { LoopProcessEnd, RunOverrides } from '../runner/loopProcess.js';
import { UNTRUSTED_LOOPS_TEXT, type LoopStarter } from '../runs/loopStarter.js';
import { loopProgressText } from '../../sessionFormat/loopProgress.js';
import { spendText, type RunController } from '../runs/runController.js';
import { commandLink, markdownText } from './chatMarkdown.js';
import type { CancelToken, ChatAsk, ChatFollowupSuggestion, ChatOutcomeMetadata, ChatStream } from './chatPorts.js';
import { LoopResponse } from './loopResponse.js';

export interface LoopChatDeps<F extends FolderRef> {
  runs: RunController<F>;
  /** The folder to run in, as Run Prompt asks for it (the only one, or the user's pick). */
  starter: Pick<LoopStarter<F>, 'folderToRunIn'>;
  isTrusted: () => boolean;
  store: SessionStore;
  /** The workspace folder that holds a path, if any. */
  folderOf: (filePath: string) => F | undefined;
  /** Resume, as the Sessions view's Resume Session does it (`resumeSession`). */
  resume: (sessionId: string, overrides?: RunOverrides) => Promise<LoopProcessEnd | undefined>;
  forecast: (folder: F) => Promise<Forecast | undefined>;
  /** Why loops cannot run on this platform, or null. */
  platformRefusal: string | null;
}

/** How many sessions `/sessions` lists. */
const LISTED_SESSIONS = 10;
/** How many more iterations "Resume with more iterations" gives. */
export const MORE_ITERATIONS = 5;

/**
 * `@codeloops` in VS Code's chat: `/run <task>` runs a loop as Run Prompt does and
 * tells it in the response as it happens; `/status`, `/sessions [session]` and
 * `/resume <session> [+N]`; follow-ups once a loop has ended.
 */
export class LoopChat<F extends FolderRef> {
  constructor(private readonly deps: LoopChatDeps<F>) {}

  async handle(ask: ChatAsk, stream: ChatStream, token: CancelToken): Promise<ChatOutcomeMetadata> {
    const text = ask.prompt.trim();
    try {
      switch (ask.command) {
        case CHAT_COMMANDS.run:
          return await this.run(text, stream, token);
        case CHAT_COMMANDS.status:
          return await this.status(stream);
        case CHAT_COMMANDS.sessions:
          return text ? await this.showSession(text, stream) : await this.listSessions(stream);
        case CHAT_COMMANDS.resume:
          return await this.resume(text, stream, token);
        default:
          return this.help(text, stream);
      }
    } catch (error) {
      // A session that is not there, an ambiguous prefix…: said in the response, in the engine's words.
      stream.markdown(`**${markdownText((error as Error).message)}**\n`);
      return { command: ask.command ?? 'help' };
    }
  }

  /** What to do next once a response has ended: review a loop's changes, carry it on, run what was asked. */
  followups(metadata: ChatOutcomeMetadata): ChatFollowupSuggestion[] {
    const { sessionId, status } = metadata;
    if (metadata.command === 'help' && metadata.task) return [{ label: 'Run this as a loop', command: CHAT_COMMANDS.run, prompt: metadata.task }];
    if (!sessionId || status === undefined) return [];
    const review = { label: 'Review the changes', command: CHAT_COMMANDS.sessions, prompt: sessionId };
    if (status === 'success') return [review];
    return [review, { label: 'Resume with more iterations', command: CHAT_COMMANDS.resume, prompt: `${sessionId} +${MORE_ITERATIONS}` }];
  }

  private async run(task: string, stream: ChatStream, token: CancelToken): Promise<ChatOutcomeMetadata> {
    const command = CHAT_COMMANDS.run;
    if (!task) {
      stream.markdown('Say what the agents should do: `@codeloops /run Add input validation to the signup form, with tests`.\n');
      return { command };
    }
    const folder = await this.folderForLoop(stream, () => this.deps.starter.folderToRunIn());
    if (!folder) return { command };
    // Asked at once, as Run Prompt does: the cost line shows the spend against its p90 once it is known.
    const forecast = this.deps.forecast(folder);
    return this.follow(command, folder, stream, token, () => this.deps.runs.start(folder, { text: task }, { forecast }), forecast);
  }

  private async resume(text: string, stream: ChatStream, token: CancelToken): Promise<ChatOutcomeMetadata> {
    const command = CHAT_COMMANDS.resume;
    const [idText, moreText, ...rest] = text.split(/\s+/).filter(Boolean);
    const more = moreText === undefined ? undefined : /^\+?(\d+)$/.exec(moreText)?.[1];
    if (!idText || rest.length > 0 || (moreText !== undefined && more === undefined)) {
      stream.markdown('Name the session to carry on, and optionally how many more iterations it may take: `@codeloops /resume latest +5`.\n');
      return { command };
    }
    const sessionId = await this.deps.store.resolveId(idText);
    const outline = await this.deps.store.outline(sessionId);
    const folder = await this.folderForLoop(stream, async () => {
      const found = this.deps.folderOf(outline.start.working_dir);
      if (!found) stream.markdown(`This session ran in ${markdownText(outline.start.working_dir)}: open that folder to resume it.\n`);
      return found;
    });
    if (!folder) return { command, sessionId };
    const lastIteration = Math.max(0, ...outline.iterations);
    const overrides: RunOverrides | undefined = more === undefined ? undefined : { maxIterations: lastIteration + Number(more) };
    return this.follow(command, folder, stream, token, () => this.deps.resume(sessionId, overrides));
  }

  /** Where a loop may run now, or undefined once the response has said why not: the platform, trust, the folder, a loop already there. */
  private async folderForLoop(stream: ChatStream, chooseFolder: () => Promise<F | undefined>): Promise<F | undefined> {
    const { deps } = this;
    if (deps.platformRefusal) {
      stream.markdown(`${markdownText(deps.platformRefusal)}\n`);
      return undefined;
    }
    if (!deps.isTrusted()) {
      stream.markdown(`${markdownText(UNTRUSTED_LOOPS_TEXT)}\n`);
      stream.button({ command: 'workbench.trust.manage', title: 'Manage Workspace Trust' });
      return undefined;
    }
    const folder = await chooseFolder();
    if (!folder) return undefined;
    if (deps.runs.canStartIn(folder)) return folder;
    stream.markdown(`A loop already runs in ${markdownText(folder.name)}: \`/status\` shows where it is.\n`);
    return undefined;
  }

  /** Streams the folder's loop into the response until it ends; the chat's stop button interrupts it (the session ends `interrupted`, and can be resumed). */
  private async follow(
    command: string,
    folder: F,
    stream: ChatStream,
    token: CancelToken,
    start: () => Promise<LoopProcessEnd | undefined>,
    forecast?: Promise<Forecast | undefined>,
  ): Promise<ChatOutcomeMetadata> {
    const response = new LoopResponse(stream, forecast);
    const here = folder.uri.toString();
    const events = this.deps.runs.onEvent(({ folder: of, event }) => {
      if (of.uri.toString() === here) response.event(event);
    });
    const cancel = token.onCancellationRequested(() => void this.deps.runs.interrupt(folder));
    try {
      return response.end(command, await start());
    } finally {
      events.dispose();
      cancel.dispose();
    }
  }

  private async status(stream: ChatStream): Promise<ChatOutcomeMetadata> {
    const loops = this.deps.runs.runningLoops();
    for (const loop of loops) {
      const spend = spendText(loop);
      stream.markdown(`**${markdownText(loop.folder.name)}**: ${markdownText(loopProgressText(loop.progress))}${spend ? `, ${markdownText(spend)}` : ''}\n`);
      if (!loop.sessionId) continue;
      stream.button({ command: COMMANDS.openViewer, title: 'Open Viewer', arguments: [loop.sessionId] });
      stream.button({ command: COMMANDS.interrupt, title: 'Interrupt', arguments: [{ kind: 'session', id: loop.sessionId }] });
    }
    // Loops started elsewhere (a terminal, another window) run too: their sessions have no end, and a runner holds their lock.
    const ours = this.deps.runs.runningSessionIds();
    const elsewhere = (await this.deps.store.list()).slice(0, 50).filter((summary) => !ours.has(summary.id) && listedSession(summary).running);
    if (elsewhere.length > 0) stream.markdown(`Running elsewhere:\n\n${elsewhere.map(sessionItem).join('\n')}\n`, [COMMANDS.openViewer]);
    if (loops.length === 0 && elsewhere.length === 0) stream.markdown('No loop is running. `/run <task>` starts one; `/sessions` lists the recent ones.\n');
    return { command: CHAT_COMMANDS.status };
  }

  private async listSessions(stream: ChatStream): Promise<ChatOutcomeMetadata> {
    const sessions = (await this.deps.store.list()).slice(0, LISTED_SESSIONS);
    if (sessions.length === 0) stream.markdown('No sessions yet. `/run <task>` starts a loop.\n');
    else stream.markdown(`${sessions.map(sessionItem).join('\n')}\n\n\`/sessions <id>\` shows one session's iterations.\n`, [COMMANDS.openViewer]);
    return { command: CHAT_COMMANDS.sessions };
  }

  /** One session's iterations, each with its verdict, checks, requirements and diff stat, and a link to its changes. */
  private async showSession(idText: string, stream: ChatStream): Promise<ChatOutcomeMetadata> {
    const sessionId = await this.deps.store.resolveId(idText);
    const details = await readModelSession(this.deps.store, sessionId);
    stream.markdown(sessionMarkdown(details), [COMMANDS.showIterationChanges]);
    stream.button({ command: COMMANDS.openViewer, title: 'Open Viewer', arguments: [sessionId] });
    return { command: CHAT_COMMANDS.sessions, sessionId, status: details.outcome ?? undefined };
  }

  private help(text: string, stream: ChatStream): ChatOutcomeMetadata {
    stream.markdown(
      [
        'Codeloops runs a coding agent on a task, has a second agent review the result, and repeats until the reviewer is satisfied and the checks pass.',
        '',
        '- `/run <task>`: run a loop in this workspace, with the agents and guards of your settings and `codeloops.toml`',
        '- `/status`: what runs now',
        "- `/sessions [session]`: the recent sessions, or one session's iterations",
        '- `/resume <session> [+N]`: carry a session on, with N more iterations',
      ].join('\n') + '\n',
    );
    return { command: 'help', task: text || undefined };
  }
}

/** A session in a list: a link that opens its viewer, then where and how it ended. */
function sessionItem(summary: SessionSummary): string {
  const link = commandLink(summary.id, { command: COMMANDS.openViewer, title: 'Open Viewer', arguments: [summary.id] });
  const facts = [
    summary.project,
    summary.outcome ?? (listedSession(summary).running ? 'running' : 'crashed'),
    `${summary.iterations} iteration${summary.iterations === 1 ? '' : 's'}`,
    relativeTime(summary.timestamp),
  ];
  return `- ${link} · ${markdownText(facts.join(' · '))}: ${markdownText(summary.prompt_preview)}`;
}

/** How much of an iteration's feedback the chat shows: the viewer has the rest. */
const FEEDBACK_CHARS = 600;

function sessionMarkdown(details: ModelSession): string {
  const lines = [
    `**Session ${markdownText(details.session_id)}**: ${markdownText(details.outcome ?? details.status)}, ${markdownText(details.actor_agent)} and ${markdownText(details.critic_agent)}`,
    '',
  ];
  lines.push(`> ${markdownText(details.prompt.replace(/\s+/g, ' ').slice(0, 300))}`, '');
  for (const iteration of details.iterations) {
    const diff = `${iteration.files_changed} file${iteration.files_changed === 1 ? '' : 's'}${iteration.insertions === null ? '' : ` +${iteration.insertions} −${iteration.deletions ?? 0}`}`;
    const facts = [iteration.decision, diff];
    if (iteration.failed_checks.length > 0) facts.push(`failing: ${iteration.failed_checks.join(', ')}`);
    if (iteration.unmet_requirements.length > 0) facts.push(`unmet: ${iteration.unmet_requirements.map((requirement) => requirement.id).join(', ')}`);
    const changes = commandLink('changes', {
      command: COMMANDS.showIterationChanges,
      title: 'Show Changes',
      arguments: [{ kind: 'iteration', sessionId: details.session_id, number: iteration.iteration }],
    });
    lines.push(
      `- **Iteration ${iteration.iteration}**: ${markdownText(facts.join(' · '))} (${changes})${iteration.feedback ? `  \n  ${markdownText(previewLine(iteration.feedback, FEEDBACK_CHARS))}` : ''}`,
    );
  }
  if (details.end) {
    const { end } = details;
    const facts = [end.outcome, end.verification, end.stop_reason, end.total_cost_usd == null ? null : `$${end.total_cost_usd.toFixed(2)}`]
      .filter(Boolean)
      .join(' · ');
    lines.push('', `**Outcome**: ${markdownText(facts)}${end.summary || end.error ? `: ${markdownText((end.summary || end.error)!)}` : ''}`);
  }
  return lines.join('\n') + '\n';
}
