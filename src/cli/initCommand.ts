import fs from 'node:fs';
import path from 'node:path';
import { globalConfigPath } from '../config/configFiles.js';
import { detectAgents, renderInitialConfig } from '../config/initialConfig.js';
import { UsageError } from './usageError.js';

export function initCommand(options: { force?: boolean }): number {
  const file = globalConfigPath();
  if (fs.existsSync(file) && !options.force) {
    throw new UsageError(`${file} already exists. Edit it, or run "codeloops init --force" to replace it.`);
  }
  const detected = detectAgents();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, renderInitialConfig(detected));
  const installed = detected.filter((agent) => agent.path).map((agent) => agent.kind);
  process.stdout.write(`Wrote ${file}\n`);
  process.stdout.write(
    installed.length > 0
      ? `Agents found: ${installed.join(', ')}. The default agent is ${installed[0]}.\n`
      : 'No agent CLI was found on PATH. Install one (for example: npm install -g @anthropic-ai/claude-code), then edit the file.\n',
  );
  return 0;
}
