import { hasOpenUserFeedback } from '../src/sessionFormat/reviewRecords.js';
import { advanceLoop, LOOP_STARTING, stageText, type LoopProgress } from '../src/sessionFormat/loopProgress.js';
import type { AgentEvent } from '../src/sessionFormat/agentEvents.js';
import { agentWaitingText, refusalReasons, requirementsLines, stopReasonText, toolCallText } from '../src/sessionFormat/eventWording.js';
import { needsInputText } from '../src/sessionFormat/needsInput.js';
import type { RunEvent } from '../src/sessionFormat/runEvents.js';
import type { Outcome } from '../src/sessionFormat/sessionLines.js';
import { verifiedByText } from '../src/sessionFormat/testResults.js';
import { requirementHolds, requirementState, type RequirementStatus } from '../src/sessionFormat/verification.js';
import type { IterationDetail, IterationView, SessionView } from '../src/sessionView/sessionView.js';
import { hostMessageSchema, viewerStateSchema, type HostCapabilities, type HostMessage } from '../src/sessionView/viewerProtocol.js';
import { previewLine, takeTail } from '../src/text/truncate.js';
import { renderDiff, renderText } from './diffView.js';
import { append, button, clear, h, icon, setChildren } from './dom.js';
import { formatCost, formatDuration, formatTimestamp, relativeTime, usageText } from './format.js';
import { renderMarkdown } from './markdown.js';
import { acceptTestButtons, renderChecks, renderNote, renderProtected, renderReview, type HostActions } from './timelineParts.js';
import { onHostMessage, type Transport } from './transport.js';

const DECISION_ICONS: Readonly<Record<IterationView['critic_decision'], string>> = { DONE: 'pass-filled', CONTINUE: 'debug-continue', ERROR: 'error' };
const OUTCOME_TEXT: Readonly<Record<Outcome, { label: string; icon: string }>> = {
  success: { label: 'Success', icon: 'pass-filled' },
  failed: { label: 'Failed', icon: 'error' },
  interrupted: { label: 'Interrupted', icon: 'debug-pause' },
  max_iterations_reached: { label: 'Iteration limit reached', icon: 'warning' },
};
/** Outcomes a session can be carried on from (`codeloops resume`). */
const RESUMABLE = new Set<Outcome | null>([null, 'interrupted', 'failed', 'max_iterations_reached']);
/** Streaming agent text kept on screen while a loop runs. */
const LIVE_TEXT_CHARS = 6_000;

/** The live panel: where the loop is (the run events' fold every view shares), and the agent's latest words. */
interface LiveState {
  progress: LoopProgress;
  /** The tail of what the agents wrote since the actor last started (or the loop paused). */
  text: string;
}
const NOT_LIVE: LiveState = { progress: LOOP_STARTING, text: '' };

/**
 * The session viewer: the prompt, the timeline of iterations (decision, feedback as
 * Markdown, files, cost), and, on demand, each iteration's outputs and diff. While
 * the loop runs, a live panel follows the current phase. Everything an agent wrote
 * is rendered as text.
 */
export class ViewerApp {
  private view: SessionView | null = null;
  private running = false;
  private capabilities: HostCapabilities = { openDiff: false, resume: false, openLocation: false, reviewControl: false, acceptChange: false };
  private readonly expanded = new Set<number>();
  private readonly details = new Map<number, IterationDetail>();
  private readonly detailSlots = new Map<number, HTMLElement>();
  private live: LiveState = NOT_LIVE;
  /** The iteration being stepped through, one at a time with its diff. */
  private step: number | null = null;
  private liveTimer: ReturnType<typeof setInterval> | undefined;
  private readonly timeline = h('section', { class: 'timeline', 'aria-label': 'iterations' });
  private readonly header = h('header', { class: 'session-header' });
  private readonly livePanel = h('section', { class: 'live', 'aria-live': 'polite' });
  private readonly status = h('div', { class: 'status muted' }, 'Loading session…');

