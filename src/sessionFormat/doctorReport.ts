import * as z from './zod.js';

/**
 * What `codeloops doctor` finds about the agents a run would use, as
 * `codeloops doctor --json` prints it and the editor reads it when a run is refused
 * for an agent's sake. Problem codes are stable; messages and fixes may be reworded.
 */

export const AGENT_PROBLEMS = [
  /** The program is not on PATH, or a configured path does not exist. */
  'not_found',
  /** The program exists but cannot be run (not executable, a folder). */
  'not_executable',
  /** The `command` agent has no program configured. */
  'no_command',
  /** `<program> --version` failed or did not answer in time. */
  'no_version',
  /** The version is not one the adapter was tested with (a warning: it may well work). */
  'untested_version',
  /** No credentials the agent could use were found. */
  'not_logged_in',
  /** Running as root, Claude Code refuses to skip permission prompts unless IS_SANDBOX is set. */
  'root_needs_sandbox',
  /** The project's codeloops.toml names programs and is not trusted: a run would be refused. */
  'project_untrusted',
  /** A config file cannot be read or has a wrong value. */
  'config_invalid',
] as const;
export type AgentProblemCode = (typeof AGENT_PROBLEMS)[number];

export const agentProblemSchema = z.object({
  code: z.enum(AGENT_PROBLEMS),
  /** `error`: a run would fail or be refused; `warning`: worth knowing. */
  severity: z.enum(['error', 'warning']),
  message: z.string(),
  /** What to do about it, in one line. */
  fix: z.string(),
});
export type AgentProblem = z.infer<typeof agentProblemSchema>;

export const agentCheckSchema = z.object({
  agent: z.string(),
  display_name: z.string(),
  /** The roles that use it (one entry when actor and critic use the same program). */
  roles: z.array(z.enum(['actor', 'critic'])),
  /** The program found (an absolute path), or null. */
  program: z.nullable(z.string()),
  /** The setting that names it, or where it is looked up. */
  setting: z.string(),
  /** The version from `<program> --version`, or null. */
  version: z.nullable(z.string()),
  /** What `--version` printed (its first line). */
  version_output: z.nullable(z.string()),
  /** The versions the adapter was proven against. */
  tested_versions: z.array(z.string()),
  /** Whether `version` is one of them; null when there is no version to compare. */
  tested: z.nullable(z.boolean()),
  problems: z.array(agentProblemSchema),
});
export type AgentCheck = z.infer<typeof agentCheckSchema>;

export const doctorReportSchema = z.object({
  /** No problem of severity `error`. */
  ok: z.boolean(),
  working_dir: z.string(),
  /** The config files read, lowest precedence first. */
  config_files: z.array(z.string()),
  /** Where the global config is (or would be): where an agent's path and env are set. */
  global_config: z.string(),
  agents: z.array(agentCheckSchema),
  /** Problems that are not one agent's (the config, the project's trust). */
  problems: z.array(agentProblemSchema),
});
export type DoctorReport = z.infer<typeof doctorReportSchema>;
