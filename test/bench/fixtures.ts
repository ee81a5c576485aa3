/**
 * The fixtures more than one benchmark measures, each made once and kept in the scratch
 * folder between runs (making them takes longer than measuring).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { scratch } from './benchmark.js';

// ── 10,000 sessions (list, api) ─────────────────────────────────────────────────

export const LIST_SESSIONS = 10_000;

/**
 * 10,000 sessions in a data home of their own. With `bigLines`, 1 % of them carry a
 * 2 MB iteration line: most finished, in the middle of the file; one in ten still
 * running, so the big line is the last one. The files are dated a minute back, as
 * sessions at rest are.
 */
export function listFixture(bigLines = true): { dataHome: string; dir: string } {
  const dataHome = path.join(scratch(bigLines ? 'list' : 'list-small'), 'data');
  const dir = path.join(dataHome, 'codeloops', 'sessions');
  if (!fs.existsSync(dir) || fs.readdirSync(dir).length !== LIST_SESSIONS) {
    fs.rmSync(dataHome, { recursive: true, force: true });
    const big = 'x'.repeat(2 * 1024 * 1024);
    const aMinuteAgo = new Date(Date.now() - 60_000);
    for (let i = 0; i < LIST_SESSIONS; i++) {
      const timestamp = new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const lines = [
        startLine({ timestamp, prompt: `Task number ${i}: make the thing ${i % 7 === 0 ? 'faster 🚀' : 'better'}`, working_dir: `/work/project-${i % 20}` }),
      ];
      const iterations = 1 + (i % 4);
      for (let n = 1; n <= iterations; n++) {
        const bigLine = bigLines && (i % 100 === 1 || i % 1000 === 0) && n === 1;
        lines.push(iterationLine(n, bigLine ? { actor_output: big, git_diff: big } : {}));
      }
      if (i % 10 !== 0) lines.push(endLine({ iterations, outcome: i % 3 === 0 ? 'failed' : 'success' }));
      const id = writeSession(dir, lines);
      fs.utimesSync(path.join(dir, `${id}.jsonl`), aMinuteAgo, aMinuteAgo);
    }
  }
  return { dataHome, dir };
}

// ── a repository of 50,000 files (snapshot, worktrees) ──────────────────────────

export const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };

/**
 * A repository of `files` small files in folders of 500, committed and packed (built
 * aside and moved in whole, so a run stopped halfway leaves nothing half made); returns
 * a git runner in it. Automatic gc is off: none may start in the background in the
 * middle of a measurement.
 */
export function generatedRepository(repo: string, files: number): (...args: string[]) => string {
  const gitIn = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, env: gitEnv, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (!fs.existsSync(path.join(repo, '.git'))) {
    const building = `${repo}.building`;
    fs.rmSync(building, { recursive: true, force: true });
    fs.mkdirSync(building, { recursive: true });
    gitIn(building, 'init', '-q');
    gitIn(building, 'config', 'gc.auto', '0');
    for (let i = 0; i < files; i++) {
      const file = path.join(building, `src/module${Math.floor(i / 500)}/file${i}.ts`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `export const value${i} = ${i};\n`.repeat(10));
    }
    gitIn(building, 'add', '-A');
    gitIn(building, 'commit', '-q', '-m', 'generated');
    gitIn(building, 'gc', '-q');
    fs.rmSync(repo, { recursive: true, force: true });
    fs.renameSync(building, repo);
  }
  return (...args: string[]) => gitIn(repo, ...args);
}

/** Removes every ref under the prefixes (a benchmark's snapshots), so runs do not pile them up. */
export function deleteRefs(repo: string, ...prefixes: string[]): void {
  const refs = execFileSync('git', ['for-each-ref', '--format=delete %(refname)', ...prefixes], { cwd: repo, encoding: 'utf8' });
  if (refs !== '') execFileSync('git', ['update-ref', '--stdin'], { cwd: repo, input: refs });
}

// ── big sessions in a data home of their own (slowClient, slowClients, bigLine) ──

export interface KeptSession {
  dataHome: string;
  id: string;
  file: string;
  bytes: number;
}

/**
 * A session file in a data home of its own (`<scratch>/data`), its lines written by
 * `write` the first time (aside, then moved in, so a run stopped halfway leaves nothing
 * half made).
 */
export function keptSession(folder: string, id: string, write: (fd: number) => void): KeptSession {
  const dataHome = path.join(scratch(folder), 'data');
  const file = path.join(dataHome, 'codeloops', 'sessions', `${id}.jsonl`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const fd = fs.openSync(`${file}.tmp`, 'w');
    write(fd);
    fs.closeSync(fd);
    fs.renameSync(`${file}.tmp`, file);
  }
  return { dataHome, id, file, bytes: fs.statSync(file).size };
}

/** A session of 200 MB: 100 iterations of 2 MB (agent output and diff). */
export function slowClientFixture(): KeptSession {
  return keptSession('slow-clients', '2025-05-01T10-00-00Z_200mb0', (fd) => {
    fs.writeSync(fd, JSON.stringify(startLine({ prompt: 'A session of 200 MB', timestamp: '2025-05-01T10:00:00Z', max_iterations: 100 })) + '\n');
    const output = 'agent output line\n'.repeat(1_500_000 / 18);
    const diff = `diff --git a/f b/f\n${'+a changed line\n'.repeat(500_000 / 16)}`;
    for (let n = 1; n <= 100; n++) fs.writeSync(fd, JSON.stringify(iterationLine(n, { actor_output: output, git_diff: diff })) + '\n');
    fs.writeSync(fd, JSON.stringify(endLine({ iterations: 100 })) + '\n');
  });
}
