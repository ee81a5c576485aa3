import type { CandidateRow, GroupComparison } from '../src/sessionFormat/candidateGroups.js';
import { judgeOverruledText } from '../src/sessionFormat/groupWording.js';
import {
  comparisonHostMessageSchema,
  type ComparisonHostMessage,
  type ComparisonState,
  type ComparisonViewerMessage,
} from '../src/sessionView/comparisonProtocol.js';
import { previewLine } from '../src/text/truncate.js';
import { renderDiff } from './diffView.js';
import { append, button, clear, h, icon, setChildren } from './dom.js';
import { formatCost, formatCount, formatDuration, formatTimestamp } from './format.js';
import { renderMarkdown } from './markdown.js';
import { onHostMessage, type PageTransport } from './transport.js';

/** How the comparison page talks to its host (the editor's webview). */
export type ComparisonTransport = PageTransport<ComparisonViewerMessage, ComparisonState>;

const STATUS: Readonly<Record<CandidateRow['status'], { label: string; icon: string }>> = {
  pending: { label: 'Waiting', icon: 'clock' },
  running: { label: 'Running', icon: 'sync' },
  success: { label: 'Success', icon: 'pass-filled' },
  failed: { label: 'Failed', icon: 'error' },
  interrupted: { label: 'Interrupted', icon: 'debug-pause' },
  max_iterations_reached: { label: 'Limit reached', icon: 'warning' },
  crashed: { label: 'Not finished', icon: 'question' },
};

/**
 * A candidate group's comparison page: a table of the figures per candidate (outcome,
 * iterations, checks, cost and tokens, duration, files and lines, confidence), best
 * first once ranked; each candidate's whole diff on demand; the judge's reasoning;
 * and "Apply This Candidate". Everything an agent wrote is rendered as text.
 */
export class ComparisonApp {
  private comparison: GroupComparison | null = null;
  private canApply = false;
  private readonly diffs = new Map<string, { diff: string; truncated: boolean }>();
  private readonly open = new Set<string>();
  private readonly content = h('main', { class: 'viewer comparison' });
  private readonly status = h('div', { class: 'status muted' }, 'Loading the candidates…');

  constructor(
    root: HTMLElement,
    private readonly transport: ComparisonTransport,
  ) {
    clear(root);
    append(root, this.status, this.content);
    onHostMessage(transport, comparisonHostMessageSchema, (message) => this.handle(message));
    transport.send({ type: 'ready' });
  }

  handle(message: ComparisonHostMessage): void {
    switch (message.type) {
      case 'comparison':
        this.comparison = message.comparison;
        this.canApply = message.capabilities.apply;
        this.status.replaceChildren();
        this.transport.saveState({ groupId: message.comparison.group_id });
        this.render();
        break;
      case 'candidateDiff':
        this.diffs.set(message.label, { diff: message.diff, truncated: message.truncated });
        this.render();
        break;
      case 'error':
        this.status.textContent = message.message;
        this.status.className = 'status error';
        break;
    }
  }

