import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { adapterFor } from '../agents/adapterRegistry.js';
import type { AgentAdapter } from '../agents/agentAdapter.js';
import type { AgentKind } from '../agents/agentKinds.js';
import { lookUpAgentProgram } from '../agents/agentProgram.js';
import { agentEnvironment } from '../agents/runAgent.js';
import { globalConfigPath } from '../config/configFiles.js';
import { ProjectUntrustedError } from '../config/projectTrust.js';
import { loadRunSettings, type ConfigLayer, type FlagOverrides, type Role, type RoleSettings } from '../config/runSettings.js';
import { openRepository } from '../git/repository.js';
import { signalGroup } from '../process/processGroup.js';
import type { AgentCheck, AgentProblem, DoctorReport } from '../sessionFormat/doctorReport.js';
import { isCodeloopsError } from '../sessionFormat/failures.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';

/** How long `<program> --version` may take (Gemini CLI starts Node twice: about two seconds). */
const VERSION_TIMEOUT_MS = 15_000;

export interface DoctorOptions {
  workingDir: string;
  flags?: Pick<FlagOverrides, 'agent' | 'actorAgent' | 'criticAgent'>;
  userLayers?: ConfigLayer[];
  env?: Environment;
  /** Whether this process runs as root (default: asked of the OS). */
  isRoot?: boolean;
}

/**
 * `codeloops doctor`: the agents a run in `workingDir` would use, from the same
 * config resolution a run uses, each checked as far as is cheap: its program found,
 * its version (`--version`), whether that version is one its adapter was tested with,
 * credentials where they can be seen, and Claude Code's rule about root. Never runs
 * a program a project's codeloops.toml names (the `command` agent): only the
 * agents' own binaries, which a project cannot choose.
 */
export async function checkAgents(options: DoctorOptions): Promise<DoctorReport> {
  const workingDir = path.resolve(options.workingDir);
  const env = options.env ?? process.env;
  const problems: AgentProblem[] = [];
  const repositoryRoot = await openRepository(workingDir).then(
    (repository) => repository.root,
    () => undefined, // not a repository: the config is still read from the folder
  );
  const load = (trust: boolean) => loadRunSettings({ workingDir, repositoryRoot, env, flags: options.flags, userLayers: options.userLayers, trust });
  let settings;
  try {
    try {
      settings = load(false);
    } catch (error) {
      if (!(error instanceof ProjectUntrustedError)) throw error;
      problems.push({
        code: 'project_untrusted',
        severity: 'error',
        message: error.message,
        fix: 'trust it with "codeloops trust" once you have read what it runs (the editor trusts it with the workspace)',
      });
      settings = load(true);
    }
  } catch (error) {
    if (!isCodeloopsError(error) || error.code !== 'config_invalid') throw error;
    problems.push({ code: 'config_invalid', severity: 'error', message: error.message, fix: 'correct the file and key it names' });
    return { ok: false, working_dir: workingDir, config_files: [], global_config: globalConfigPath(env), agents: [], problems };
  }
  const roles: Role[] = settings.actor.agent === settings.critic.agent && sameProgram(settings.actor, settings.critic) ? ['actor'] : ['actor', 'critic'];
  const agents = await Promise.all(
    roles.map((role) =>
      checkRole(settings[role], roles.length === 1 ? ['actor', 'critic'] : [role], workingDir, env, options.isRoot ?? process.getuid?.() === 0),
    ),
  );
  const ok = [...problems, ...agents.flatMap((agent) => agent.problems)].every((problem) => problem.severity !== 'error');
  // The files, not the layers that are not files (flags, the editor's settings).
  const configFiles = settings.sources.filter((source) => path.isAbsolute(source));
  return { ok, working_dir: workingDir, config_files: configFiles, global_config: globalConfigPath(env), agents, problems };
}

