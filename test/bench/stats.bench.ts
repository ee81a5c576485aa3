/**
 * `codeloops sessions stats --json` as a whole process over the 10,000 sessions of the
 * listing benchmark, warm (from the summary index, which keeps what stats need of each
 * session's middle lines), against `sessions list --json` in the same run: stats must
 * cost little more than the listing it is built on.
 */
import fs from 'node:fs';
import { sessionStatsSchema } from '../../src/sessionFormat/sessionSummaries.js';
import { summaryIndexPath } from '../../src/sessions/summaryIndex.js';
import { assertEqual, CODELOOPS_CLI, median, runBenchmark, timedProcess } from './benchmark.js';
import { LIST_SESSIONS, listFixture } from './fixtures.js';

runBenchmark(async () => {
  const fixture = listFixture(true);
  const env = { ...process.env, XDG_DATA_HOME: fixture.dataHome };
  const run = (command: string) => timedProcess([CODELOOPS_CLI, 'sessions', command, '--json'], env);
  fs.rmSync(summaryIndexPath(fixture.dir), { force: true });
  const cold = run('stats'); // reads every file once, and writes the index
  const stats = sessionStatsSchema.parse(JSON.parse(cold.stdout));
  assertEqual(stats.total_sessions, LIST_SESSIONS, 'every session counted');
  assertEqual(stats.total_tasks, LIST_SESSIONS, 'each its own task');
  // Taken in turns, so that the machine's speed drifting over these seconds moves both figures alike.
  const runs = { stats: [] as number[], list: [] as number[] };
  for (let round = 0; round < 7; round++) {
    runs.stats.push(run('stats').ms);
    runs.list.push(run('list').ms);
  }
  const [warm, list] = [median(runs.stats), median(runs.list)];
  const ratio = warm / list;
  return {
    name: `\`codeloops sessions stats --json\` as a whole process, ${LIST_SESSIONS.toLocaleString('en-US')} sessions (1 % with 4 MB lines)`,
    ours: `${warm.toFixed(0)} ms warm; ${cold.ms.toFixed(0)} ms the first time, building the index (every file read once)`,
    baseline: `\`sessions list --json\` in the same run: ${list.toFixed(0)} ms`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 1.5×',
    met: ratio <= 1.5,
  };
});
