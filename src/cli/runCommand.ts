import path from 'node:path';
import { driveLoop } from './driveLoop.js';
import { printRunPlan } from './dryRunPlan.js';
import { forecastForRun } from './runForecast.js';
import { prepareOrRefuse, readPrompt, type RunOptions } from './runSetup.js';

/**
 * `codeloops run`: checks everything first, then runs the loop, printing progress
 * on stderr and, with --json-output, one JSON object on stdout (or, with
 * --events ndjson, every run event as a JSON line on stdout). With --candidates or
 * --parallel, `codeloops run` is `candidateRunCommand.ts` instead (`main.ts` chooses).
 */
export async function runCommand(options: RunOptions): Promise<number> {
  const workingDir = path.resolve(options.workingDir ?? process.cwd());
  const { prompt, prepared } = await prepareOrRefuse(options, async (prepareAsking) => {
    const prompt = readPrompt(options, workingDir);
    return { prompt, prepared: await prepareAsking({ workingDir, flags: options }) };
  });
  if (options.dryRun) return printRunPlan(options, prepared, prompt, await forecastForRun(prepared.settings, prepared.workingDir));
  return driveLoop(options, { prompt, prepared });
}
