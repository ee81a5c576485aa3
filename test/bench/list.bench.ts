/**
 * `codeloops sessions list --json` as a whole process over 10,000 sessions, warm (with
 * the summary index the first run writes), against a process that parses every file;
 * and the same listing when no session is big, since its time must not grow with the
 * sessions' size.
 */
import fs from 'node:fs';
import { summaryIndexPath } from '../../src/sessions/summaryIndex.js';
import { assertEqual, CODELOOPS_CLI, median, runBenchmark, timedProcess } from './benchmark.js';
import { LIST_SESSIONS, listFixture } from './fixtures.js';

/** The baseline: what a reader without an index or the first/last-line trick does, parse every file whole. */
const FULL_PARSE_SCRIPT = `
const fs = require('fs'), path = require('path');
const dir = process.argv[1];
const summaries = fs.readdirSync(dir).map((name) => {
  const lines = fs.readFileSync(path.join(dir, name), 'utf8').split('\\n').filter(Boolean).map((line) => JSON.parse(line));
  return { id: name, start: lines[0].prompt, last: lines.at(-1).type };
});
process.stdout.write(JSON.stringify(summaries));
`;

runBenchmark(async () => {
  const list = (fixture: { dataHome: string; dir: string }) =>
    timedProcess([CODELOOPS_CLI, 'sessions', 'list', '--json'], { ...process.env, XDG_DATA_HOME: fixture.dataHome });
  const withBig = listFixture(true);
  const small = listFixture(false);
  for (const fixture of [withBig, small]) fs.rmSync(summaryIndexPath(fixture.dir), { force: true });
  const cold = list(withBig); // reads every file's first and last lines, and writes the index
  assertEqual((JSON.parse(cold.stdout) as unknown[]).length, LIST_SESSIONS, 'every session listed');
  list(small);
  // Taken in turns, so that the machine's speed drifting over these seconds moves both figures alike.
  const runs = { warm: [] as number[], warmSmall: [] as number[], baseline: [] as number[] };
  for (let round = 0; round < 7; round++) {
    runs.warm.push(list(withBig).ms);
    runs.warmSmall.push(list(small).ms);
    runs.baseline.push(timedProcess(['-e', FULL_PARSE_SCRIPT, withBig.dir]).ms);
  }
  const [warm, warmSmall, baseline] = [median(runs.warm), median(runs.warmSmall), median(runs.baseline)];
  const ratio = warm / baseline;
  return {
    name: `\`codeloops sessions list --json\` as a whole process, ${LIST_SESSIONS.toLocaleString('en-US')} sessions (1 % with 4 MB lines)`,
    ours: `${warm.toFixed(0)} ms warm (${warmSmall.toFixed(0)} ms when no session is big); ${cold.ms.toFixed(0)} ms the first time, building the index`,
    baseline: `a process parsing every file: ${baseline.toFixed(0)} ms`,
    ratio,
    // Three places: the goal sits at the second.
    ratioText: `${ratio.toFixed(3)}× the time`,
    goal: '≤ 300 ms warm, ≤ 0.15×, independent of session size',
    met: warm <= 300 && ratio <= 0.15 && Math.abs(warm - warmSmall) / warmSmall < 0.25,
  };
});
