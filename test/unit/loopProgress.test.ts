import assert from 'node:assert/strict';
import { LOOP_WAITING, loopEnded, loopProgressOf, loopProgressText, loopToldTo } from '../../src/sessionFormat/loopProgress.js';
import type { RunEvent } from '../../src/sessionFormat/runEvents.js';
import { followRunning, runningLabel } from '../../webview-ui/browser/sessionListPage.js';

const at = '2025-01-27T15:30:00Z';
const iterationStarted = (iteration: number): RunEvent => ({ type: 'iteration_started', iteration, timestamp: at });
const phase = (iteration: number, name: 'actor' | 'critic' | 'critic_repair', status: 'started' | 'finished' = 'started'): RunEvent => ({
  type: 'phase',
  iteration,
  phase: name,
  status,
  timestamp: at,
});
const paused = (iteration: number): RunEvent => ({ type: 'review_paused', iteration, timestamp: at });
const resumed = (iteration: number, action: 'continue' | 'stop'): RunEvent => ({ type: 'review_resumed', iteration, action, paused_secs: 1, timestamp: at });

/**
 * Where a loop is, folded once (src/sessionFormat/loopProgress.ts) for every view of a
 * running loop; each view used to fold it its own way, and these are the ways they differed.
 */
describe('where a running loop is, as every view shows it', () => {
  it('the browser’s session list: a loop waiting for review says so, a critic asked again says so, an ended one leaves', () => {
    const running = new Map();
    const label = () => runningLabel(running.get('s')!);
    followRunning(running, 's', iterationStarted(1));
    assert.equal(label(), 'Running · iteration 1 · snapshot');
    followRunning(running, 's', phase(1, 'critic_repair'));
    assert.equal(label(), 'Running · iteration 1 · critic (asked again)', 'the list said "critic"');
    followRunning(running, 's', paused(1));
    assert.equal(label(), 'Running · iteration 1 · waiting for your review', 'the list did not follow a pause at all');
    assert.equal(followRunning(running, 's', phase(1, 'critic', 'finished')), false, 'an event that moves nothing redraws nothing');
    followRunning(running, 's', resumed(1, 'stop'));
    followRunning(running, 's', phase(2, 'actor'));
    assert.equal(label(), 'Running · iteration 1 · stopping', 'a loop told to stop stays stopping');
    followRunning(running, 's', {
      type: 'run_finished',
      status: 'interrupted',
      iterations: 1,
      summary: null,
      confidence: null,
      error: null,
      error_code: null,
      stop_reason: null,
      total_cost_usd: null,
      total_tokens: 0,
      cost_estimated: false,
      total_duration_secs: 1,
      session_id: 's',
      session_file: 's.jsonl',
      timestamp: at,
    });
    assert.equal(running.has('s'), false);
  });

  it('the comparison page’s progress of a running candidate: its stage in the shared words, with a comma', () => {
    assert.equal(loopProgressText(loopProgressOf([]), ', '), 'starting');
    assert.equal(loopProgressText(loopProgressOf([iterationStarted(2)]), ', '), 'iteration 2, snapshot', 'the page said only "iteration 2"');
    assert.equal(loopProgressText(loopProgressOf([iterationStarted(2), phase(2, 'critic_repair')]), ', '), 'iteration 2, critic (asked again)');
  });

  it('the editor’s candidates: one that ended as its group recorded it is ended, with that outcome; told to stop, an ended one stays ended', () => {
    const waiting = loopProgressOf([], LOOP_WAITING);
    assert.equal(loopProgressText(waiting), 'waiting');
    const ended = loopEnded(loopProgressOf([iterationStarted(1)], waiting), 'failed', at);
    assert.deepEqual([ended.stage, ended.outcome, loopProgressText(ended)], ['ended', 'failed', 'iteration 1 · failed']);
    assert.equal(loopToldTo(ended, 'stop'), ended);
    assert.equal(loopEnded(ended, 'success', at), ended, 'the first end counts');
  });
});
