import { EVAL_OUTCOMES, type EvalConfigResult, type EvalOutcome, type EvalResults } from '../sessionFormat/evalRecords.js';
import { evalTables, interval, OUTCOMES_NOTE, PAIRS_NOTE, percent, scopeNote, signedPoints, type EvalTable } from './evalText.js';

/**
 * An eval's results as one self-contained HTML file (`codeloops eval --html FILE`), to
 * open anywhere or attach to a pull request: the configs side by side in tables and
 * charts, each pair compared, every run. It renders the one value `--json` prints, as
 * the Markdown does. The page asks for nothing (its policy allows no script, no font,
 * no image, no request: only its own inline style), and every name in it (the suite's,
 * its tasks' and configs', sessions') is escaped, so a name is always shown as text.
 */

/** Only the page's own `<style>`: anything else the page could load or run is refused. */
export const EVAL_REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

const OUTCOME_WORDS: Record<EvalOutcome, string> = {
  accepted: 'accepted',
  false_done: 'false DONE',
  false_continue: 'false CONTINUE',
  failed: 'failed',
};

const BAR_WIDTH = 360;
const BAR_HEIGHT = 18;

/** A report as one self-contained page under `EVAL_REPORT_CSP` (the queue's report is one too): its title escaped here, its body as given. */
export function reportPage(title: string, style: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${EVAL_REPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

export function renderEvalHtml(results: EvalResults): string {
  const title = `Eval ${results.suite} (${results.eval_id})`;
  return reportPage(
    title,
    STYLE,
    `<h1>Eval <span class="suite">${escapeHtml(results.suite)}</span> <small>${escapeHtml(results.eval_id)}</small></h1>
${scopeSection(results)}${outcomesChart(results)}
${acceptedRateChart(results.configs)}
${configsTable(results)}
${pairsSection(results)}
${runsTable(results)}`,
  );
}

/** A shard's share, or the runs missing: said before any figure, which does not count them. */
function scopeSection(results: EvalResults): string {
  const scope = scopeNote(results);
  if (!scope) return '';
  const missing = scope.missing.length > 0 ? `<ul class="missing">${scope.missing.map((run) => `<li>${escapeHtml(run)}</li>`).join('')}</ul>` : '';
  return `<section class="scope${results.complete ? '' : ' incomplete'}"><p><strong>${escapeHtml(scope.headline)}</strong></p>${missing}</section>\n`;
}

/** A stacked bar per config: how many of its runs ended each way. */
function outcomesChart(results: EvalResults): string {
  const legend = EVAL_OUTCOMES.map((outcome) => `<span class="key outcome-${outcome}"></span>${OUTCOME_WORDS[outcome]}`).join(' ');
  const rows = results.configs.map((config) => {
    const runs = results.runs.filter((run) => run.config === config.name);
    let x = 0;
    const segments = EVAL_OUTCOMES.map((outcome) => {
      const count = runs.filter((run) => run.outcome === outcome).length;
      if (count === 0) return '';
      const width = (count / runs.length) * BAR_WIDTH;
      const segment = `<rect class="outcome-${outcome}" data-outcome="${outcome}" data-count="${count}" x="${x.toFixed(1)}" y="0" width="${width.toFixed(1)}" height="${BAR_HEIGHT}"><title>${OUTCOME_WORDS[outcome]}: ${count} of ${runs.length}</title></rect>`;
      x += width;
      return segment;
    }).join('');
    const counts = EVAL_OUTCOMES.map((outcome) => `${OUTCOME_WORDS[outcome]} ${runs.filter((run) => run.outcome === outcome).length}`).join(' · ');
    return chartRow(config.name, 'outcomes', svg(segments || emptyBar()), counts);
  });
  return `<section><h2>Outcomes</h2><p class="legend">${legend}</p>${chartTable(rows)}</section>`;
}

/** The accepted rate as a bar, its Wilson 95 % interval as an error bar over it. */
function acceptedRateChart(configs: readonly EvalConfigResult[]): string {
  const rows = configs.map((config) => {
    const rate = config.accepted_rate;
    const bar = rate === null ? emptyBar() : `<rect class="rate" x="0" y="3" width="${(rate * BAR_WIDTH).toFixed(1)}" height="${BAR_HEIGHT - 6}"></rect>`;
    const range = config.accepted_rate_interval;
    const errorBar = range ? errorBarOf(range[0] * BAR_WIDTH, range[1] * BAR_WIDTH) : '';
    return chartRow(config.name, 'accepted-rate', svg(track() + bar + errorBar), `${percent(rate)} (${interval(range)})`);
  });
  return `<section><h2>Accepted rate, with its 95 % interval</h2>${chartTable(rows)}</section>`;
}

function pairsSection(results: EvalResults): string {
  if (results.pairs.length === 0) return '';
  // The difference runs from −100 to +100 points; 0, where the two cannot be told apart, in the middle.
  const at = (value: number) => ((value + 1) / 2) * BAR_WIDTH;
  const rows = results.pairs.map((pair) => {
    const zero = `<line class="zero" x1="${at(0)}" x2="${at(0)}" y1="0" y2="${BAR_HEIGHT}"></line>`;
    const range = pair.interval ? errorBarOf(at(pair.interval[0]), at(pair.interval[1])) : '';
    const point =
      pair.accepted_rate_difference === null
        ? ''
        : `<circle class="difference" cx="${at(pair.accepted_rate_difference).toFixed(1)}" cy="${BAR_HEIGHT / 2}" r="4"></circle>`;
    const label = `${escapeHtml(pair.a)} <span class="minus">−</span> ${escapeHtml(pair.b)}`;
    return `<tr class="pair"><th>${label}</th><td>${svg(track() + zero + range + point)}</td><td>${escapeHtml(
      `${signedPoints(pair.accepted_rate_difference)} (${interval(pair.interval, true)})`,
    )}</td></tr>`;
  });
  return `<section><h2>Accepted rate, a − b</h2>${chartTable(rows)}${tableOf(evalTables(results).pairs, 'pairs')}<p>${PAIRS_NOTE}</p></section>`;
}

function configsTable(results: EvalResults): string {
  return `<section><h2>Configs</h2>${tableOf(evalTables(results).configs, 'configs')}<p>${OUTCOMES_NOTE}</p></section>`;
}

function runsTable(results: EvalResults): string {
  return `<section><h2>Runs</h2>${tableOf(evalTables(results).runs, 'runs')}</section>`;
}

function chartRow(name: string, chart: string, picture: string, value: string): string {
  return `<tr class="${chart}"><th>${escapeHtml(name)}</th><td>${picture}</td><td>${escapeHtml(value)}</td></tr>`;
}

function chartTable(rows: readonly string[]): string {
  return `<table class="chart"><tbody>${rows.join('')}</tbody></table>`;
}

function svg(content: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${BAR_WIDTH}" height="${BAR_HEIGHT}" viewBox="0 0 ${BAR_WIDTH} ${BAR_HEIGHT}" role="img">${content}</svg>`;
}

function emptyBar(): string {
  return `<rect class="empty" x="0" y="0" width="${BAR_WIDTH}" height="${BAR_HEIGHT}"></rect>`;
}

/** The whole scale behind a bar or an interval, so that its length reads against it. */
function track(): string {
  return `<rect class="track" x="0" y="3" width="${BAR_WIDTH}" height="${BAR_HEIGHT - 6}"></rect>`;
}

/** A horizontal line from low to high with a cap at each end. */
function errorBarOf(low: number, high: number): string {
  const mid = BAR_HEIGHT / 2;
  return `<g class="interval"><line x1="${low.toFixed(1)}" x2="${high.toFixed(1)}" y1="${mid}" y2="${mid}"></line><line x1="${low.toFixed(1)}" x2="${low.toFixed(1)}" y1="2" y2="${BAR_HEIGHT - 2}"></line><line x1="${high.toFixed(1)}" x2="${high.toFixed(1)}" y1="2" y2="${BAR_HEIGHT - 2}"></line></g>`;
}

function tableOf({ headers, rows }: EvalTable, name: string): string {
  const head = headers.map((header) => `<th>${escapeHtml(header)}</th>`).join('');
  const body = rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join('')}</tr>`).join('');
  return `<table class="${name}"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** Text as HTML shows it, in an element or a quoted attribute alike. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

const STYLE = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --accepted: #1a7f37; --false_done: #cf222e; --false_continue: #bf8700; --failed: #818b98; --rate: #54aeff; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --rate: #1f6feb; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); margin: 2rem auto; max-width: 72rem; padding: 0 1rem; }
h1 small { color: var(--muted); font-weight: normal; font-size: 0.6em; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; }
th, td { padding: 0.25rem 0.6rem; text-align: left; border-bottom: 1px solid var(--line); vertical-align: middle; }
table.chart th { max-width: 18rem; overflow-wrap: anywhere; font-weight: 600; }
table.chart td:last-child, p { color: var(--muted); }
svg { display: block; overflow: visible; }
.empty { fill: none; stroke: var(--line); }
.track { fill: var(--line); opacity: 0.45; }
.rate { fill: var(--rate); }
.scope { border-left: 4px solid var(--line); padding: 0.1rem 0.8rem; }
.scope.incomplete { border-color: var(--false_continue); }
.scope.incomplete p { color: var(--fg); }
.interval line, .zero { stroke: var(--fg); stroke-width: 1.5; }
.zero { stroke: var(--muted); stroke-dasharray: 3 3; }
.difference { fill: var(--fg); }
.key { display: inline-block; width: 0.8em; height: 0.8em; margin: 0 0.3em 0 0.8em; vertical-align: -0.05em; }
${EVAL_OUTCOMES.map((outcome) => `.outcome-${outcome} { fill: var(--${outcome}); background: var(--${outcome}); }`).join('\n')}
`;