  constructor(
    private readonly root: HTMLElement,
    private readonly transport: Transport,
  ) {
    clear(root);
    append(root, h('main', { class: 'viewer' }, this.status, this.header, this.timeline, this.livePanel));
    const saved = viewerStateSchema.safeParse(transport.loadState());
    for (const number of saved.success ? saved.data.expanded : []) this.expanded.add(number);
    // Checked on arrival, like everything the host gets from the page: only a well-formed message is shown.
    onHostMessage(transport, hostMessageSchema, (message) => this.handle(message));
    transport.send({ type: 'ready' });
  }

  /** What the timeline's parts may offer: the host's capabilities as they are now, and its transport. */
  private get host(): HostActions {
    return { capabilities: this.capabilities, send: (message) => this.transport.send(message) };
  }

  handle(message: HostMessage): void {
    switch (message.type) {
      case 'session':
        this.showSession(message.view, message.running, message.capabilities);
        break;
      case 'iterationDetail':
        this.details.set(message.detail.number, message.detail);
        this.fillDetail(message.detail.number);
        break;
      case 'live':
        this.applyLive(message.event);
        break;
      case 'error':
        this.status.textContent = message.message;
        this.status.className = 'status error';
        break;
    }
  }

  private showSession(view: SessionView, running: boolean, capabilities: HostCapabilities): void {
    const changedSession = this.view?.id !== view.id;
    if (changedSession) {
      this.details.clear();
      if (this.view) this.expanded.clear();
    }
    this.view = view;
    this.running = running;
    this.capabilities = capabilities;
    if (!running) this.live = NOT_LIVE;
    this.status.replaceChildren();
    this.status.className = 'status';
    this.renderHeader();
    this.renderTimeline();
    this.renderLive();
    this.saveState();
  }

  private saveState(): void {
    if (this.view) this.transport.saveState({ sessionId: this.view.id, expanded: [...this.expanded] });
  }

  // ── header ────────────────────────────────────────────────────────────────────

  private renderHeader(): void {
    const view = this.view!;
    const { start, end } = view;
    const outcome = end ? OUTCOME_TEXT[end.outcome] : this.running ? { label: 'Running', icon: 'sync' } : { label: 'Not finished', icon: 'question' };
    const facts: Array<[string, string | null]> = [
      ['Project', `${view.project} (${view.start.working_dir})`],
      ['Actor', view.start.actor_model ? `${view.start.actor_agent} · ${view.start.actor_model}` : view.start.actor_agent],
      ['Critic', view.start.critic_model ? `${view.start.critic_agent} · ${view.start.critic_model}` : view.start.critic_agent],
      ['Started', `${formatTimestamp(view.start.timestamp)} (${relativeTime(view.start.timestamp)})`],
      ['Iterations', `${view.iterations.length}${view.start.max_iterations ? ` of at most ${view.start.max_iterations}` : ''}`],
      ['Duration', end ? formatDuration(end.duration_secs) : null],
      ['Cost', costText(view)],
      ['Checks', view.guards && view.guards.checks.length > 0 ? view.guards.checks.map((check) => check.name).join(', ') : null],
      ['Verified by', end?.outcome === 'success' && end.verified_by ? verifiedByText(end.verified_by) : null],
      ['Stopped by', end?.stop_reason ? stopReasonText(end.stop_reason) : null],
      ['Tokens', view.total_tokens === null ? null : view.total_tokens.toLocaleString('en-US')],
      ['Confidence', end?.confidence == null ? null : `${Math.round(end.confidence * 100)}%`],
      ['Carries on', start.resumed_from ?? null],
    ];
    // A finished session is open again once the user has commented on it or rejected part of it.
    const canResume = this.capabilities.resume && !this.running && (RESUMABLE.has(end?.outcome ?? null) || hasOpenUserFeedback(view.review));
    setChildren(
      this.header,
      h('h1', { class: 'title', title: view.start.prompt }, previewLine(view.start.prompt.trim().split('\n')[0] ?? view.start.prompt, 140)),
      h(
        'div',
        { class: `outcome outcome-${end?.outcome ?? (this.running ? 'running' : 'none')}` },
        icon(outcome.icon, this.running && !end ? 'codicon-modifier-spin' : ''),
        outcome.label,
        canResume
          ? button('Resume', () => this.transport.send({ type: 'resume' }), { icon: 'debug-continue', title: 'Carry this session on from where it stopped' })
          : null,
      ),
      h('dl', { class: 'facts' }, ...facts.filter(([, value]) => value !== null).flatMap(([label, value]) => [h('dt', {}, label), h('dd', {}, value!)])),
      end?.summary ? h('div', { class: 'summary' }, h('h2', {}, 'Summary'), renderMarkdown(end.summary)) : null,
      end?.error ? h('div', { class: 'error-box' }, icon('error'), ` ${end.error}`) : null,
      end?.outcome === 'success' && end.verification === 'unverified'
        ? h(
            'div',
            { class: 'warning-box unverified' },
            icon('shield'),
            ' Unverified: no required check passed on the final tree and the critic ran no command that succeeded. The DONE rests on the critic’s word.',
          )
        : null,
      h('details', { class: 'prompt' }, h('summary', {}, 'Prompt'), h('pre', { class: 'output' }, view.start.prompt)),
      ...view.warnings.map((warning) => h('div', { class: 'warning-box' }, icon('warning'), ` ${warning}`)),
    );
  }