function sameProgram(a: RoleSettings, b: RoleSettings): boolean {
  return a.binaryPath === b.binaryPath && JSON.stringify(a.command) === JSON.stringify(b.command) && JSON.stringify(a.env) === JSON.stringify(b.env);
}

async function checkRole(settings: RoleSettings, roles: Role[], workingDir: string, env: Environment, isRoot: boolean): Promise<AgentCheck> {
  const adapter = adapterFor(settings.agent);
  const check: AgentCheck = {
    agent: adapter.kind,
    display_name: adapter.displayName,
    roles,
    program: null,
    setting: settings.binarySetting,
    version: null,
    version_output: null,
    tested_versions: [...adapter.testedVersions],
    tested: null,
    problems: [],
  };
  const globalConfig = globalConfigPath(env);
  const lookup = lookUpAgentProgram(adapter, settings, workingDir, env, globalConfig);
  if (!lookup.found) {
    check.problems.push({ code: lookup.problem, severity: 'error', message: `${lookup.summary}.`, fix: lookup.fix });
    return check;
  }
  check.program = lookup.program.program;
  // What the agent will see: this environment with the config's variables for it.
  const agentEnv = agentEnvironment(definedOnly(env), settings.env);
  if (adapter.kind !== 'command') await checkVersion(check, adapter, lookup.program.program, agentEnv, workingDir);
  const login = LOGIN_CHECKS[adapter.kind]?.(agentEnv, workingDir, globalConfig);
  if (login) check.problems.push({ code: 'not_logged_in', severity: 'error', ...login });
  if (adapter.kind === 'claude' && isRoot && !agentEnv.IS_SANDBOX) {
    check.problems.push({
      code: 'root_needs_sandbox',
      severity: 'error',
      message: 'Running as root, Claude Code refuses to skip permission prompts (which a loop needs) unless IS_SANDBOX is set.',
      fix: `on a disposable machine, set IS_SANDBOX = "1" under [agents.claude.env] in ${globalConfig}; otherwise run codeloops as a normal user`,
    });
  }
  return check;
}

function definedOnly(env: Environment): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

