import { adapterFor } from '../agents/adapterRegistry.js';
import type { RunSettings } from '../config/runSettings.js';
import type { Forecast } from '../sessionFormat/forecast.js';
import type { SessionStore } from '../sessions/sessionStore.js';
import { projectName } from '../sessions/sessionSummary.js';
import { openStore } from './openStore.js';

/**
 * The forecast of a run with these settings in `workingDir`: its actor and critic as
 * the run would record them (the agents' display names, the models resolved), its
 * project as stats name it (the folder's name). What `forecast` and `run --dry-run`
 * share, so that both forecast the run that would really start.
 */
export function forecastForRun(settings: Pick<RunSettings, 'actor' | 'critic'>, workingDir: string, store: SessionStore = openStore()): Promise<Forecast> {
  const pair = {
    actor_agent: adapterFor(settings.actor.agent).displayName,
    critic_agent: adapterFor(settings.critic.agent).displayName,
    actor_model: settings.actor.model,
    critic_model: settings.critic.model,
  };
  return store.forecast(pair, projectName(workingDir));
}

/** The run's agents in words: `Claude Code (opus) and Claude Code`. */
export function pairText(settings: Pick<RunSettings, 'actor' | 'critic'>): string {
  const role = (of: RunSettings['actor']) => `${adapterFor(of.agent).displayName}${of.model ? ` (${of.model})` : ''}`;
  return `${role(settings.actor)} as actor, ${role(settings.critic)} as critic`;
}