  // ── timeline ──────────────────────────────────────────────────────────────────

  private renderTimeline(): void {
    const view = this.view!;
    this.detailSlots.clear();
    const notesAfter = (test: (after: number) => boolean) => view.notes.filter((note) => test(note.after_iteration)).map((note) => renderNote(note));
    const entries: HTMLElement[] = [];
    view.iterations.forEach((iteration, index) => {
      const previous = index === 0 ? -1 : view.iterations[index - 1]!.iteration_number;
      entries.push(...notesAfter((after) => after >= previous && after < iteration.iteration_number), this.renderIteration(iteration));
    });
    const last = view.iterations.at(-1)?.iteration_number ?? -1;
    entries.push(...notesAfter((after) => after >= last));
    const onSession = renderReview(view.review, null, this.host);
    setChildren(
      this.timeline,
      h('div', { class: 'timeline-heading' }, h('h2', {}, 'Timeline'), view.iterations.length > 1 ? this.renderStepper(view) : null),
      view.iterations.length === 0 ? h('p', { class: 'muted' }, this.running ? 'The first iteration is under way.' : 'No iteration was completed.') : null,
      ...entries,
      onSession ? h('section', { class: 'session-comments' }, h('h3', {}, 'Comments on the session'), onSession) : null,
    );
  }

  /** Previous / next: opens one iteration at a time with its diff, to replay the session step by step. */
  private renderStepper(view: SessionView): HTMLElement {
    const numbers = view.iterations.map((iteration) => iteration.iteration_number);
    const position = this.step === null ? -1 : numbers.indexOf(this.step);
    const go = (index: number) => this.stepTo(numbers[Math.max(0, Math.min(numbers.length - 1, index))]!);
    const previous = button('Previous', () => go(position - 1), { icon: 'arrow-left', title: 'Step to the previous iteration' });
    const next = button(position === -1 ? 'Step through' : 'Next', () => go(position + 1), { icon: 'arrow-right', title: 'Step to the next iteration' });
    previous.disabled = position <= 0;
    next.disabled = position === numbers.length - 1;
    return h(
      'div',
      { class: 'stepper' },
      previous,
      h('span', { class: 'step-position muted', 'aria-live': 'polite' }, position === -1 ? '' : `Iteration ${numbers[position]} of ${numbers.length}`),
      next,
    );
  }

  private stepTo(number: number): void {
    this.step = number;
    this.expanded.clear();
    this.expanded.add(number);
    this.renderTimeline();
    this.saveState();
    const card = this.timeline.querySelector(`[data-iteration="${number}"]`);
    if (card && typeof (card as HTMLElement).scrollIntoView === 'function') (card as HTMLElement).scrollIntoView({ block: 'start' });
  }

