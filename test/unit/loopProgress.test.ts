import assert from 'node:assert/strict';
import { LOOP_WAITING, loopEnded, loopProgressOf, loopProgressText, loopToldTo } from '../../src/sessionFormat/loopProgress.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { followRunning, runningLabel } from '../../webview-ui/browser/sessionListPage.js';
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
