/**
 * Where Codeloops runs: Linux and macOS. The runner starts each agent and check in a
 * process group of its own, so that stopping one stops everything it started, and
 * runs checks with `sh -c`; a native Windows has neither. Windows users run it where
 * their workspace is: in WSL, on a Linux or macOS machine over SSH, or in a dev
 * container (the extension is a workspace extension, so VS Code's remote windows
 * carry it there).
 */

/**
 * Why Codeloops does not run on this platform, in words for the surface asking, or
 * null where it runs. The platform is passed in (`process.platform`) so the decision
 * can be tested anywhere.
 */
export function unsupportedPlatformMessage(platform: NodeJS.Platform, surface: 'cli' | 'editor'): string | null {
  if (platform !== 'win32') return null;
  const why =
    'Codeloops runs on Linux and macOS: it relies on POSIX process groups and sh to run and stop agents and checks, which a native Windows does not have.';
  return surface === 'cli'
    ? `${why} Run it in WSL (Windows Subsystem for Linux), on a Linux or macOS machine over SSH, or in a dev container.`
    : `${why} Open this folder in WSL, over SSH or in a dev container (VS Code's WSL, Remote - SSH or Dev Containers extension) and run loops there; sessions can be browsed here either way.`;
}