  private renderIteration(iteration: IterationView): HTMLElement {
    return h(
      'article',
      {
        class: `iteration decision-${iteration.critic_decision.toLowerCase()}`,
        'data-iteration': String(iteration.iteration_number),
        'aria-label': `Iteration ${iteration.iteration_number}: ${iteration.critic_decision}`,
      },
      this.renderIterationHeader(iteration),
      iteration.done_refused
        ? h(
            'div',
            { class: 'warning-box refused' },
            icon('shield'),
            ` The critic said DONE; refused: ${refusalText(iteration.done_refused)}.`,
            ...acceptTestButtons(iteration.done_refused.failed_tests ?? [], this.host),
          )
        : null,
      iteration.checks.length > 0 ? renderChecks(iteration) : null,
      iteration.protected_standing.length > 0 ? renderProtected(iteration, this.host) : null,
      iteration.requirements ? renderRequirements(iteration.requirements) : null,
      iteration.critic_decision === 'DONE' && iteration.summary ? h('div', { class: 'feedback' }, renderMarkdown(iteration.summary)) : null,
      // A question for the user is shown as one, not as feedback to the actor.
      iteration.needs_input
        ? h('div', { class: 'warning-box needs-input' }, icon('question'), ` ${needsInputText(iteration.needs_input, true)}`)
        : iteration.feedback
          ? h('div', { class: 'feedback' }, renderMarkdown(iteration.feedback))
          : null,
      iteration.remaining_issues.length > 0
        ? h('div', { class: 'issues' }, h('h4', {}, 'Remaining issues'), h('ul', {}, ...iteration.remaining_issues.map((issue) => h('li', {}, issue))))
        : null,
      iteration.critic_reverted_files.length > 0
        ? h('div', { class: 'warning-box' }, icon('warning'), ` The critic changed ${iteration.critic_reverted_files.join(', ')}; those changes were reverted.`)
        : null,
      renderReview(this.view!.review, iteration.iteration_number, this.host),
      iteration.diff_since_head && iteration.git_files_changed > 0
        ? h(
            'div',
            { class: 'note-box' },
            icon('info'),
            ' Recorded by the original codeloops: these files and this diff are the whole change since HEAD at the end of this iteration, not the iteration’s own.',
          )
        : null,
      iteration.files.length > 0 ? this.renderFiles(iteration) : null,
      this.renderDetails(iteration.iteration_number),
    );
  }

  /** The iteration's number, decision and figures, and its changes in the diff editor where the host has one. */
  private renderIterationHeader(iteration: IterationView): HTMLElement {
    const facts = [
      `actor ${formatDuration(iteration.actor_duration_secs)}${iteration.actor_exit_code !== 0 ? ` (exit ${iteration.actor_exit_code})` : ''}`,
      iteration.critic_duration_secs !== null ? `critic ${formatDuration(iteration.critic_duration_secs)}` : null,
      `${iteration.git_files_changed} file${iteration.git_files_changed === 1 ? '' : 's'}${iteration.diff_since_head ? ' since HEAD' : ''}${iteration.git_insertions !== null ? ` +${iteration.git_insertions} −${iteration.git_deletions ?? 0}` : ''}`,
      iteration.tool_calls !== null ? `${iteration.tool_calls} tool call${iteration.tool_calls === 1 ? '' : 's'}` : null,
      usageText(iteration.actor_usage) ? `actor ${usageText(iteration.actor_usage)}` : null,
      usageText(iteration.critic_usage) ? `critic ${usageText(iteration.critic_usage)}` : null,
    ].filter((fact): fact is string => fact !== null);
    return h(
      'header',
      {},
      icon(DECISION_ICONS[iteration.critic_decision], 'decision-icon'),
      h('h3', {}, `Iteration ${iteration.iteration_number}`),
      h('span', { class: `badge badge-${iteration.critic_decision.toLowerCase()}` }, iteration.critic_decision),
      iteration.critic_decision_text !== undefined ? h('span', { class: 'muted decision-text' }, `recorded as “${iteration.critic_decision_text}”`) : null,
      h('span', { class: 'facts-inline muted' }, facts.join(' · ')),
      this.capabilities.openDiff && iteration.git_files_changed > 0
        ? button('Changes', () => this.transport.send({ type: 'openDiff', iteration: iteration.iteration_number }), {
            icon: 'diff-multiple',
            title: 'Open all changes of this iteration in the diff editor',
          })
        : null,
    );
  }

