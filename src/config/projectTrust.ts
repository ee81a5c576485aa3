import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { CodeloopsError } from '../sessionFormat/failures.js';
import type { Environment } from '../sessionFormat/sessionFiles.js';
import * as z from '../sessionFormat/zod.js';
import { configHome, type ProjectConfigFile } from './configFiles.js';

/**
 * A cloned repository must not run code without its user's say, as direnv and VS
 * Code's workspace trust have it: whatever a project's `codeloops.toml` adds that
 * runs a program (an agent's `command`, extra `args`, the `[[checks]]`, `[worktree] setup`) runs only
 * once the user has trusted that file's content. Trust is kept per file, by the hash
 * of its bytes: a changed file needs trusting again.
 */

/** One thing a project file would run, in the user's words. */
export interface ProjectProgram {
  /** Where in the file: `[actor] command`, `[[checks]] tests`. */
  key: string;
  /** What it runs. */
  runs: string;
}

export class ProjectUntrustedError extends CodeloopsError {
  override name = 'ProjectUntrustedError';
  constructor(
    readonly file: string,
    readonly programs: readonly ProjectProgram[],
  ) {
    super(
      'project_untrusted',
      `${file} would run programs on this machine, and you have not trusted it:\n${programs.map((program) => `  ${program.key}: ${program.runs}`).join('\n')}\n` +
        'Nothing was started. Read the file; if what it runs is what you want, trust it.',
      { file, programs: programs.map((program) => ({ ...program })) },
    );
  }
}

/** What a project file would run: its agents' commands and extra arguments, its checks and its worktree setup. */
export function programsOf(file: ProjectConfigFile): ProjectProgram[] {
  const programs: ProjectProgram[] = [];
  const words = (parts: readonly string[]) => parts.map((part) => (/[\s"']/.test(part) ? JSON.stringify(part) : part)).join(' ');
  for (const role of ['actor', 'critic'] as const) {
    const table = file[role];
    if (table?.command) programs.push({ key: `[${role}] command`, runs: words(table.command) });
    if (table?.args?.length) programs.push({ key: `[${role}] args`, runs: `${words(table.args)} (added to the agent's command line)` });
  }
  for (const [agent, table] of Object.entries(file.agents ?? {})) {
    if (table?.command) programs.push({ key: `[agents.${agent}] command`, runs: words(table.command) });
    if (table?.args?.length) programs.push({ key: `[agents.${agent}] args`, runs: `${words(table.args)} (added to ${agent}'s command line)` });
  }
  for (const check of file.checks ?? []) programs.push({ key: `[[checks]] ${check.name}`, runs: `sh -c ${JSON.stringify(check.run)}` });
  if (file.worktree?.setup) programs.push({ key: '[worktree] setup', runs: `sh -c ${JSON.stringify(file.worktree.setup)}` });
  return programs;
}

const trustedSchema = z.object({ version: z.literal(1), files: z.record(z.string(), z.string()) });

/** `$XDG_CONFIG_HOME/codeloops/trusted-projects.json`: the project files the user trusted, by path, with their content's hash. */
export function trustStorePath(env: Environment = process.env): string {
  return path.join(configHome(env), 'codeloops', 'trusted-projects.json');
}

export function contentHash(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

function readStore(env: Environment): Record<string, string> {
  try {
    const parsed = trustedSchema.safeParse(JSON.parse(fs.readFileSync(trustStorePath(env), 'utf8')));
    return parsed.success ? { ...parsed.data.files } : {};
  } catch {
    return {}; // none yet, or damaged: nothing is trusted
  }
}

export function isProjectTrusted(file: string, hash: string, env: Environment = process.env): boolean {
  return readStore(env)[path.resolve(file)] === hash;
}

/** Records the user's trust in this file as it is now (or takes it back). */
export function setProjectTrust(file: string, trusted: boolean, env: Environment = process.env): void {
  const files = readStore(env);
  const absolute = path.resolve(file);
  if (trusted) files[absolute] = contentHash(fs.readFileSync(absolute));
  else delete files[absolute];
  const store = trustStorePath(env);
  fs.mkdirSync(path.dirname(store), { recursive: true, mode: 0o700 });
  const temporary = `${store}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, JSON.stringify({ version: 1, files }, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(temporary, store);
}
