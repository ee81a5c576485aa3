import fs from 'node:fs';
import path from 'node:path';
import { findProjectConfig, globalConfigPath } from '../config/configFiles.js';
import { detectChecks, renderProjectConfig } from '../config/detectChecks.js';
import { detectWorktree } from '../config/detectWorktree.js';
import { detectAgents, renderInitialConfig } from '../config/initialConfig.js';
import { openRepository } from '../git/repository.js';
import { UsageError } from './usageError.js';

/**
 * `codeloops init`: the global config, after detecting the installed agents, and, in
 * a repository, a project `codeloops.toml` whose checks (detected from the
 * repository's own files), budgets and stall settings are all commented out.
 * Neither file is replaced without `--force`.
 */
export async function initCommand(options: { force?: boolean }): Promise<number> {
  const globalFile = globalConfigPath();
  const repository = await openRepository(process.cwd()).catch(() => undefined);
  const existingProject = repository ? findProjectConfig(process.cwd(), repository.root) : undefined;
  const projectFile = repository ? (existingProject ?? path.join(repository.root, 'codeloops.toml')) : undefined;
  const writeGlobal = options.force || !fs.existsSync(globalFile);
  const writeProject = projectFile !== undefined && (options.force || !fs.existsSync(projectFile));
  if (!writeGlobal && !writeProject) {
    const existing = [globalFile, ...(projectFile ? [projectFile] : [])].join(' and ');
    throw new UsageError(
      `${existing} already exist${projectFile ? '' : 's'}. Edit ${projectFile ? 'them' : 'it'}, or run "codeloops init --force" to replace ${projectFile ? 'them' : 'it'}.`,
    );
  }

  if (writeGlobal) {
    const detected = detectAgents();
    fs.mkdirSync(path.dirname(globalFile), { recursive: true });
    fs.writeFileSync(globalFile, renderInitialConfig(detected));
    const installed = detected.filter((agent) => agent.path).map((agent) => agent.kind);
    process.stdout.write(`Wrote ${globalFile}\n`);
    process.stdout.write(
      installed.length > 0
        ? `Agents found: ${installed.join(', ')}. The default agent is ${installed[0]}.\n`
        : 'No agent CLI was found on PATH. Install one (for example: npm install -g @anthropic-ai/claude-code), then edit the file.\n',
    );
  }
  if (writeProject) {
    const checks = detectChecks(repository!.root);
    const worktree = detectWorktree(repository!.root);
    fs.writeFileSync(projectFile, renderProjectConfig(checks, worktree));
    process.stdout.write(`Wrote ${projectFile}\n`);
    process.stdout.write(
      checks.length > 0
        ? `Checks found: ${checks.map((check) => check.run).join(', ')}. They are suggested as comments: uncomment the ones you want, then run "codeloops trust".\n`
        : 'No test command was found; name your checks in the file, then run "codeloops trust".\n',
    );
    const readied = [
      worktree.copy.length > 0 ? `${worktree.copy.map((entry) => entry.path).join(', ')} copied into each` : '',
      worktree.setup.length > 0 ? `a setup suggested as a comment: ${worktree.setup.map((entry) => entry.run).join(' && ')}` : '',
    ].filter(Boolean);
    if (readied.length > 0) process.stdout.write(`Worktrees (candidates, isolated checks): ${readied.join('; ')}. See [worktree] in the file.\n`);
  }
  return 0;
}
