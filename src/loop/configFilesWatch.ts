import fs from 'node:fs';

/**
 * The config files a run was set up from, as they were when it started. A run keeps
 * that configuration whatever happens to the files (an actor may edit
 * `codeloops.toml`); this says which changed since, once each, so that it is said.
 */
export class ConfigFilesWatch {
  private readonly atStart: Map<string, string | undefined>;
  private readonly told = new Set<string>();

  constructor(files: readonly string[]) {
    this.atStart = new Map(files.map((file) => [file, contentOf(file)]));
  }

  /** The files whose content differs from the start, not reported before. */
  changed(): string[] {
    const changed: string[] = [];
    for (const [file, content] of this.atStart) {
      if (this.told.has(file) || contentOf(file) === content) continue;
      this.told.add(file);
      changed.push(file);
    }
    return changed;
  }
}

function contentOf(file: string): string | undefined {
  try {
    const stats = fs.statSync(file);
    // A config file is small; anything else is compared by its size and time alone.
    return stats.isFile() && stats.size <= 1_000_000 ? fs.readFileSync(file, 'utf8') : `${stats.size}:${stats.mtimeMs}`;
  } catch {
    return undefined;
  }
}
