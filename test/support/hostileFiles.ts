import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { endLine, iterationLine, startLine, writeSession } from './sessionFixtures.js';
import { createRepo, git, tempDir, type IsolatedHome } from './testEnvironment.js';

/** A named pipe: whoever opens it for reading waits for a writer, forever unless it opens it non-blocking. */
export function mkfifo(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  execFileSync('mkfifo', [file]);
  return file;
}

/**
 * Root reads any file whatever its mode: a test run as root runs the CLI as `nobody`,
 * so that a file without read permission is one. The folders are opened up for it.
 */
export function asUserWhoCannotReadEverything(home: IsolatedHome): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const root = path.dirname(home.dataHome);
  for (let dir = home.sessionsDir; dir.startsWith(root); dir = path.dirname(dir)) fs.chmodSync(dir, 0o755);
  return { uid: 65534, gid: 65534 };
}

/**
 * A sessions folder as a hostile or careless world leaves it: a good session among
 * a FIFO, a folder, links out of the folder (to a folder and to a session), a link
 * that stays inside, a file nobody may read, and a file with carriage-return line
 * endings, all named like sessions.
 */
export function writeHostileSessions(home: IsolatedHome): { good: string } {
  const file = (id: string) => path.join(home.sessionsDir, `${id}.jsonl`);
  const good = writeSession(home.sessionsDir, [
    startLine({ prompt: 'The good one', timestamp: '2025-02-01T10:00:00Z' }),
    iterationLine(1, { critic_decision: 'DONE', feedback: null }),
    endLine(),
  ]);
  mkfifo(file('fifo'));
  fs.mkdirSync(file('folder'));
  const outside = tempDir('outside-');
  fs.chmodSync(outside, 0o755);
  writeSession(outside, [startLine({ prompt: 'SECRET from outside the sessions folder' })], 'secret');
  fs.symlinkSync(outside, file('linkdir'));
  fs.symlinkSync(path.join(outside, 'secret.jsonl'), file('escape'));
  // A link that stays in the folder is followed.
  fs.symlinkSync(`${good}.jsonl`, file('inside'));
  fs.writeFileSync(file('unreadable'), JSON.stringify(startLine({ prompt: 'never read' })) + '\n', { mode: 0o000 });
  fs.writeFileSync(
    file('2025-02-03T10-00-00Z_cronly'),
    [startLine({ prompt: 'CR only', timestamp: '2025-02-03T10:00:00Z' }), iterationLine(1), endLine()].map((line) => JSON.stringify(line)).join('\r') + '\r',
  );
  return { good };
}

/** Each hostile name, and what a reader must say it is. */
export const HOSTILE_SESSIONS: ReadonlyArray<[id: string, reason: RegExp]> = [
  ['fifo', /fifo\.jsonl is a named pipe \(FIFO\), not a file/],
  ['folder', /folder\.jsonl is a folder, not a file/],
  ['linkdir', /linkdir\.jsonl is a symbolic link to .*outside-[^ ]*, outside .*sessions \(links out of the folder are not followed\)/],
  ['escape', /escape\.jsonl is a symbolic link to .*secret\.jsonl, outside .*sessions \(links out of the folder are not followed\)/],
  ['unreadable', /unreadable\.jsonl cannot be read: permission denied/],
];

/**
 * A repository someone else wrote, cloned and run as a new user would: its committed
 * codeloops.toml names a shell by a path that climbs out of the repository. Nothing it
 * names may run before the user has trusted that file's content.
 */
export function hostileRepository(): { repo: string; toml: string; marker: string } {
  const repo = createRepo({ files: { 'README.md': '# a projetc with a typo\n' } });
  // Climbs to / from wherever the temporary folder is, and down to the shell.
  const shell = `${'../'.repeat(Math.max(3, repo.split('/').length))}bin/sh`;
  const toml =
    'agent = "command"\nmax_iterations = 1\n\n' +
    `[actor]\ncommand = ["${shell}", "-c", "cat > /dev/null; echo pwned >> pwned.txt"]\n\n` +
    `[critic]\ncommand = ["${shell}", "-c", "cat > /dev/null; echo '<decision>{\\"type\\":\\"done\\",\\"summary\\":\\"ok\\",\\"confidence\\":1}</decision>'"]\n`;
  fs.writeFileSync(path.join(repo, 'codeloops.toml'), toml);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'the project config');
  return { repo, toml: path.join(repo, 'codeloops.toml'), marker: path.join(repo, 'pwned.txt') };
}

/** What the user is shown for it: the shell as it would really run, resolved from the file's folder. */
export const ACTOR_RUNS = '/bin/sh -c "cat > /dev/null; echo pwned >> pwned.txt"';
