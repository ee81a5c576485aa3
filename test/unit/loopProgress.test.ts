import assert from 'node:assert/strict';
import { LOOP_WAITING, loopEnded, loopProgressOf, loopProgressText, loopToldTo } from '../../src/sessionFormat/loopProgress.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { agentWaitingText, describeEvent, describeTimelineEntry } from '../../src/sessionFormat/eventWording.js';
import { followRunning, runningLabel } from '../../webview-ui/browser/sessionListPage.js';
import { COMMANDS } from '../../src/extension/ids.js';
import type { RunningLoop } from '../../src/extension/runs/loopRegistry.js';
import { runStatusOf } from '../../src/extension/runs/runStatus.js';
import { folderAt } from '../support/fakeEditor.js';
import { runFinishedEvent } from '../support/sessionFixtures.js';

const at = '2025-01-27T15:30:00Z';
const iterationStarted = (iteration: number): RunEvent => ({ type: 'iteration_started', iteration, timestamp: at });
const phase = (iteration: number, name: 'actor' | 'critic' | 'critic_repair', status: 'started' | 'finished' = 'started'): RunEvent => ({
  type: 'phase',
  iteration,
  phase: name,
  status,
  timestamp: at,
});

/**
 * Where a loop is, folded once (src/sessionFormat/loopProgress.ts) for every view of a
 * running loop; each view used to fold it its own way, and these are the ways they differed.
 */
describe('where a running loop is, as every view shows it', () => {
  it('the browser’s session list: a new iteration starts at its snapshot, a critic asked again says so, an ended one leaves', () => {
    // What the server broadcasts to the list: run_started, iteration_started, phase, iteration_finished, run_finished.
    const running = new Map();
    const label = () => runningLabel(running.get('s')!);
    followRunning(running, 's', iterationStarted(1));
    assert.equal(label(), 'Running · iteration 1 · snapshot', 'the list said "starting"');
    followRunning(running, 's', phase(1, 'critic_repair'));
    assert.equal(label(), 'Running · iteration 1 · critic, asked again', 'the list said "critic"');
    assert.equal(followRunning(running, 's', phase(1, 'critic', 'finished')), false, 'an event that moves nothing redraws nothing');
    followRunning(running, 's', runFinishedEvent({ iterations: 1, session_id: 's', timestamp: at }));
    assert.equal(running.has('s'), false);
  });

  it('the comparison page’s progress of a running candidate: its stage in the shared words, with a comma', () => {
    assert.equal(loopProgressText(loopProgressOf([]), ', '), 'starting');
    assert.equal(loopProgressText(loopProgressOf([iterationStarted(2)]), ', '), 'iteration 2, snapshot', 'the page said only "iteration 2"');
    assert.equal(loopProgressText(loopProgressOf([iterationStarted(2), phase(2, 'critic_repair')]), ', '), 'iteration 2, critic, asked again');
  });

  it('the editor’s candidates: one that ended as its group recorded it is ended, with that outcome; told to stop, an ended one stays ended', () => {
    const waiting = loopProgressOf([], LOOP_WAITING);
    assert.equal(loopProgressText(waiting), 'waiting');
    const ended = loopEnded(loopProgressOf([iterationStarted(1)], waiting), 'failed', at);
    assert.deepEqual([ended.stage, ended.outcome, loopProgressText(ended)], ['ended', 'failed', 'iteration 1 · failed']);
    assert.equal(loopToldTo(ended, 'stop'), ended);
    assert.equal(loopEnded(ended, 'success', at), ended, 'the first end counts');
  });

  it('a loop that waits for the user’s answer: its question, in every view’s words, until it goes on', () => {
    const needs = { from: 'critic' as const, question: 'Which database?' };
    const asked = loopProgressOf([iterationStarted(1), { type: 'review_paused', iteration: 1, needs_input: needs, timestamp: at }]);
    assert.deepEqual([asked.pausedAfter, asked.question, loopProgressText(asked)], [1, needs, 'iteration 1 · waiting for your answer']);
    const reviewed = loopProgressOf([iterationStarted(1), { type: 'review_paused', iteration: 1, timestamp: at }]);
    assert.deepEqual([reviewed.question, loopProgressText(reviewed)], [null, 'iteration 1 · waiting for your review']);
    assert.equal(loopToldTo(asked, 'continue').question, null);
  });
});

describe('a loop that waits out an agent’s usage limit', () => {
  it('says what it waits for and until when, in local time, in the live log, the replay, the viewer’s live panel and the status bar, until the agent runs again', () => {
    const until = new Date();
    until.setHours(15, 0, 0, 0);
    const waiting: RunEvent = {
      type: 'agent_waiting',
      iteration: 2,
      role: 'actor',
      agent: 'Claude Code',
      reason: 'usage_limit',
      until: until.toISOString(),
      timestamp: at,
    };
    const progress = loopProgressOf([iterationStarted(2), phase(2, 'actor'), waiting]);
    assert.deepEqual(progress.waiting, { agent: 'Claude Code', reason: 'usage_limit', until: until.toISOString() });
    assert.equal(agentWaitingText(progress.waiting!), 'waiting for the Claude Code usage limit to reset at 15:00');
    assert.deepEqual(describeEvent(waiting, { showAgentText: false }), [
      { text: 'waiting for the Claude Code usage limit to reset at 15:00', tone: 'warning' },
    ]);
    const entry = {
      kind: 'agent_waiting',
      at,
      offset_secs: null,
      iteration: 2,
      role: 'actor',
      agent: 'Claude Code',
      reason: 'usage_limit',
      until: until.toISOString(),
    } as const;
    assert.deepEqual(describeTimelineEntry(entry), [{ text: 'waiting for the Claude Code usage limit to reset at 15:00', tone: 'warning' }]);
    const loop = { kind: 'loop', folder: folderAt('/repo'), sessionId: 's', progress, startedAt: Date.now(), guards: null, spend: null, forecast: null };
    const status = runStatusOf(loop as unknown as RunningLoop);
    assert.equal(status.text, '$(watch) Codeloops: waiting for the Claude Code usage limit to reset at 15:00');
    assert.equal(status.command.command, COMMANDS.interrupt, 'a click interrupts it');
    const again: RunEvent = { type: 'agent_event', iteration: 2, role: 'actor', event: { kind: 'session', agentSessionId: 'a' }, timestamp: at };
    assert.equal(loopProgressOf([iterationStarted(2), phase(2, 'actor'), waiting, again]).waiting, null, 'the agent runs again: the wait is over');
  });

  it('words each reason, with the date when the time is not today', () => {
    const tomorrow = new Date();
    tomorrow.setDate(tomorrow.getDate() + 1);
    tomorrow.setHours(9, 5, 0, 0);
    const words = (reason: 'rate_limited' | 'overloaded' | 'outage' | 'usage_limit', until: Date) =>
      agentWaitingText({ agent: 'Codex', reason, until: until.toISOString() });
    const day = tomorrow.toLocaleDateString('en-GB', { day: 'numeric', month: 'short' });
    assert.equal(words('usage_limit', tomorrow), `waiting for the Codex usage limit to reset at ${day} 09:05`);
    assert.match(words('rate_limited', tomorrow), /^Codex is rate-limited: waiting until .* 09:05 to try again$/);
    assert.match(words('overloaded', tomorrow), /^Codex's API is overloaded/);
    assert.match(words('outage', tomorrow), /^Codex's API could not be reached/);
  });
});
