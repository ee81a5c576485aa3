import path from 'node:path';
import { groupsDir } from '../sessionFormat/candidateGroupFiles.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { exportSessions } from '../sessionBundle/sessionExport.js';
import { importBundle } from '../sessionBundle/sessionBundles.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { openStore } from './openStore.js';
import { UsageError } from './usageError.js';
import { printAnswer } from './answers.js';

/** `codeloops sessions export <id…> -o bundle.tar.gz`: sessions, their records and snapshots, to take elsewhere. */
export async function exportCommand(ids: readonly string[], options: { output?: string; json?: boolean }): Promise<number> {
  if (!options.output) throw new UsageError('Say where the bundle goes: -o bundle.tar.gz.');
  const store = openStore();
  const resolved: string[] = [];
  for (const id of ids) resolved.push(await store.resolveId(id));
  const result = await exportSessions(resolved, options.output, { store, sidecarDirOf: (id) => sidecarDirOf(id), groupsDirectory: groupsDir() });
  if (options.json) printAnswer('sessions export', result);
  else {
    const groups = result.groups.length > 0 ? `, ${result.groups.length} candidate group record${result.groups.length === 1 ? '' : 's'}` : '';
    process.stdout.write(
      `Wrote ${result.file} (${(result.bytes / 1024).toFixed(1)} KiB): ${result.sessions.length} session${result.sessions.length === 1 ? '' : 's'}${groups}, ${result.snapshot_refs} snapshot refs.\n` +
        `Import it in a clone of the same repository with: codeloops sessions import ${path.basename(result.file)}\n`,
    );
  }
  for (const warning of result.warnings) process.stderr.write(`warning: ${sanitizeForTerminal(warning)}\n`);
  return 0;
}

/** `codeloops sessions import bundle.tar.gz [-d repo]`: all of it, or nothing. */
export async function importCommand(file: string, options: { workingDir?: string; maxUnpackedMb?: number; json?: boolean }): Promise<number> {
  const store = openStore();
  const result = await importBundle({
    bundleFile: file,
    targetDir: path.resolve(options.workingDir ?? process.cwd()),
    maxUnpackedBytes: options.maxUnpackedMb === undefined ? undefined : options.maxUnpackedMb * 1024 * 1024,
    store,
    sidecarDirOf: (id) => sidecarDirOf(id),
    groupsDirectory: groupsDir(),
  });
  if (options.json) printAnswer('sessions import', result);
  else {
    process.stdout.write(
      `Imported ${result.sessions.length} session${result.sessions.length === 1 ? '' : 's'} into ${result.repository}: ${result.sessions.join(', ')}\n`,
    );
    if (result.groups.length > 0)
      process.stdout.write(
        `and the candidate group${result.groups.length === 1 ? '' : 's'} ${result.groups.join(', ')} (codeloops candidates ${result.groups[0]})\n`,
      );
  }
  for (const warning of result.warnings) process.stderr.write(`warning: ${sanitizeForTerminal(warning)}\n`);
  return 0;
}
