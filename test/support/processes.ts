import fs from 'node:fs';

/**
 * Whether a process still runs. A killed process stays in the table as a zombie until
 * its parent reaps it, and an orphan's new parent (in a container, often not a real
 * init) may take its time: `kill(pid, 0)` still succeeds then. On Linux the state in
 * /proc tells a zombie ("Z") from a live process.
 */
export function isRunning(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (command) state …`: the command may hold spaces and parentheses, the state follows the last ')'.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && fs.existsSync('/proc/self/stat')) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