  /** The files the iteration changed, each with its counts and, where the host can, its diff. */
  private renderFiles(iteration: IterationView): HTMLElement {
    return h(
      'ul',
      { class: 'files' },
      ...iteration.files.map((file) =>
        h(
          'li',
          { class: `file file-${file.status}` },
          h('span', { class: 'file-status', title: file.status }, STATUS_LETTER[file.status] ?? '?'),
          h('span', { class: 'file-path' }, file.oldPath ? `${file.oldPath} → ${file.path}` : file.path),
          file.insertions !== null
            ? h(
                'span',
                { class: 'file-counts' },
                h('span', { class: 'add' }, `+${file.insertions}`),
                ' ',
                h('span', { class: 'del' }, `−${file.deletions ?? 0}`),
              )
            : h('span', { class: 'file-counts muted' }, 'binary'),
          this.capabilities.openDiff
            ? button('', () => this.transport.send({ type: 'openDiff', iteration: iteration.iteration_number, path: file.path }), {
                icon: 'diff',
                title: `Open the diff of ${file.path}`,
                class: 'icon-button',
              })
            : null,
        ),
      ),
    );
  }

  /** "Outputs and diff": asked of the host only when opened, and remembered open across reloads. */
  private renderDetails(number: number): HTMLElement {
    const detailSlot = h('div', { class: 'detail' });
    this.detailSlots.set(number, detailSlot);
    const details = h('details', { class: 'iteration-details' }, h('summary', {}, 'Outputs and diff'), detailSlot);
    details.open = this.expanded.has(number);
    details.addEventListener('toggle', () => {
      if (details.open) {
        this.expanded.add(number);
        this.ensureDetail(number);
      } else this.expanded.delete(number);
      this.saveState();
    });
    if (details.open) this.ensureDetail(number);
    return details;
  }

  private ensureDetail(number: number): void {
    if (this.details.has(number)) this.fillDetail(number);
    else {
      this.detailSlots.get(number)?.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
      this.transport.send({ type: 'requestIteration', iteration: number });
    }
  }

  private fillDetail(number: number): void {
    const slot = this.detailSlots.get(number);
    const detail = this.details.get(number);
    if (!slot || !detail) return;
    setChildren(
      slot,
      h('h4', {}, 'Diff'),
      renderDiff(detail.diff),
      h('h4', {}, "Actor's output"),
      detail.actor_output.trim() ? renderText(detail.actor_output) : h('p', { class: 'muted' }, '(no output)'),
      detail.actor_stderr.trim() ? h('div', {}, h('h4', {}, "Actor's stderr"), renderText(detail.actor_stderr)) : null,
      detail.critic_output ? h('div', {}, h('h4', {}, "Critic's review"), renderText(detail.critic_output)) : null,
    );
  }

  // ── live ──────────────────────────────────────────────────────────────────────

  private applyLive(event: RunEvent): void {
    const progress = advanceLoop(this.live.progress, event);
    const agentLine = event.type === 'agent_event' ? agentLineOf(event.event) : null;
    if (progress === this.live.progress && agentLine === null) return;
    // A new iteration, the actor starting again, a pause: the words so far are no longer what is happening.
    const fresh =
      event.type === 'iteration_started' ||
      event.type === 'review_paused' ||
      (event.type === 'phase' && event.phase === 'actor' && progress !== this.live.progress);
    const text = fresh ? '' : this.live.text;
    this.live = { progress, text: agentLine === null ? text : takeTail(`${text}${text ? '\n' : ''}${agentLine}`, LIVE_TEXT_CHARS) };
    if (progress.stage === 'ended') {
      this.running = false;
      this.live = NOT_LIVE;
    }
    this.renderLive();
  }

  private renderLive(): void {
    clearInterval(this.liveTimer);
    if (!this.running) {
      setChildren(this.livePanel);
      return;
    }
    const { progress, text } = this.live;
    const elapsed = h('span', { class: 'elapsed' });
    const since = progress.stageSince === null ? null : Date.parse(progress.stageSince);
    const tick = (): void => {
      elapsed.textContent = since === null ? '' : formatDuration((Date.now() - since) / 1000);
    };
    tick();
    this.liveTimer = setInterval(tick, 1000);
    if (progress.pausedAfter !== null) {
      setChildren(this.livePanel, ...this.renderPaused(progress, elapsed));
      return;
    }
    setChildren(
      this.livePanel,
      h(
        'h2',
        {},
        icon(progress.waiting ? 'watch' : 'sync', progress.waiting ? undefined : 'codicon-modifier-spin'),
        progress.iteration === null
          ? ' Running '
          : ` Iteration ${progress.iteration}: ${progress.waiting ? agentWaitingText(progress.waiting) : stageText(progress.stage)} `,
        elapsed,
      ),
      text ? h('pre', { class: 'output live-output' }, text) : h('p', { class: 'muted' }, 'Waiting for the agent…'),
    );
  }

