/**
 * Small hand-made SVG charts: bars over time, a rate over time, a histogram and
 * horizontal bars. Colours come from the stylesheet (classes), text from text nodes,
 * tooltips from <title>: no library, no inline style, nothing parsed as markup.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 240;
const MARGIN = { top: 14, right: 14, bottom: 30, left: 44 };

type SvgChild = SVGElement | string | null;

export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number> = {},
  ...children: SvgChild[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) {
    if (child === null) continue;
    element.appendChild(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return element;
}

function chartFrame(label: string, width = WIDTH, height = HEIGHT): SVGSVGElement {
  return svg(
    'svg',
    { class: 'chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label, preserveAspectRatio: 'xMidYMid meet' },
    svg('title', {}, label),
  );
}

/**
 * A value axis from 0: a round step (1, 2, 5, 10, 20…; whole numbers for counts) and
 * as many steps (at most five) as reach the largest value.
 */
export function axisScale(maxValue: number): { max: number; step: number } {
  if (maxValue <= 0) return { max: 1, step: 1 };
  const rough = maxValue / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= rough) ?? 10 * magnitude);
  return { max: Math.ceil(maxValue / step) * step, step };
}

/** Indexes of at most `count` labels spread along an axis, always the first and the last. */
function labelIndexes(length: number, count: number): Set<number> {
  if (length <= count) return new Set(Array.from({ length }, (_, index) => index));
  const step = (length - 1) / (count - 1);
  return new Set(Array.from({ length: count }, (_, index) => Math.round(index * step)));
}

function yAxis(max: number, step: number, plotHeight: number, format: (value: number) => string): SVGElement {
  const group = svg('g', { class: 'axis axis-y' });
  for (let value = 0; value <= max + step / 1000; value += step) {
    const y = MARGIN.top + plotHeight * (1 - value / max);
    group.appendChild(svg('line', { class: 'grid', x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y.toFixed(1), y2: y.toFixed(1) }));
    group.appendChild(svg('text', { x: MARGIN.left - 6, y: (y + 4).toFixed(1), 'text-anchor': 'end' }, format(value)));
  }
  return group;
}

export interface BarDatum {
  label: string;
  value: number;
  /** The tooltip. */
  title: string;
}

/** Vertical bars along a category or time axis. */
export function barChart(data: readonly BarDatum[], options: { label: string; barClass?: string; format?: (value: number) => string }): SVGSVGElement {
  const root = chartFrame(options.label);
  const format = options.format ?? ((value: number) => value.toLocaleString('en-US'));
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const { max, step } = axisScale(Math.max(0, ...data.map((datum) => datum.value)));
  root.appendChild(yAxis(max, step, plotHeight, format));
  const slot = plotWidth / Math.max(1, data.length);
  const barWidth = Math.max(1, slot * 0.75);
  const labels = labelIndexes(data.length, 8);
  const bars = svg('g', { class: 'bars' });
  const xAxis = svg('g', { class: 'axis axis-x' });
  data.forEach((datum, index) => {
    const height = (datum.value / max) * plotHeight;
    const x = MARGIN.left + index * slot + (slot - barWidth) / 2;
    bars.appendChild(
      svg(
        'rect',
        {
          class: `bar ${options.barClass ?? ''}`.trim(),
          x: x.toFixed(1),
          y: (MARGIN.top + plotHeight - height).toFixed(1),
          width: barWidth.toFixed(1),
          height: height.toFixed(1),
        },
        svg('title', {}, datum.title),
      ),
    );
    if (labels.has(index)) xAxis.appendChild(svg('text', { x: (x + barWidth / 2).toFixed(1), y: HEIGHT - 10, 'text-anchor': 'middle' }, datum.label));
  });
  root.append(bars, xAxis);
  return root;
}

/** A rate (0 to 1) over time: a line with a dot per period. */
export function rateChart(data: readonly BarDatum[], options: { label: string }): SVGSVGElement {
  const root = chartFrame(options.label);
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  root.appendChild(yAxis(1, 0.25, plotHeight, (value) => `${Math.round(value * 100)}%`));
  const step = data.length > 1 ? plotWidth / (data.length - 1) : 0;
  const point = (index: number, value: number): [number, number] => [
    MARGIN.left + (data.length > 1 ? index * step : plotWidth / 2),
    MARGIN.top + plotHeight * (1 - value),
  ];
  const path = data
    .map((datum, index) => point(index, datum.value))
    .map(([x, y], index) => `${index === 0 ? 'M' : 'L'}${x.toFixed(1)},${y.toFixed(1)}`)
    .join(' ');
  if (data.length > 1) root.appendChild(svg('path', { class: 'rate-line', d: path }));
  const dots = svg('g', { class: 'rate-dots' });
  const labels = labelIndexes(data.length, 8);
  const xAxis = svg('g', { class: 'axis axis-x' });
  data.forEach((datum, index) => {
    const [x, y] = point(index, datum.value);
    dots.appendChild(svg('circle', { class: 'rate-dot', cx: x.toFixed(1), cy: y.toFixed(1), r: data.length > 60 ? 2 : 3.5 }, svg('title', {}, datum.title)));
    if (labels.has(index)) xAxis.appendChild(svg('text', { x: x.toFixed(1), y: HEIGHT - 10, 'text-anchor': 'middle' }, datum.label));
  });
  root.append(dots, xAxis);
  return root;
}

export interface ShareRow {
  label: string;
  total: number;
  /** The highlighted part of the total (successes). */
  part: number;
  title: string;
}

/** One horizontal bar per row: its length the total, the highlighted part inside it. */
export function shareBars(rows: readonly ShareRow[], options: { label: string; describe: (row: ShareRow) => string }): SVGSVGElement {
  const rowHeight = 26;
  const labelWidth = 150;
  const textWidth = 120;
  const height = Math.max(40, rows.length * rowHeight + 8);
  const root = chartFrame(options.label, WIDTH, height);
  const max = Math.max(1, ...rows.map((row) => row.total));
  const plotWidth = WIDTH - labelWidth - textWidth - 12;
  rows.forEach((row, index) => {
    const y = 4 + index * rowHeight;
    const total = (row.total / max) * plotWidth;
    const part = (row.part / max) * plotWidth;
    root.appendChild(
      svg(
        'g',
        { class: 'share-row' },
        svg('title', {}, row.title),
        svg('text', { class: 'share-label', x: labelWidth - 8, y: y + 16, 'text-anchor': 'end' }, shorten(row.label, 22)),
        svg('rect', { class: 'share-total', x: labelWidth, y: y + 3, width: Math.max(1, total).toFixed(1), height: rowHeight - 8, rx: 2 }),
        svg('rect', { class: 'share-part', x: labelWidth, y: y + 3, width: part.toFixed(1), height: rowHeight - 8, rx: 2 }),
        svg('text', { class: 'share-value', x: labelWidth + total + 6, y: y + 16 }, options.describe(row)),
      ),
    );
  });
  return root;
}

function shorten(text: string, max: number): string {
  const characters = [...text];
  return characters.length <= max ? text : `${characters.slice(0, max - 1).join('')}…`;
}
