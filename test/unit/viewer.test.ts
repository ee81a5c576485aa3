import assert from 'node:assert/strict';
import type { Outcome } from '../../src/sessionFormat/sessionLines.js';
import type { IterationView, SessionView } from '../../src/sessionView/sessionView.js';
import type { HostMessage, ViewerMessage, ViewerState } from '../../src/sessionView/viewerProtocol.js';
import { DIFF_PAGE_LINES, renderDiff, renderText } from '../../webview-ui/diffView.js';
import { renderMarkdown } from '../../webview-ui/markdown.js';
import type { Transport } from '../../webview-ui/transport.js';
import { ViewerApp } from '../../webview-ui/viewerApp.js';
import { ComparisonApp } from '../../webview-ui/comparisonApp.js';
import type { CandidateRow, GroupComparison } from '../../src/sessionFormat/candidateGroups.js';
import { installDom } from '../support/dom.js';
import { runFinishedEvent } from '../support/sessionFixtures.js';

const HOSTILE = '<script>window.pwned = true</script><img src=x onerror="window.pwned = true"><a href="javascript:alert(1)">click</a>';

class FakeTransport implements Transport {
  sent: ViewerMessage[] = [];
  state: ViewerState | undefined;
  private listener: ((message: HostMessage) => void) | undefined;
  send(message: ViewerMessage): void {
    this.sent.push(message);
  }
  onMessage(listener: (message: HostMessage) => void): void {
    this.listener = listener;
  }
  loadState(): ViewerState | undefined {
    return this.state;
  }
  saveState(state: ViewerState): void {
    this.state = state;
  }
  deliver(message: HostMessage): void {
    this.listener!(message);
  }
}

function iteration(number: number, overrides: Partial<IterationView> = {}): IterationView {
  return {
    iteration_number: number,
    critic_decision: 'CONTINUE',
    feedback: `Feedback **${number}**`,
    remaining_issues: [],
    summary: null,
    confidence: null,
    timestamp: '2025-01-27T15:31:30Z',
    actor_duration_secs: 12.5,
    actor_exit_code: 0,
    critic_duration_secs: 4,
    git_files_changed: 1,
    git_insertions: 3,
    git_deletions: 1,
    files: [{ path: `src/file${number}.ts`, status: 'modified', insertions: 3, deletions: 1 }],
    actor_usage: { inputTokens: 1000, outputTokens: 200, costUsd: 0.0123 },
    critic_usage: null,
    tool_calls: 2,
    critic_reverted_files: [],
    diff_since_head: false,
    actor_output_chars: 100,
    diff_chars: 100,
    checks: [],
    protected_standing: [],
    done_refused: null,
    ...overrides,
  };
}

interface SessionFixture extends Partial<Omit<SessionView, 'start' | 'end'>> {
  prompt?: string;
  /** null: the session has no end (running, or crashed). */
  outcome?: Outcome | null;
  summary?: string | null;
}

function session({
  prompt = 'Add validation\n\nwith tests',
  outcome = 'success',
  summary = 'Validation added',
  ...overrides
}: SessionFixture = {}): SessionView {
  return {
    id: '2025-01-27T15-30-45Z_a3f2c1',
    project: 'app',
    start: {
      type: 'session_start',
      timestamp: '2025-01-27T15:30:45Z',
      prompt,
      working_dir: '/home/user/app',
      actor_agent: 'Claude Code',
      critic_agent: 'OpenCode',
      actor_model: 'sonnet',
      critic_model: null,
      max_iterations: 10,
    },
    end:
      outcome === null ? null : { type: 'session_end', outcome, iterations: 2, summary, confidence: 0.9, duration_secs: 95, timestamp: '2025-01-27T15:32:20Z' },
    iterations: [iteration(1), iteration(2, { critic_decision: 'DONE', feedback: null, summary: 'All good' })],
    total_cost_usd: 0.05,
    total_tokens: 2400,
    warnings: [],
    notes: [],
    guards: null,
    review: { findings: [], comments: [], rejections: [], staged: [], carried_on: null },
    ...overrides,
  };
}

