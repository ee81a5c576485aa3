import { forecastSchema, type Forecast } from '../../sessionFormat/forecast.js';
import { readCliJson, type CliJsonOptions } from './cliJsonProcess.js';

/**
 * `codeloops forecast --json` in a folder: what a run there would take, for the actor
 * and critic the runner itself resolves from the folder's config and the editor's
 * settings. Undefined when it could not be had (the prompt box shows none then).
 */
export function runForecast(options: CliJsonOptions): Promise<Forecast | undefined> {
  return readCliJson(options, ['forecast', '--json'], (json) => forecastSchema.parse(json));
}
