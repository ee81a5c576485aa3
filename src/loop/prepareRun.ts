import { adapterFor } from '../agents/adapterRegistry.js';
import { resolveAgentProgram } from '../agents/agentProgram.js';
import { loadRunSettings, type ConfigLayer, type FlagOverrides, type RoleSettings, type RunSettings } from '../config/runSettings.js';
import { realFolderOf } from '../files/regularFile.js';
import { openRepository, type Repository } from '../git/repository.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';
import type { RoleLaunch } from './loopRequest.js';

export interface PreparedRun {
  workingDir: string;
  repository: Repository;
  settings: RunSettings;
  actor: RoleLaunch;
  critic: RoleLaunch;
}

export interface PrepareOptions {
  workingDir: string;
  flags?: FlagOverrides;
  userLayers?: ConfigLayer[];
  recordedLayer?: ConfigLayer;
  trust?: boolean;
  env?: Environment;
}

/**
 * Everything that can be checked before a loop starts is checked here, so that a
 * bad config, a missing agent or a folder that is not a repository fails at once
 * with a clear message and writes no session.
 */
export async function prepareRun(options: PrepareOptions): Promise<PreparedRun> {
  const { workingDir, repository, settings } = await resolveRunSettings(options);
  return {
    workingDir,
    repository,
    settings,
    actor: roleLaunch(settings.actor, workingDir, options.env),
    critic: roleLaunch(settings.critic, workingDir, options.env),
  };
}

/** The settings a run in `workingDir` would have (its repository, its config files, the layers and flags given), its agents not yet looked for. */
export async function resolveRunSettings(options: PrepareOptions): Promise<Pick<PreparedRun, 'workingDir' | 'repository' | 'settings'>> {
  // Read through its links, as git names the repository's top: paths from the top to it (its checks', its config's) hold.
  const workingDir = realFolderOf(options.workingDir);
  const repository = await openRepository(workingDir);
  const settings = loadRunSettings({
    workingDir,
    repositoryRoot: repository.root,
    env: options.env,
    flags: options.flags,
    userLayers: options.userLayers,
    recordedLayer: options.recordedLayer,
    trust: options.trust,
  });
  return { workingDir, repository, settings };
}

function roleLaunch(role: RoleSettings, workingDir: string, env: Environment | undefined): RoleLaunch {
  const adapter = adapterFor(role.agent);
  return {
    model: role.model,
    launch: {
      adapter,
      program: resolveAgentProgram(adapter, role, workingDir, env),
      extraArgs: role.extraArgs,
      env: role.env,
      workingDir,
      timeoutSecs: role.timeoutSecs,
    },
  };
}
