import path from 'node:path';
import type { FlagOverrides } from '../config/runSettings.js';
import { resolveRunSettings } from '../loop/prepareRun.js';
import { budgetSuggestion, forecastBasisText, forecastLine, forecastRows } from '../sessionFormat/forecast.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { forecastForRun, pairText } from './runForecast.js';
import { userLayersOf } from './runSetup.js';
import { printAnswer } from './answers.js';

export interface ForecastOptions extends Pick<FlagOverrides, 'agent' | 'actorAgent' | 'criticAgent' | 'model' | 'actorModel' | 'criticModel' | 'maxCost'> {
  /** Taken as run takes them, so that a run's command line forecasts as it is; the forecast does not depend on the task's words. */
  prompt?: string;
  promptFile?: string;
  workingDir?: string;
  json?: boolean;
  editorSettings?: string;
}

/**
 * `codeloops forecast`: what a run here would take (iterations, cost, duration), from
 * past tasks with the actor and critic the run would use, resolved by the run's own
 * code from the same config files, editor settings and flags. Nothing is run: the
 * project file is read as if trusted, since none of its commands is started.
 */
export async function forecastCommand(options: ForecastOptions): Promise<number> {
  const flags: FlagOverrides = {
    agent: options.agent,
    actorAgent: options.actorAgent,
    criticAgent: options.criticAgent,
    model: options.model,
    actorModel: options.actorModel,
    criticModel: options.criticModel,
    maxCost: options.maxCost,
  };
  const { workingDir, settings } = await resolveRunSettings({
    workingDir: path.resolve(options.workingDir ?? process.cwd()),
    flags,
    userLayers: userLayersOf(options),
    trust: true,
  });
  const forecast = await forecastForRun(settings, workingDir);
  if (options.json) {
    printAnswer('forecast', forecast);
    return 0;
  }
  const heading = `Forecast for ${pairText(settings)} in ${path.basename(workingDir)}`;
  const lines =
    forecast.scope === 'none'
      ? [forecastLine(forecast)]
      : [`From ${forecastBasisText(forecast)}:`, ...forecastRows(forecast).map(([label, value]) => `  ${label.padEnd(11)} ${value}`)];
  const suggestion = budgetSuggestion(forecast, settings.budget.maxCostUsd);
  process.stdout.write(sanitizeForTerminal([heading, ...lines, ...(suggestion ? [`No budget is set. Suggested: ${suggestion}.`] : [])].join('\n')) + '\n');
  return 0;
}