  private render(): void {
    const comparison = this.comparison!;
    const running = comparison.status === 'running';
    setChildren(
      this.content,
      h('h1', { class: 'title', title: comparison.prompt }, previewLine(comparison.prompt.trim().split('\n')[0] ?? comparison.prompt, 140)),
      h(
        'div',
        { class: `outcome outcome-${running ? 'running' : comparison.winner ? 'success' : 'none'}` },
        icon(running ? 'sync' : 'git-compare', running ? 'codicon-modifier-spin' : ''),
        running
          ? `${comparison.candidates.length} candidates running`
          : `${comparison.candidates.length} candidates, ${comparison.status}${comparison.winner ? `: ${comparison.winner} ranks first` : ''}`,
      ),
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Project'),
        h('dd', {}, comparison.working_dir),
        h('dt', {}, 'Critic and judge'),
        h('dd', {}, comparison.critic_model ? `${comparison.critic_agent} · ${comparison.critic_model}` : comparison.critic_agent),
        h('dt', {}, 'Started'),
        h('dd', {}, formatTimestamp(comparison.started_at)),
        h('dt', {}, 'Group'),
        h('dd', {}, comparison.group_id),
      ),
      this.renderTable(comparison),
      this.renderJudge(comparison),
      ...comparison.candidates.filter((row) => this.open.has(row.label)).map((row) => this.renderDiff(row)),
      ...comparison.warnings.map((warning) => h('div', { class: 'warning-box' }, icon('warning'), ` ${warning}`)),
    );
  }

  private renderJudge(comparison: GroupComparison): HTMLElement | null {
    const { judge } = comparison;
    if (!judge) return null;
    const overruled = judgeOverruledText(comparison);
    return h(
      'section',
      { class: 'judge', 'aria-label': 'the judge' },
      h('h2', {}, `The judge's reasoning (${judge.agent})`),
      // Said before the reasoning, which argues for the candidate the judge put first.
      overruled ? h('div', { class: 'warning-box overruled' }, icon('warning'), ` ${overruled}`) : null,
      judge.ranking.length > 0 ? h('p', { class: 'muted' }, `Ranked ${judge.ranking.join(' > ')}`) : null,
      renderMarkdown(judge.reasoning || '(no reasoning given)'),
    );
  }

  private renderTable(comparison: GroupComparison): HTMLElement {
    const headers = ['#', 'Candidate', 'Outcome', 'Iterations', 'Checks', 'Cost', 'Tokens', 'Duration', 'Files', 'Lines', 'Confidence', ''];
    return h(
      'table',
      { class: 'comparison-table', 'aria-label': 'candidates' },
      h('thead', {}, h('tr', {}, ...headers.map((header) => h('th', {}, header)))),
      h(
        'tbody',
        {},
        ...comparison.candidates.map((row) => {
          const status = STATUS[row.status];
          const applied = comparison.applied?.label === row.label;
          const canApply = this.canApply && row.session_id !== null && comparison.status !== 'running' && !applied && (row.files_changed ?? 0) > 0;
          return h(
            'tr',
            { class: `candidate candidate-${row.status}${row.label === comparison.winner ? ' winner' : ''}`, 'data-candidate': row.label },
            h('td', {}, row.rank === null ? '' : String(row.rank)),
            h('td', { class: 'candidate-label' }, row.label, row.model && !row.label.includes(':') ? h('span', { class: 'muted' }, ` ${row.model}`) : null),
            h(
              'td',
              { class: `outcome-${row.status}`, title: row.error ?? row.summary ?? '' },
              icon(status.icon, row.status === 'running' ? 'codicon-modifier-spin' : ''),
              ` ${status.label}${row.progress ? ` (${row.progress})` : ''}${applied ? ' · applied' : ''}`,
            ),
            h('td', {}, String(row.iterations)),
            h('td', {}, row.checks_total === null ? '—' : `${row.checks_passed}/${row.checks_total}`),
            h('td', {}, row.total_cost_usd === null ? '—' : `${row.cost_estimated ? '≈' : ''}${formatCost(row.total_cost_usd)}`),
            h('td', {}, row.total_tokens > 0 ? formatCount(row.total_tokens) : '—'),
            h('td', {}, row.duration_secs === null ? '—' : formatDuration(row.duration_secs)),
            h('td', {}, row.files_changed === null ? '—' : String(row.files_changed)),
            h(
              'td',
              { class: 'file-counts' },
              row.insertions === null
                ? '—'
                : h('span', {}, h('span', { class: 'add' }, `+${row.insertions}`), ' ', h('span', { class: 'del' }, `−${row.deletions ?? 0}`)),
            ),
            h('td', {}, row.confidence === null ? '—' : `${Math.round(row.confidence * 100)}%`),
            h(
              'td',
              { class: 'actions' },
              row.session_id && (row.files_changed ?? 0) > 0
                ? button(this.open.has(row.label) ? 'Hide Diff' : 'Diff', () => this.toggleDiff(row.label), {
                    icon: 'diff',
                    title: `The whole change of ${row.label}`,
                  })
                : null,
              row.session_id
                ? button('', () => this.transport.send({ type: 'openSession', sessionId: row.session_id! }), {
                    icon: 'preview',
                    title: 'Open its session',
                    class: 'icon-button',
                  })
                : null,
              canApply
                ? button('Apply This Candidate', () => this.transport.send({ type: 'apply', label: row.label }), {
                    icon: 'check-all',
                    title: `Put the changes of ${row.label} into your working tree`,
                  })
                : null,
            ),
          );
        }),
      ),
    );
  }

  private toggleDiff(label: string): void {
    if (this.open.has(label)) this.open.delete(label);
    else {
      this.open.add(label);
      if (!this.diffs.has(label)) this.transport.send({ type: 'requestDiff', label });
    }
    this.render();
  }

  private renderDiff(row: CandidateRow): HTMLElement {
    const loaded = this.diffs.get(row.label);
    return h(
      'section',
      { class: 'candidate-diff', 'data-candidate': row.label },
      h('h2', {}, `The change of ${row.label}`),
      !loaded ? h('p', { class: 'muted' }, 'Loading…') : loaded.diff.trim() ? renderDiff(loaded.diff) : h('p', { class: 'muted' }, 'It changed no files.'),
      loaded?.truncated ? h('p', { class: 'muted' }, 'The diff is long: its middle is left out here.') : null,
    );
  }
}
