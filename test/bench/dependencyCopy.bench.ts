/**
 * Readying a worktree with `[worktree] copy = ["node_modules"]`: a node_modules-like
 * tree of about 50 MB (400 packages of nested folders, 5,200 files of 1–20 KB, and
 * their `.bin` links) copied our way (`copyTree`: copy-on-write clones where the
 * filesystem allows) against `cp -a` in the same run, with Node's `fs.cpSync` (how
 * it was copied before) for comparison. Whether this filesystem can clone at all is
 * said with the result: where it cannot, both make full copies.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { copyTree } from '../../src/loop/worktreeSetup.js';
import { median, runBenchmark, scratch, time } from './benchmark.js';

const PACKAGES = 400;
const ROUNDS = 5;

/** A node_modules as npm leaves it, in shape: packages of nested folders, and `.bin` links into them. Made once, kept between runs. */
function nodeModulesLike(root: string): { folder: string; megabytes: number; files: number } {
  const folder = path.join(root, 'source', 'node_modules');
  const marker = path.join(root, 'source', 'made.json');
  if (fs.existsSync(marker)) return JSON.parse(fs.readFileSync(marker, 'utf8')) as { folder: string; megabytes: number; files: number };
  fs.rmSync(path.join(root, 'source'), { recursive: true, force: true });
  let bytes = 0;
  let files = 0;
  fs.mkdirSync(path.join(folder, '.bin'), { recursive: true });
  for (let p = 0; p < PACKAGES; p++) {
    const pkg = path.join(folder, `package-${p}`);
    for (let d = 0; d < 3; d++) {
      const dir = path.join(pkg, `lib${d}`, 'internal');
      fs.mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 4; f++) {
        const size = 1024 * (((p * 7 + f * 13 + d) % 20) + 1);
        fs.writeFileSync(path.join(dir, `module${f}.js`), `// package ${p}\n`.padEnd(size, 'x'));
        bytes += size;
        files++;
      }
    }
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: `package-${p}`, bin: 'lib0/internal/module0.js' }));
    files++;
    fs.symlinkSync(`../package-${p}/lib0/internal/module0.js`, path.join(folder, '.bin', `package-${p}`));
  }
  const made = { folder, megabytes: bytes / 1024 / 1024, files };
  fs.writeFileSync(marker, JSON.stringify(made));
  return made;
}

/** Whether this filesystem clones a file (Btrfs, XFS with reflink, APFS), and its type as `df` names it. */
function cloning(root: string): { clones: boolean; filesystem: string } {
  const probe = path.join(root, 'reflink-probe');
  fs.writeFileSync(probe, 'probe\n');
  const clones = spawnSync('cp', ['--reflink=always', probe, `${probe}-clone`], { stdio: 'ignore' }).status === 0;
  fs.rmSync(`${probe}-clone`, { force: true });
  const filesystem = execFileSync('df', ['--output=fstype', root], { encoding: 'utf8' }).trim().split('\n').at(-1)!.trim();
  return { clones, filesystem };
}

runBenchmark(async () => {
  const root = scratch('dependencyCopy');
  const source = nodeModulesLike(root);
  // The worktree the copy goes into exists already, as a candidate's does (made before, not timed).
  const target = (name: string) => {
    fs.mkdirSync(path.join(root, 'copies', name), { recursive: true });
    return path.join(root, 'copies', name, 'node_modules');
  };
  const clear = () => {
    fs.rmSync(path.join(root, 'copies'), { recursive: true, force: true });
    // Each copy starts with the disk idle, not writing back the last one's pages.
    execFileSync('sync');
  };
  const ours: number[] = [];
  const cpA: number[] = [];
  const cpSync: number[] = [];
  // In turns, so that the machine's drift moves all three alike.
  for (let round = 0; round < ROUNDS; round++) {
    clear();
    const oursTo = target('ours');
    ours.push((await time(() => copyTree(source.folder, oursTo))).ms);
    clear();
    const cpTo = target('cp');
    cpA.push((await time(async () => execFileSync('cp', ['-a', source.folder, cpTo]))).ms);
    clear();
    const cpSyncTo = target('cpSync');
    cpSync.push((await time(async () => fs.cpSync(source.folder, cpSyncTo, { recursive: true, verbatimSymlinks: true }))).ms);
  }
  clear();
  const { clones, filesystem } = cloning(root);
  const ratio = median(ours) / median(cpA);
  return {
    name: `copying a ${source.megabytes.toFixed(0)} MB node_modules-like tree (${source.files.toLocaleString('en-US')} files) into a worktree ([worktree] copy), median of ${ROUNDS}`,
    ours: `${median(ours).toFixed(0)} ms (Node's fs.cpSync, the copy before: ${median(cpSync).toFixed(0)} ms); ${filesystem}: ${clones ? 'clones files (copy-on-write)' : 'no copy-on-write clones, so a full copy'}`,
    baseline: `\`cp -a\`: ${median(cpA).toFixed(0)} ms`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the time`,
    goal: '≤ 1.2×',
    met: ratio <= 1.2,
  };
});
