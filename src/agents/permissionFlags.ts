import type { AgentAdapter } from './agentAdapter.js';

/**
 * Finds, among arguments meant for an agent, one of the options that change what it
 * may do (`AgentAdapter.permissionFlags`), in any spelling its parser accepts:
 * `--flag value` and `--flag=value`, camelCase or kebab-case (yargs takes both),
 * `--no-flag`, and a short flag alone, with its value attached (`-sdanger-full-access`)
 * or among grouped short flags (`-qy`).
 */
export function permissionFlagIn(adapter: AgentAdapter, args: readonly string[]): string | undefined {
  const long = new Set(adapter.permissionFlags.filter((flag) => flag.startsWith('--')).map((flag) => normalize(flag.slice(2))));
  const short = new Set(adapter.permissionFlags.filter((flag) => /^-[^-]$/.test(flag)).map((flag) => flag[1]!));
  return args.find((arg) => {
    if (arg.startsWith('--')) {
      const name = normalize(arg.slice(2).split('=')[0]!);
      return long.has(name) || (name.startsWith('no') && long.has(name.slice(2)));
    }
    if (!/^-[^-]/.test(arg)) return false;
    const letters = arg.slice(1).split('=')[0]!;
    return short.has(letters[0]!) || (/^[A-Za-z]+$/.test(letters) && [...letters].some((letter) => short.has(letter)));
  });
}

/** `--allowed-tools`, `--allowedTools` and `--allowed_tools` are one option. */
function normalize(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}