async function checkVersion(check: AgentCheck, adapter: AgentAdapter, program: string, env: Record<string, string>, workingDir: string): Promise<void> {
  const child = execa(program, ['--version'], {
    cwd: workingDir,
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: VERSION_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    // In a group of its own, like an agent: a CLI that relaunched itself leaves no child behind when stopped.
    detached: process.platform !== 'win32',
    cleanup: true,
    windowsHide: true,
  });
  const result = await child;
  if (result.timedOut && child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
  const output = `${String(result.stdout ?? '')}\n${String(result.stderr ?? '')}`.trim();
  check.version_output = output.split('\n')[0]?.trim() || null;
  const version = /\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?/.exec(String(result.stdout ?? ''))?.[0] ?? null;
  if (result.timedOut || result.exitCode !== 0 || !version) {
    const why = result.timedOut
      ? `did not answer within ${VERSION_TIMEOUT_MS / 1000} s`
      : result.exitCode !== 0
        ? `failed (${result.exitCode === undefined ? (result.originalMessage ?? 'could not start') : `exit ${result.exitCode}`})`
        : 'printed no version';
    check.problems.push({
      code: 'no_version',
      severity: 'error',
      message: `"${program} --version" ${why}${check.version_output ? `: ${check.version_output}` : ''}.`,
      fix: `run "${program} --version" yourself to see what is wrong; reinstall it (${adapter.installHint}) if it is broken`,
    });
    return;
  }
  check.version = version;
  check.tested = adapter.testedVersions.includes(version);
  if (!check.tested) {
    const tested = adapter.testedVersions;
    check.problems.push({
      code: 'untested_version',
      severity: 'warning',
      message:
        tested.length > 0
          ? `${adapter.displayName} ${version} is not a version codeloops was tested with (${tested.join(', ')}).`
          : `No version of ${adapter.displayName} could be tested here; codeloops reads its documented output.`,
      fix:
        tested.length > 0
          ? `it will likely work; if runs fail, install a tested one (${installAt(adapter, tested.at(-1)!)}) and tell us`
          : 'if runs fail, run the loop with --events ndjson and report what it printed',
    });
  }
}

function installAt(adapter: AgentAdapter, version: string): string {
  return adapter.installHint.startsWith('npm install -g ') ? `${adapter.installHint}@${version}` : `version ${version}`;
}

type LoginCheck = (env: Record<string, string>, workingDir: string, globalConfig: string) => { message: string; fix: string } | null;

const anySet = (env: Record<string, string>, names: readonly string[]) => names.some((name) => (env[name] ?? '') !== '');
const homeOf = (env: Record<string, string>) => env.HOME || os.homedir();

/**
 * Credentials, only where they can be seen cheaply and surely: an environment
 * variable or the file the CLI keeps its login in. Where a login may live somewhere
 * this cannot see (macOS's keychain, a custom provider, a .env file), nothing is said;
 * an agent whose logins cannot be seen at all says why it has `null`. A new agent must
 * say which (an agent missing here is a type error).
 */
export const LOGIN_CHECKS: Readonly<Record<AgentKind, LoginCheck | null>> = {
  claude(env, _workingDir, globalConfig) {
    if (anySet(env, ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN', 'CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX'])) return null;
    if (process.platform === 'darwin') return null; // the login is in the keychain
    const configDir = env.CLAUDE_CONFIG_DIR || path.join(homeOf(env), '.claude');
    if (fs.existsSync(path.join(configDir, '.credentials.json'))) return null;
    if (readText(path.join(configDir, 'settings.json')).includes('apiKeyHelper')) return null;
    return {
      message: `Claude Code has no login: no ${path.join(configDir, '.credentials.json')} and no ANTHROPIC_API_KEY.`,
      fix: `run "claude" once and log in (/login), or set ANTHROPIC_API_KEY under [agents.claude.env] in ${globalConfig}`,
    };
  },
  codex(env, _workingDir, globalConfig) {
    if (anySet(env, ['OPENAI_API_KEY', 'CODEX_API_KEY'])) return null;
    const home = env.CODEX_HOME || path.join(homeOf(env), '.codex');
    if (fs.existsSync(path.join(home, 'auth.json'))) return null;
    // Another provider brings its own key (its env_key): not this check's business.
    const provider = /^\s*model_provider\s*=\s*"([^"]*)"/m.exec(readText(path.join(home, 'config.toml')))?.[1];
    if (provider && provider !== 'openai') return null;
    return {
      message: `Codex has no login: no ${path.join(home, 'auth.json')} and no OPENAI_API_KEY.`,
      fix: `run "codex login", or set OPENAI_API_KEY under [agents.codex.env] in ${globalConfig}`,
    };
  },
  gemini(env, workingDir, globalConfig) {
    if (anySet(env, ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_GENAI_USE_VERTEXAI', 'GOOGLE_GENAI_USE_GCA', 'GOOGLE_APPLICATION_CREDENTIALS'])) return null;
    const geminiDir = path.join(env.GEMINI_CLI_HOME || homeOf(env), '.gemini');
    if (fs.existsSync(path.join(geminiDir, 'oauth_creds.json'))) return null;
    // Gemini CLI also reads keys from .env files (the project's, its own folder's).
    if (fs.existsSync(path.join(geminiDir, '.env')) || fs.existsSync(path.join(workingDir, '.env'))) return null;
    return {
      message: `Gemini CLI has no login: no ${path.join(geminiDir, 'oauth_creds.json')} and no GEMINI_API_KEY.`,
      fix: `run "gemini" once and sign in, or set GEMINI_API_KEY under [agents.gemini.env] in ${globalConfig}`,
    };
  },
  // Any of its many providers, each with its own key variable, config or login.
  opencode: null,
  // Where `cursor-agent login` keeps it is not known: no version of it runs here.
  cursor: null,
  // The user's own program.
  command: null,
};

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
