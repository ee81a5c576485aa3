import { protectedStandingText } from '../src/sessionFormat/eventWording.js';
import { protectedChangeText } from '../src/sessionFormat/verification.js';
import type { IterationView, SessionView, TimelineNote } from '../src/sessionView/sessionView.js';
import type { HostCapabilities, ViewerMessage } from '../src/sessionView/viewerProtocol.js';
import { fileLocation } from '../src/text/humanize.js';
import { button, h, icon } from './dom.js';
import { formatDuration, formatTimestamp } from './format.js';

/**
 * The parts of the session viewer's timeline that stand on their own: an iteration's
 * checks, its protected changes, the start tests that refused its DONE, the review
 * items on it, a note between iterations. Each offers the user what the host can do
 * (accept a change, open a file at a line) and nothing else.
 */

/** What the parts may offer the user: what the host can do, and the way to ask it. */
export interface HostActions {
  capabilities: HostCapabilities;
  send: (message: ViewerMessage) => void;
}

const NOTE_ICONS: Readonly<Record<TimelineNote['kind'], string>> = {
  resumed: 'debug-continue',
  interrupted: 'debug-pause',
  rollback: 'discard',
  rollback_undone: 'redo',
  stall: 'sync-ignored',
  agent_waiting: 'watch',
  worktree_prepared: 'repo-clone',
  applied: 'check-all',
  apply_undone: 'redo',
  imported: 'cloud-download',
  needs_input_answered: 'comment',
};
export function renderChecks(iteration: IterationView): HTMLElement {
  return h(
    'ul',
    { class: 'checks', 'aria-label': 'checks' },
    ...iteration.checks.map((check) =>
      h(
        'li',
        { class: `check ${check.passed ? 'check-passed' : check.required ? 'check-failed' : 'check-advisory'}`, title: check.command },
        icon(check.passed ? 'pass' : check.required ? 'error' : 'warning'),
        h('span', { class: 'check-name' }, ` ${check.name}`),
        h(
          'span',
          { class: 'muted' },
          ` ${check.passed ? 'passed' : check.timed_out ? 'timed out' : `failed (exit ${check.exit_code ?? 'by a signal'})`} · ${formatDuration(check.duration_secs)}${check.required ? '' : ' · advisory'}`,
        ),
      ),
    ),
  );
}

/** The changes to what the checks rest on that stood on the iteration's tree: each weakening with Accept where the host can. */
export function renderProtected(iteration: IterationView, host: HostActions): HTMLElement {
  return h(
    'ul',
    { class: 'protected-changes', 'aria-label': 'protected changes' },
    ...iteration.protected_standing.map((standing) =>
      h(
        'li',
        { class: `protected-change protected-${standing.status}`, 'data-file': standing.change.file },
        icon(standing.status === 'weakening' ? 'shield' : 'pass'),
        h('span', { class: 'protected-text' }, ` ${protectedChangeText(standing.change)} `),
        h('span', { class: 'protected-state muted' }, protectedStandingText(standing)),
        host.capabilities.acceptChange && standing.status === 'weakening'
          ? button('Accept…', () => host.send({ type: 'acceptChange', iteration: iteration.iteration_number, file: standing.change.file }), {
              icon: 'check',
              title: `Let this change of ${standing.change.file} stand: it no longer refuses DONE, and the critic is told your reason`,
            })
          : null,
      ),
    ),
  );
}

/** Accept… for each start test that refused the DONE, where the host can record it (the editor). */
export function acceptTestButtons(tests: readonly string[], host: HostActions): HTMLElement[] {
  if (!host.capabilities.acceptChange || tests.length === 0) return [];
  return [
    h(
      'ul',
      { class: 'failed-tests', 'aria-label': 'start tests failing on the final code' },
      ...tests.map((test) =>
        h(
          'li',
          { class: 'failed-test', 'data-test': test },
          h('span', { class: 'failed-test-id' }, `${test} `),
          button('Accept…', () => host.send({ type: 'acceptTest', test }), {
            icon: 'check',
            title: `Let the start's test ${test} fail on the final code: it no longer refuses DONE, and the critic is told your reason`,
          }),
        ),
      ),
    ),
  ];
}

export function renderNote(note: TimelineNote): HTMLElement {
  return h(
    'div',
    { class: `note note-${note.kind}`, role: 'note' },
    icon(NOTE_ICONS[note.kind]),
    h('span', {}, ` ${note.text} `),
    h('span', { class: 'muted' }, formatTimestamp(note.at)),
  );
}

/** The critic's findings on an iteration, the user's comments on it and the hunks they rejected, with where each stands. */
export function renderReview(review: SessionView['review'], iteration: number | null, host: HostActions): HTMLElement | null {
  const findings = iteration === null ? [] : review.findings.filter((finding) => finding.iteration === iteration);
  const comments = review.comments.filter((comment) => comment.iteration === iteration);
  const rejections = iteration === null ? [] : review.rejections.filter((rejection) => rejection.iteration === iteration);
  if (findings.length + comments.length + rejections.length === 0) return null;
  const state = (open: boolean, claimed: boolean) =>
    h(
      'span',
      { class: `review-state ${open ? 'review-open' : 'review-resolved'}` },
      open ? (claimed ? 'open · the actor says addressed' : 'open') : 'resolved',
    );
  return h(
    'ul',
    { class: 'review', 'aria-label': iteration === null ? 'comments on the session' : 'review' },
    ...findings.map((finding) =>
      h(
        'li',
        { class: `review-item finding severity-${finding.severity}`, 'data-review-id': finding.id },
        icon(finding.severity === 'error' ? 'error' : finding.severity === 'warning' ? 'warning' : 'info'),
        h('span', { class: 'review-id' }, ` ${finding.id} `),
        finding.file && finding.anchored ? locationLink(finding.file, finding.line, finding.end_line, host) : null,
        h('span', { class: 'review-text' }, ` ${finding.message} `),
        state(finding.open, finding.claimed),
      ),
    ),
    ...comments.map((comment) =>
      h(
        'li',
        { class: 'review-item comment', 'data-review-id': comment.id },
        icon('comment'),
        h('span', { class: 'review-id' }, ` ${comment.id} (yours) `),
        comment.file ? locationLink(comment.file, comment.line, comment.end_line, host) : null,
        h('span', { class: 'review-text' }, ` ${comment.text} `),
        state(comment.open, comment.claimed),
      ),
    ),
    ...rejections.map((rejection) =>
      h(
        'li',
        { class: 'review-item rejection', 'data-review-id': rejection.id },
        icon('discard'),
        h('span', { class: 'review-id' }, ` ${rejection.id} `),
        h('span', { class: 'review-text' }, ` You rejected hunk ${rejection.hunk} of ${rejection.file}${rejection.reason ? `: ${rejection.reason}` : ''} `),
        h('span', { class: 'review-state' }, rejection.undone ? 'undone' : rejection.delivered ? 'told to the actor' : 'for the next actor run'),
      ),
    ),
  );
}

/** `src/a.ts:42-44`: a link that opens the file at the line where the host can, text where it cannot. */
function locationLink(file: string, line: number | null, endLine: number | null, host: HostActions): HTMLElement {
  const text = fileLocation(file, line, endLine);
  if (!host.capabilities.openLocation) return h('code', { class: 'location' }, text);
  const link = h('a', { class: 'location', href: '#', title: `Open ${text}` }, text);
  link.addEventListener('click', (event) => {
    event.preventDefault();
    host.send({ type: 'openLocation', file, line });
  });
  return link;
}