  /**
   * The loop waits for the user's review, or their answer to a question: what to do,
   * and Continue (Answer…, which the host asks for) and Stop where the host can pass them on.
   */
  private renderPaused(progress: LoopProgress, elapsed: HTMLElement): HTMLElement[] {
    const control = (action: 'continue' | 'stop') => () => this.transport.send({ type: 'reviewControl', action });
    const { pausedAfter: iteration, question } = progress;
    return [
      question
        ? h('h2', {}, icon('question'), ` Paused after iteration ${iteration}: ${needsInputText(question)} `, elapsed)
        : h('h2', {}, icon('comment-discussion'), ` Paused after iteration ${iteration}: waiting for your review `, elapsed),
      h(
        'p',
        {},
        question
          ? 'Your answer goes to the next actor as your words.'
          : 'Read the changes, comment on them or reject hunks; the next actor run is told. Then go on.',
      ),
      ...(this.capabilities.reviewControl
        ? [
            h(
              'div',
              { class: 'review-controls' },
              question
                ? button('Answer…', control('continue'), { icon: 'question', title: 'Answer the question: the loop goes on with your answer' })
                : button('Continue', control('continue'), { icon: 'debug-continue', title: 'Run the next iteration' }),
              button('Stop', control('stop'), { icon: 'debug-stop', title: 'End the loop here' }),
            ),
          ]
        : []),
    ];
  }
}

/** An agent's words or tool call as a line of the live panel; null for what it does not show. */
function agentLineOf(event: AgentEvent): string | null {
  if (event.kind === 'text') return event.text;
  if (event.kind === 'tool_use') return toolCallText(event.name, event.summary);
  return null;
}

const STATUS_LETTER: Readonly<Record<string, string>> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', copied: 'C', type_changed: 'T' };

/** Why the gate refused a DONE, in the live log's words (its checks, its protected changes); an older record may name none. */
function refusalText(refusal: NonNullable<IterationView['done_refused']>): string {
  return refusalReasons(refusal).join('; ') || 'the gate refused it';
}

/** What the session cost, against its cap when it had one. */
function costText(view: SessionView): string | null {
  const cost = view.end?.total_cost_usd ?? view.total_cost_usd;
  const cap = view.guards?.max_cost_usd ?? null;
  const spent = cost === null || cost === undefined ? null : `${view.end?.cost_estimated ? '≈' : ''}${formatCost(cost)}`;
  if (cap === null) return spent;
  return `${spent ?? '$0.00'} of ${formatCost(cap)}`;
}

/**
 * The task's requirements as a checklist under the live log's count of them: each met
 * with evidence the record confirms, or not (and why), with the critic's own words for
 * its evidence where they say more than what confirmed them.
 */
function renderRequirements(judged: NonNullable<IterationView['requirements']>): HTMLElement {
  return h(
    'section',
    { class: 'requirements', 'aria-label': 'requirements' },
    h('div', { class: 'requirements-heading' }, requirementsLines(judged)[0]!.text),
    h('ul', {}, ...judged.requirements.map(renderRequirement)),
  );
}

function renderRequirement(requirement: RequirementStatus): HTMLElement {
  const holds = requirementHolds(requirement);
  const said = holds && requirement.evidence && requirement.evidence !== requirement.confirmed_by ? requirement.evidence : null;
  return h(
    'li',
    { class: holds ? 'requirement-met' : 'requirement-open', 'data-requirement': requirement.id },
    icon(holds ? 'pass' : 'circle-large-outline'),
    h('span', { class: 'requirement-id' }, ` ${requirement.id}`),
    h('span', {}, ` ${requirement.text}`),
    h('span', { class: 'requirement-state muted' }, ` — ${requirementState(requirement)}`),
    said ? h('div', { class: 'requirement-evidence muted' }, `said: ${said}`) : null,
  );
}
