import fs from 'node:fs';
import { isolateHome, removeTempDirs, type IsolatedHome } from './testEnvironment.js';

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

/** Waits until a process has ended (a signal is delivered at once, but dying takes a moment); false if it still runs at the deadline. */
export async function waitUntilGone(pid: number, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isRunning(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  argv: string[];
}

/** Every live process on the machine, from /proc (Linux); empty elsewhere. */
function processTable(): ProcessEntry[] {
  let names: string[];
  try {
    names = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  return names.flatMap((name) => {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] === 'Z' || fields[0] === 'X') return [];
      const argv = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      return [{ pid: Number(name), ppid: Number(fields[1]), pgid: Number(fields[2]), argv }];
    } catch {
      return []; // ended while the table was read
    }
  });
}

/**
 * Stops every runner this test process started (`node dist/cli.js …`, other than a
 * `codeloops ui` server) and every process below it, process groups and all: the
 * agents a runner starts run in groups of their own. For `afterEach`, so that a test
 * that fails halfway leaves nothing holding the cores or a repository's lock for the
 * tests after it. Returns the pids it stopped.
 */
export async function stopRunners(): Promise<number[]> {
  const table = processTable();
  const childrenOf = new Map<number, ProcessEntry[]>();
  for (const entry of table) childrenOf.set(entry.ppid, [...(childrenOf.get(entry.ppid) ?? []), entry]);
  const isRunner = (entry: ProcessEntry) =>
    entry.argv.some((arg) => arg.endsWith('/dist/cli.js')) && entry.argv.at(entry.argv.findIndex((arg) => arg.endsWith('/dist/cli.js')) + 1) !== 'ui';
  // An in-process loop (the loop tier) starts the scripted agent itself.
  const isAgent = (entry: ProcessEntry) => entry.argv.some((arg) => arg.endsWith('scriptedAgent.mjs'));
  const doomed: ProcessEntry[] = [];
  const collect = (entry: ProcessEntry): void => {
    doomed.push(entry);
    for (const child of childrenOf.get(entry.pid) ?? []) collect(child);
  };
  for (const child of childrenOf.get(process.pid) ?? []) if (isRunner(child) || isAgent(child)) collect(child);
  // Never the group this process is in (a runner started without its own group shares it).
  const ownGroup = table.find((entry) => entry.pid === process.pid)?.pgid;
  const groups = new Set(doomed.map((entry) => entry.pgid).filter((pgid) => pgid !== ownGroup && pgid > 1));
  for (const entry of doomed) signal(entry.pid);
  for (const group of groups) signal(-group);
  for (const entry of doomed) await waitUntilGone(entry.pid);
  return doomed.map((entry) => entry.pid);
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * For a suite whose tests run the real runner: an isolated data and config home from
 * its first test to its end (the runners and the in-process store both use it), and
 * no runner left behind after each test. Returns the home once the suite has started.
 */
export function runnerSuiteHome(): () => IsolatedHome {
  // A test that fails halfway leaves no runner or agent behind for the tests after it.
  afterEach(stopRunners);
  let home: IsolatedHome | undefined;
  before(() => (home = isolateHome()));
  after(() => {
    home?.restore();
    removeTempDirs();
  });
  return () => home!;
}
