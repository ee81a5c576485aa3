import assert from 'node:assert/strict';
import { axisScale, barChart, shareBars } from '../../webview-ui/browser/charts.js';
import { isLiveEvent } from '../../webview-ui/browser/liveFeed.js';
import { periodsOf } from '../../webview-ui/statsView.js';
import { installDom } from '../support/dom.js';

describe('browser page pieces', () => {
  it('scales a count axis to round whole steps that reach the largest value', () => {
    assert.deepEqual(axisScale(0), { max: 1, step: 1 });
    assert.deepEqual(axisScale(4), { max: 4, step: 1 });
    assert.deepEqual(axisScale(37), { max: 40, step: 10 });
    assert.deepEqual(axisScale(41), { max: 50, step: 10 });
    assert.deepEqual(axisScale(913), { max: 1000, step: 200 });
  });

  it('counts by day over a short span and by week (from Monday) over a long one, gaps included', () => {
    const short = periodsOf(['2025-01-03', '2025-01-01']);
    assert.equal(short.unit, 'day');
    assert.deepEqual(short.keys, ['2025-01-01', '2025-01-02', '2025-01-03']);
    const long = periodsOf(['2025-01-01', '2025-06-30']);
    assert.equal(long.unit, 'week');
    assert.equal(long.keyOf('2025-01-01'), '2024-12-30', 'a Wednesday belongs to the week of Monday the 30th');
    assert.equal(long.keyOf('2025-01-05'), '2024-12-30', 'and so does the Sunday after');
    assert.equal(long.keys[0], '2024-12-30');
    assert.equal(long.keys.at(-1), '2025-06-30');
    assert.equal(long.keys.length, 27);
  });

  it('draws bars to scale with a tooltip each, and text only as text', () => {
    const dom = installDom();
    try {
      const chart = barChart(
        [
          { label: 'Jan 1', value: 2, title: '2 sessions' },
          { label: '<b>x</b>', value: 4, title: '<img src=x onerror=alert(1)>' },
        ],
        { label: 'Sessions per day' },
      );
      const bars = [...chart.querySelectorAll('rect.bar')];
      assert.deepEqual(
        bars.map((bar) => bar.querySelector('title')!.textContent),
        ['2 sessions', '<img src=x onerror=alert(1)>'],
      );
      assert.equal(Number(bars[1]!.getAttribute('height')), 2 * Number(bars[0]!.getAttribute('height')));
      assert.equal(chart.querySelectorAll('img, b').length, 0);
      const shares = shareBars([{ label: 'a-very-long-project-name-that-goes-on', total: 10, part: 5, title: 't' }], { label: 'p', describe: () => '10' });
      assert.equal(shares.querySelector('.share-label')!.textContent, 'a-very-long-project-n…');
    } finally {
      dom.remove();
    }
  });

  it('takes only the live events it knows', () => {
    assert.ok(isLiveEvent({ type: 'hello', running: [] }));
    assert.ok(!isLiveEvent({ type: 'surprise' }));
    assert.ok(!isLiveEvent('hello'));
    assert.ok(!isLiveEvent(null));
  });
});