describe('session viewer (rendered in a DOM)', () => {
  let dom: ReturnType<typeof installDom>;
  beforeEach(() => (dom = installDom()));
  afterEach(() => dom.remove());

  function open(
    view: SessionView,
    options: { running?: boolean; openDiff?: boolean; resume?: boolean; openLocation?: boolean; reviewControl?: boolean; acceptChange?: boolean } = {},
  ) {
    const root = document.createElement('div');
    document.body.appendChild(root);
    const transport = new FakeTransport();
    new ViewerApp(root, transport);
    transport.deliver({
      type: 'session',
      view,
      running: options.running ?? false,
      capabilities: {
        openDiff: options.openDiff ?? false,
        resume: options.resume ?? false,
        openLocation: options.openLocation ?? false,
        reviewControl: options.reviewControl ?? false,
        acceptChange: options.acceptChange ?? false,
      },
    });
    return { root, transport };
  }

  it('says of a success that nothing but the critic’s word stands behind it; says nothing of a verified one or an older record', () => {
    const ended = (verification?: 'verified' | 'unverified') => {
      const view = session();
      return open({ ...view, end: { ...view.end!, verification } }).root.querySelector('.unverified');
    };
    assert.match(ended('unverified')?.textContent ?? '', /Unverified: no required check passed on the final tree/);
    assert.equal(ended('verified'), null);
    assert.equal(ended(undefined), null);
  });

  it('lists the critic’s findings and the user’s comments and rejections under their iteration, with links that open the file at the line', () => {
    const finding = { file: 'src/a.ts', line: 42, end_line: 44, severity: 'error' as const, anchored: true, claimed: false };
    const { root, transport } = open(
      session({
        review: {
          findings: [
            { ...finding, id: 'F1.1', message: 'x can be <null>', iteration: 1, open: true, claimed: true },
            { ...finding, id: 'F1.2', file: 'gone.ts', anchored: false, severity: 'info', message: 'a general remark', iteration: 1, open: false },
          ],
          comments: [
            {
              type: 'comment',
              timestamp: '2025-01-27T15:33:00Z',
              id: 'U2.1',
              iteration: 2,
              file: 'src/b.ts',
              line: 3,
              end_line: 3,
              text: 'Name it better',
              open: true,
              claimed: false,
            },
            {
              type: 'comment',
              timestamp: '2025-01-27T15:34:00Z',
              id: 'U2.2',
              iteration: null,
              file: null,
              line: null,
              end_line: null,
              text: 'Overall: fine',
              open: true,
              claimed: false,
            },
          ],
          rejections: [
            {
              type: 'hunk_rejected',
              timestamp: '2025-01-27T15:35:00Z',
              id: 'R1.1',
              iteration: 1,
              hunk: 2,
              file: 'src/a.ts',
              patch: '@@ -1 +1 @@\n-a\n+b\n',
              reason: 'public API',
              before_ref: 'refs/x',
              after_ref: 'refs/y',
              undone: false,
              delivered: true,
            },
          ],
          staged: [],
          carried_on: null,
        },
      }),
      { openLocation: true },
    );
    const [first, second] = [...root.querySelectorAll('article.iteration')];
    const items = [...first!.querySelectorAll('.review-item')].map((item) => item.textContent!.replace(/\s+/g, ' ').trim());
    assert.deepEqual(items, [
      'F1.1 src/a.ts:42-44 x can be <null> open · the actor says addressed',
      'F1.2 a general remark resolved',
      'R1.1 You rejected hunk 2 of src/a.ts: public API told to the actor',
    ]);
    assert.equal(first!.querySelector('.finding script, .finding null'), null, 'agent text stays text');
    assert.match(second!.querySelector('.review-item.comment')!.textContent!, /U2\.1 \(yours\) src\/b\.ts:3 Name it better open/);
    assert.match(root.querySelector('.session-comments')!.textContent!.replace(/\s+/g, ' '), /Comments on the session U2\.2 \(yours\) Overall: fine open/);
    (first!.querySelector('a.location') as HTMLElement).click();
    assert.deepEqual(transport.sent.at(-1), { type: 'openLocation', file: 'src/a.ts', line: 42 });
  });

  it('shows a loop paused for review, with Continue and Stop where the host can pass them on', () => {
    const { root, transport } = open(session({ outcome: null }), { running: true, reviewControl: true });
    transport.deliver({ type: 'live', event: { type: 'review_paused', timestamp: new Date().toISOString(), iteration: 2 } });
    assert.match(root.querySelector('.live h2')!.textContent!, /Paused after iteration 2: waiting for your review/);
    const continueButton = [...root.querySelectorAll('.live button')].find((candidate) => candidate.textContent!.includes('Continue')) as HTMLElement;
    continueButton.click();
    assert.deepEqual(transport.sent.at(-1), { type: 'reviewControl', action: 'continue' });
    transport.deliver({
      type: 'live',
      event: { type: 'review_resumed', timestamp: new Date().toISOString(), iteration: 2, action: 'continue', paused_secs: 3 },
    });
    assert.doesNotMatch(root.querySelector('.live')!.textContent!, /waiting for your review/);
  });

  it('shows a loop that waits for the user’s answer with the question, and Answer… (the host asks for it) instead of Continue', () => {
    const { root, transport } = open(session({ outcome: null }), { running: true, reviewControl: true });
    const needs_input = { from: 'critic' as const, question: 'Which database?' };
    transport.deliver({ type: 'live', event: { type: 'review_paused', timestamp: new Date().toISOString(), iteration: 2, needs_input } });
    assert.match(root.querySelector('.live h2')!.textContent!, /Paused after iteration 2: the critic needs you: Which database\?/);
    const buttons = [...root.querySelectorAll<HTMLElement>('.live button')];
    assert.deepEqual(
      buttons.map((each) => each.textContent!.trim()),
      ['Answer…', 'Stop'],
    );
    buttons[0]!.click();
    assert.deepEqual(transport.sent.at(-1), { type: 'reviewControl', action: 'continue' });
  });

  it('waits for the host: says it is ready first', () => {
    const { transport } = open(session());
    assert.deepEqual(transport.sent[0], { type: 'ready' });
  });

  it('shows the prompt, the outcome, the facts and a card per iteration', () => {
    const { root } = open(session());
    assert.equal(root.querySelector('h1')!.textContent, 'Add validation');
    assert.match(root.querySelector('.outcome')!.textContent!, /Success/);
    const facts = root.querySelector('.facts')!.textContent!;
    for (const fact of ['Claude Code · sonnet', 'OpenCode', '1m 35s', '$0.05', '2,400', '90%']) assert.ok(facts.includes(fact), fact);
    const cards = [...root.querySelectorAll('article.iteration')];
    assert.deepEqual(
      cards.map((card) => card.getAttribute('aria-label')),
      ['Iteration 1: CONTINUE', 'Iteration 2: DONE'],
    );
    assert.equal(cards[0]!.querySelector('.feedback strong')!.textContent, '1', 'feedback rendered as Markdown');
    assert.match(
      cards[0]!.querySelector('.facts-inline')!.textContent!,
      /actor 12\.5s · critic 4\.0s · 1 file \+3 −1 · 2 tool calls · actor \$0\.0123 · 1\.2k tokens/,
    );
  });

  it('shows a session of the original codeloops: iterations from 0, the decision’s own words, its diff as the whole change since HEAD', () => {
    const { root } = open(
      session({
        iterations: [
          iteration(0, { critic_decision: 'CONTINUE', critic_decision_text: 'CONTINUE (2 issues)', diff_since_head: true }),
          iteration(1, { critic_decision: 'DONE', critic_decision_text: 'approved', diff_since_head: true, feedback: null }),
        ],
      }),
    );
    const cards = [...root.querySelectorAll('article.iteration')];
    assert.deepEqual(
      cards.map((card) => [card.getAttribute('aria-label'), card.querySelector('.decision-text')?.textContent]),
      [
        ['Iteration 0: CONTINUE', 'recorded as “CONTINUE (2 issues)”'],
        ['Iteration 1: DONE', 'recorded as “approved”'],
      ],
    );
    assert.match(cards[0]!.querySelector('.facts-inline')!.textContent!, /1 file since HEAD \+3 −1/);
    assert.match(cards[0]!.querySelector('.note-box')!.textContent!, /the whole change since HEAD at the end of this iteration, not the iteration’s own/);
    // This runner's own iterations carry neither.
    const own = open(session()).root.querySelector('article.iteration')!;
    assert.equal(own.querySelector('.note-box'), null);
    assert.equal(own.querySelector('.decision-text'), null);
  });

  it('shows each iteration’s checks, a DONE the checks refused, the stop reason and the cost against its cap', () => {
    const check = { command: 'npm test', required: true, duration_secs: 3.5, timed_out: false };
    const { root } = open(
      session({
        outcome: 'failed',
        summary: null,
        guards: {
          checks: [{ name: 'tests', command: 'npm test', required: true }],
          max_cost_usd: 2,
          max_tokens: null,
          max_duration_secs: null,
          stall_after: 3,
          stall_action: 'stop',
        },
        iterations: [
          iteration(1, {
            critic_verdict: 'DONE',
            failed_checks: ['tests', 'lint'],
            done_refused: { failed_checks: ['tests'], protected_changes: [] },
            checks: [
              { ...check, name: 'tests', passed: false, exit_code: 1 },
              { ...check, name: 'lint', required: false, passed: false, exit_code: 2 },
            ],
          }),
          iteration(2, { checks: [{ ...check, name: 'tests', passed: false, exit_code: null, timed_out: true }] }),
        ],
        total_cost_usd: 2.31,
      }),
    );
    const [first, second] = [...root.querySelectorAll('article.iteration')];
    assert.match(
      first!.querySelector('.refused')!.textContent!,
      /^ The critic said DONE; refused: the required check tests fails\.$/,
      'the required check, not the advisory one',
    );
    assert.deepEqual(
      [...first!.querySelectorAll('.checks li')].map((item) => item.textContent!.trim()),
      ['tests failed (exit 1) · 3.5s', 'lint failed (exit 2) · 3.5s · advisory'],
    );
    assert.equal(second!.querySelector('.refused'), null);
    assert.match(second!.querySelector('.checks')!.textContent!, /tests timed out/);
    const facts = root.querySelector('.facts')!.textContent!;
    assert.match(facts, /\$2\.31 of \$2\.00/);
    assert.match(facts, /tests/);
  });

  it('says a DONE was refused for a protected change, lists the changes that stood with where each stands, and offers Accept only where the host can', () => {
    const skipped = { file: 'test/sum.test.js', kind: 'skip_added' as const, detail: 'test.skip' };
    const removed = { file: 'test/old.test.js', kind: 'tests_removed' as const, detail: '1 of 2 test cases removed' };
    const script = { file: 'package.json', kind: 'check_command_changed' as const, detail: 'scripts.test: "node --test" → "exit 0"' };
    const view = session({
      outcome: 'max_iterations_reached',
      iterations: [
        iteration(1, {
          critic_verdict: 'DONE',
          protected_changes: [skipped],
          done_refused: { failed_checks: [], protected_changes: [skipped] },
          protected_standing: [
            { change: skipped, status: 'weakening', reason: null },
            { change: removed, status: 'allowed', reason: null },
            { change: script, status: 'accepted', reason: 'the task moves the tests to <vitest>' },
          ],
        }),
      ],
    });
    const { root } = open(view);
    const card = root.querySelector('article.iteration')!;
    const refusal = card.querySelector('.refused')!.textContent!;
    assert.match(refusal, /The critic said DONE; refused: what the checks rest on was weakened \(test\/sum\.test\.js/);
    assert.doesNotMatch(refusal, /check.* fail/, 'no failing check is claimed when none failed');
    assert.deepEqual(
      [...card.querySelectorAll('.protected-changes li')].map((item) => item.textContent!.trim()),
      [
        'test/sum.test.js: a test skipped (test.skip) refuses DONE until restored or accepted',
        'test/old.test.js: test cases removed (1 of 2 test cases removed) allowed (allow_test_changes)',
        'package.json: what a check runs changed (scripts.test: "node --test" → "exit 0") accepted by you: the task moves the tests to <vitest>',
      ],
    );
    assert.equal(card.querySelectorAll('.protected-changes button').length, 0, 'codeloops ui is read-only: no Accept');

    const editor = open(view, { acceptChange: true });
    const buttons = [...editor.root.querySelectorAll<HTMLButtonElement>('.protected-changes button')];
    assert.deepEqual(
      buttons.map((each) => each.closest('li')!.getAttribute('data-file')),
      ['test/sum.test.js'],
      'only the weakening that stands',
    );
    buttons[0]!.click();
    assert.deepEqual(editor.transport.sent.at(-1), { type: 'acceptChange', iteration: 1, file: 'test/sum.test.js' });
  });

  it("says a DONE was refused for the start's tests failing on the final code, naming each, with Accept for each only where the host can, and what a success rested on", () => {
    const view = session({
      outcome: 'max_iterations_reached',
      iterations: [
        iteration(1, {
          critic_verdict: 'DONE',
          done_refused: { failed_checks: [], failed_tests: ['adds two numbers', 'sum <b>carries</b>'], protected_changes: [] },
        }),
      ],
    });
    const { root } = open(view);
    const refusal = root.querySelector('article.iteration .refused')!;
    assert.match(refusal.textContent!, /refused: the start's tests do not all pass on the final code \(adds two numbers, sum <b>carries<\/b>\)/);
    assert.equal(refusal.querySelector('b'), null, 'a test id is text, never markup');
    assert.equal(refusal.querySelectorAll('button').length, 0, 'codeloops ui is read-only: no Accept');

    const editor = open(view, { acceptChange: true });
    const buttons = [...editor.root.querySelectorAll<HTMLButtonElement>('.refused .failed-tests button')];
    assert.deepEqual(
      buttons.map((each) => each.closest('li')!.getAttribute('data-test')),
      ['adds two numbers', 'sum <b>carries</b>'],
    );
    buttons[1]!.click();
    assert.deepEqual(editor.transport.sent.at(-1), { type: 'acceptTest', test: 'sum <b>carries</b>' });

    const verified = session({ outcome: 'success', iterations: [iteration(1)] });
    verified.end = { ...verified.end!, verified_by: { start_tests: { passed: 333, flaky: 1 }, new_tests: 2, exit_code_checks: ['lint'], critic_commands: 0 } };
    assert.match(
      open(verified).root.querySelector('.facts')!.textContent!,
      /Verified bythe start's 333 tests passing on the final code \(1 flaky left out\); 2 new tests; lint by its exit code only/,
    );
  });

  it('shows the requirements as a checklist on each iteration: met with the evidence that confirms it and the critic’s words, unmet and why, and the DONE it refused', () => {
    const requirement = (id: string, met: boolean, evidence: string, confirmed: string | null) => ({
      id,
      text: `${id} text`,
      met,
      evidence,
      confirmed_by: confirmed,
    });
    const { root } = open(
      session({
        iterations: [
          iteration(1, {
            critic_verdict: 'DONE',
            done_refused: { failed_checks: [], protected_changes: [], unmet_requirements: ['REQ2'] },
            requirements: {
              source: 'task',
              requirements: [requirement('REQ1', true, 'the tests check passed', 'check tests passed'), requirement('REQ2', false, 'not written yet', null)],
            },
          }),
          iteration(2, {
            critic_decision: 'DONE',
            requirements: {
              source: 'critic',
              requirements: [requirement('REQ1', true, 'the tests check passed', 'check tests passed'), requirement('REQ2', true, 'src/a.js:2', 'src/a.js:2')],
            },
          }),
        ],
      }),
    );
    const [first, second] = [...root.querySelectorAll('article.iteration')];
    const items = (card: Element) => [...card.querySelectorAll('.requirements li')].map((item) => [item.className, item.textContent!.trim()]);
    assert.equal(first!.querySelector('.requirements-heading')!.textContent, 'requirements (from the task): 1 of 2 met with evidence');
    assert.deepEqual(items(first!), [
      ['requirement-met', 'REQ1 REQ1 text — evidence: check tests passedsaid: the tests check passed'],
      ['requirement-open', 'REQ2 REQ2 text — unmet: not written yet'],
    ]);
    assert.match(first!.querySelector('.refused')!.textContent!, /The critic said DONE; refused: REQ2 is unmet or without evidence/);
    assert.equal(second!.querySelector('.requirements-heading')!.textContent, 'requirements (listed by the critic): 2 of 2 met with evidence');
    assert.deepEqual(
      items(second!)[1],
      ['requirement-met', 'REQ2 REQ2 text — evidence: src/a.js:2'],
      'the critic’s words once when they are what confirmed it',
    );
    assert.equal(second!.querySelector('.refused'), null);
  });

  it('checks what reaches it against the protocol: a message that is not one of its host’s is ignored', () => {
    const root = document.createElement('div');
    document.body.appendChild(root);
    const transport = new FakeTransport();
    const warn = console.warn;
    console.warn = () => {};
    try {
      new ViewerApp(root, transport);
      transport.deliver({ type: 'session', view: { id: 'x', prompt: 'not a session view' }, running: false } as unknown as HostMessage);
      transport.deliver({ type: 'iterationDetail', detail: { number: 1, actor_output: 42 } } as unknown as HostMessage);
    } finally {
      console.warn = warn;
    }
    assert.equal(root.querySelectorAll('article.iteration').length, 0);
    assert.equal(root.querySelector('.status')!.textContent, 'Loading session…');
    transport.deliver({
      type: 'session',
      view: session(),
      running: false,
      capabilities: { openDiff: false, resume: false, openLocation: false, reviewControl: false, acceptChange: false },
    });
    assert.equal(root.querySelectorAll('article.iteration').length, 2, 'a well-formed one is shown');
  });

  it('renders agent text as text: a hostile critic or actor cannot run anything', () => {
    const { root, transport } = open(
      session({ prompt: HOSTILE, summary: HOSTILE, iterations: [iteration(1, { feedback: HOSTILE, remaining_issues: [HOSTILE] })] }),
    );
    const details = root.querySelector('details.iteration-details') as HTMLDetailsElement;
    details.open = true;
    details.dispatchEvent(new dom.window.Event('toggle') as unknown as Event);
    assert.deepEqual(transport.sent.at(-1), { type: 'requestIteration', iteration: 1 });
    transport.deliver({
      type: 'iterationDetail',
      detail: { number: 1, actor_output: HOSTILE, actor_stderr: HOSTILE, diff: `+${HOSTILE}\n`, critic_output: HOSTILE },
    });
    assert.equal(root.querySelectorAll('script').length, 0);
    assert.equal(root.querySelectorAll('img').length, 0);
    assert.equal([...root.querySelectorAll('a')].filter((link) => link.getAttribute('href')?.startsWith('javascript')).length, 0);
    assert.equal([...root.querySelectorAll('*')].filter((element) => [...element.attributes].some((attribute) => attribute.name.startsWith('on'))).length, 0);
    assert.ok(root.textContent!.includes('<script>window.pwned = true</script>'), 'shown as text');
    assert.equal((dom.window as unknown as { pwned?: boolean }).pwned, undefined);
  });

  it('asks for an iteration’s outputs only when it is opened, and remembers what was open', () => {
    const { root, transport } = open(session());
    assert.ok(!transport.sent.some((message) => message.type === 'requestIteration'), 'nothing heavy loaded up front');
    const second = root.querySelectorAll('details.iteration-details')[1] as HTMLDetailsElement;
    second.open = true;
    second.dispatchEvent(new dom.window.Event('toggle') as unknown as Event);
    assert.deepEqual(transport.sent.at(-1), { type: 'requestIteration', iteration: 2 });
    assert.deepEqual(transport.state, { sessionId: '2025-01-27T15-30-45Z_a3f2c1', expanded: [2] });
  });

  it('offers the diff editor only where the host has one', () => {
    const editor = open(session(), { openDiff: true });
    const button = editor.root.querySelector('article.iteration .file button') as HTMLButtonElement;
    button.click();
    assert.deepEqual(editor.transport.sent.at(-1), { type: 'openDiff', iteration: 1, path: 'src/file1.ts' });
    const browser = open(session(), { openDiff: false });
    assert.equal(browser.root.querySelectorAll('article.iteration button').length, 0);
  });

  it('follows a running loop: phase, elapsed time and the agent’s latest words', () => {
    const { root, transport } = open(session({ outcome: null, iterations: [] }), { running: true });
    const at = new Date().toISOString();
    transport.deliver({ type: 'live', event: { type: 'iteration_started', iteration: 1, timestamp: at } });
    transport.deliver({ type: 'live', event: { type: 'phase', iteration: 1, phase: 'actor', status: 'started', timestamp: at } });
    transport.deliver({
      type: 'live',
      event: { type: 'agent_event', iteration: 1, role: 'actor', event: { kind: 'text', text: 'Reading the tests 🎉' }, timestamp: at },
    });
    transport.deliver({
      type: 'live',
      event: { type: 'agent_event', iteration: 1, role: 'actor', event: { kind: 'tool_use', name: 'Edit', summary: 'src/a.ts' }, timestamp: at },
    });
    const live = root.querySelector('.live')!;
    assert.match(live.querySelector('h2')!.textContent!, /Iteration 1: actor/);
    assert.equal(live.querySelector('pre')!.textContent, 'Reading the tests 🎉\n→ Edit: src/a.ts');
    transport.deliver({
      type: 'live',
      event: runFinishedEvent({ timestamp: at }),
    });
    assert.equal(root.querySelector('.live')!.textContent, '');
  });

  it('takes where the loop is from the fold every view shares: a critic asked again, a loop told to stop stays stopping', () => {
    const { root, transport } = open(session({ outcome: null, iterations: [] }), { running: true });
    const at = new Date().toISOString();
    const heading = () => root.querySelector('.live h2')!.textContent!;
    transport.deliver({ type: 'live', event: { type: 'iteration_started', iteration: 2, timestamp: at } });
    assert.match(heading(), /Iteration 2: snapshot/, 'the viewer said "starting"');
    transport.deliver({ type: 'live', event: { type: 'phase', iteration: 2, phase: 'critic_repair', status: 'started', timestamp: at } });
    assert.match(heading(), /Iteration 2: critic, asked again/);
    transport.deliver({ type: 'live', event: { type: 'review_paused', iteration: 2, timestamp: at } });
    transport.deliver({ type: 'live', event: { type: 'review_resumed', iteration: 2, action: 'stop', paused_secs: 1, timestamp: at } });
    transport.deliver({ type: 'live', event: { type: 'phase', iteration: 3, phase: 'actor', status: 'started', timestamp: at } });
    assert.match(heading(), /Iteration 2: stopping/, 'the viewer showed the next phase of a loop told to stop');
  });

  it('opens a session of 100 iterations with megabytes of diff without rendering any diff', () => {
    const many = Array.from({ length: 100 }, (_, index) => iteration(index + 1, { diff_chars: 3_000_000, actor_output_chars: 1_000_000 }));
    const { root } = open(session({ iterations: many }));
    assert.equal(root.querySelectorAll('article.iteration').length, 100);
    assert.equal(root.querySelectorAll('.diff-line').length, 0);
  });
  it('shows a question for the user as one, not as feedback, and the user’s answer after it', () => {
    const { root } = open(
      session({
        iterations: [
          iteration(1, { feedback: "Waiting for the user's answer: Which port?", needs_input: { from: 'actor', question: 'Which port?' } }),
          iteration(2, { critic_decision: 'DONE', feedback: null }),
        ],
        notes: [{ kind: 'needs_input_answered', at: '2025-01-27T15:32:00Z', after_iteration: 1, text: 'you answered: 8080' }],
      }),
    );
    const first = root.querySelector('article.iteration')!;
    assert.equal(first.querySelector('.needs-input')!.textContent!.trim(), 'The actor needs you: Which port?');
    assert.equal(first.querySelector('.feedback'), null);
    assert.match(root.querySelector('.note-needs_input_answered')!.textContent!, /you answered: 8080/);

    // A headless run that stopped at the question says why in words, not as its stop_reason.
    const stopped = session({ outcome: 'failed', iterations: [iteration(1, { needs_input: { from: 'actor', question: 'Which port?' } })] });
    const { root: header } = open({ ...stopped, end: { ...stopped.end!, stop_reason: 'needs_input', error: 'Which port?' } });
    assert.match(header.querySelector('.facts')!.textContent!, /Stopped bya question only you can answer/);
  });

  it('places resumes, interruptions and rollbacks between the iterations they came between', () => {
    const { root } = open(
      session({
        iterations: [iteration(1), iteration(2), iteration(3, { critic_decision: 'DONE', feedback: null })],
        notes: [
          { kind: 'interrupted', at: '2025-01-27T15:32:00Z', after_iteration: 1, text: 'actor stopped (interrupted)' },
          { kind: 'resumed', at: '2025-01-27T15:33:00Z', after_iteration: 1, text: 'resumed at iteration 2' },
          { kind: 'rollback', at: '2025-01-27T15:40:00Z', after_iteration: 3, text: 'rolled back to before iteration 3: 1 file restored' },
        ],
      }),
    );
    const order = [...root.querySelectorAll('.timeline > article, .timeline > .note')].map((element) =>
      element.classList.contains('note') ? element.className.replace('note note-', '') : `#${element.getAttribute('data-iteration')}`,
    );
    assert.deepEqual(order, ['#1', 'interrupted', 'resumed', '#2', '#3', 'rollback']);
    assert.match(root.querySelector('.note-rollback')!.textContent!, /rolled back to before iteration 3: 1 file restored/);
  });

  it('steps through the iterations one at a time, each opened with its diff requested', () => {
    const { root, transport } = open(session({ iterations: [iteration(1), iteration(2), iteration(3)] }));
    const stepButton = (label: string) =>
      [...root.querySelectorAll<HTMLButtonElement>('.stepper button')].find((candidate) => candidate.textContent!.includes(label))!;
    stepButton('Step through').click();
    const openCards = () => [...root.querySelectorAll<HTMLDetailsElement>('article details')].map((details) => details.open);
    assert.deepEqual(openCards(), [true, false, false]);
    assert.deepEqual(transport.sent.at(-1), { type: 'requestIteration', iteration: 1 });
    assert.ok(stepButton('Previous').disabled);
    stepButton('Next').click();
    stepButton('Next').click();
    assert.deepEqual(openCards(), [false, false, true]);
    assert.equal(root.querySelector('.step-position')!.textContent, 'Iteration 3 of 3');
    assert.ok(stepButton('Next').disabled);
    assert.deepEqual(
      transport.sent.filter((message) => message.type === 'requestIteration').map((message) => (message as { iteration: number }).iteration),
      [1, 2, 3],
    );
    stepButton('Previous').click();
    assert.deepEqual(openCards(), [false, true, false]);
  });

  it('offers Resume only where the host can and the session can be carried on', () => {
    const resumeButton = (root: HTMLElement) =>
      [...root.querySelectorAll<HTMLButtonElement>('.outcome button')].find((candidate) => candidate.textContent!.includes('Resume'));
    assert.equal(resumeButton(open(session({ outcome: 'interrupted' })).root), undefined, 'a host without the capability');
    assert.equal(resumeButton(open(session({ outcome: 'success' }), { resume: true }).root), undefined, 'a finished session');
    assert.equal(resumeButton(open(session({ outcome: null }), { resume: true, running: true }).root), undefined, 'a running session');
    const { root, transport } = open(session({ outcome: 'interrupted' }), { resume: true });
    resumeButton(root)!.click();
    assert.deepEqual(transport.sent.at(-1), { type: 'resume' });
  });
});

describe('viewer rendering pieces', () => {
  let dom: ReturnType<typeof installDom>;
  beforeEach(() => (dom = installDom()));
  afterEach(() => dom.remove());

  it('colours diff lines by kind and renders a huge diff a page at a time', () => {
    const lines = ['diff --git a/x b/x', '--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', '-old', '+new', ' same'];
    const small = renderDiff(lines.join('\n') + '\n');
    assert.deepEqual(
      [...small.querySelectorAll('.diff-line')].map((line) => line.className.replace('diff-line ', '')),
      ['diff-file', 'diff-meta', 'diff-meta', 'diff-hunk', 'diff-del', 'diff-add', 'diff-context'],
    );
    const huge = renderDiff(Array.from({ length: 10_000 }, (_, i) => `+line ${i}`).join('\n'));
    assert.equal(huge.querySelectorAll('.diff-line').length, DIFF_PAGE_LINES);
    (huge.querySelector('.diff-more button') as HTMLButtonElement).click();
    assert.equal(huge.querySelectorAll('.diff-line').length, DIFF_PAGE_LINES * 2);
  });

  it('pages long text without splitting an emoji between pages', () => {
    const text = '🎉'.repeat(10);
    const rendered = renderText(text, 5);
    assert.equal(rendered.querySelector('pre')!.textContent, '🎉🎉');
    (rendered.querySelector('button') as HTMLButtonElement).click();
    assert.equal(rendered.querySelector('pre')!.textContent, '🎉🎉🎉🎉');
  });

  it('renders Markdown lists, code and links, keeping only http(s) targets', () => {
    const rendered = renderMarkdown(
      '1. first `code`\n2. [docs](https://example.com) and [bad](javascript:alert(1))\n\n```js\nlet x = "<b>";\n```\n\n<b>raw html</b>',
    );
    assert.equal(rendered.querySelectorAll('ol li').length, 2);
    assert.equal(rendered.querySelector('li code')!.textContent, 'code');
    const links = [...rendered.querySelectorAll('a')];
    assert.equal(links[0]!.getAttribute('href'), 'https://example.com');
    assert.equal(links[1]!.getAttribute('href'), null);
    assert.equal(rendered.querySelector('pre code')!.textContent, 'let x = "<b>";');
    assert.equal(rendered.querySelectorAll('b').length, 0);
    assert.match(rendered.textContent!, /<b>raw html<\/b>/);
  });
});

describe('candidate comparison page (rendered in a DOM)', () => {
  let dom: ReturnType<typeof installDom>;
  beforeEach(() => (dom = installDom()));
  afterEach(() => dom.remove());

  const row = (label: string, index: number, checksPassed: number): CandidateRow => ({
    index,
    label,
    agent: 'claude',
    model: null,
    session_id: `s${index}`,
    status: 'success',
    progress: null,
    iterations: 1,
    checks_passed: checksPassed,
    checks_total: 2,
    required_checks_failed: 2 - checksPassed,
    total_cost_usd: null,
    cost_estimated: false,
    total_tokens: 0,
    duration_secs: 1,
    files_changed: 1,
    insertions: 1,
    deletions: 0,
    confidence: 0.9,
    summary: null,
    error: null,
    rank: index,
    worktree: null,
    applied: false,
  });
  function open(overrides: Partial<GroupComparison>): HTMLElement {
    const root = document.createElement('div');
    document.body.appendChild(root);
    let listener: ((message: unknown) => void) | undefined;
    new ComparisonApp(root, { send: () => {}, onMessage: (on) => (listener = on), loadState: () => undefined, saveState: () => {} });
    const comparison: GroupComparison = {
      group_id: 'group-1',
      prompt: 'Fix it',
      working_dir: '/repo',
      started_at: '2025-01-27T15:30:45Z',
      status: 'finished',
      candidates: [row('a', 1, 2), row('b', 2, 1)],
      ranking: ['a', 'b'],
      judge: {
        ranking: ['b', 'a'],
        reasoning: 'B reads best',
        source: 'block',
        agent: 'Claude Code',
        model: null,
        answer: '',
        total_cost_usd: null,
        total_tokens: 0,
      },
      winner: 'a',
      applied: null,
      critic_agent: 'Claude Code',
      critic_model: null,
      warnings: [],
      ...overrides,
    };
    listener!({ type: 'comparison', comparison, capabilities: { apply: false } });
    return root;
  }

  it('says before the judge’s reasoning that the checks overruled its first choice, and nothing when they did not', () => {
    const overruled = open({ judge_overruled: { judged_first: 'b', ranked_first: 'a', by: 'checks' } }).querySelector('.judge')!;
    assert.equal(
      overruled.querySelector('.overruled')!.textContent!.trim(),
      'The judge ranked b first, but a passed 2 of 2 checks and b 1 of 2: checks come first.',
    );
    assert.match(overruled.textContent!, /checks come first\.[\s\S]*B reads best/);
    assert.equal(open({}).querySelector('.judge .overruled'), null);
  });
});
