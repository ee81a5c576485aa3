import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { importResultSchema } from '../../src/sessionFormat/sessionBundle.js';
import { cliPath, runCli } from '../support/cliProcess.js';
import {
  allRefs,
  assertNothingImported,
  exportedRun,
  failureOf,
  machine,
  oneStepRunner,
  refsIn,
  repack,
  repositoryAndClone,
} from '../support/sessionBundles.js';
import { git, removeTempDirs, tempDir } from '../support/testEnvironment.js';

const MB = 1024 * 1024;

/** Every file and folder under `folder` with its permission bits, folders marked with a trailing slash. */
function modesUnder(folder: string): Record<string, string> {
  const modes: Record<string, string> = {};
  for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    modes[path.relative(folder, file) + (entry.isDirectory() ? '/' : '')] = (fs.statSync(file).mode & 0o777).toString(8);
  }
  return modes;
}

/** A file of zeros that takes no room on disk: it packs and unpacks as `bytes` bytes. */
function sparseFile(file: string, bytes: number): void {
  fs.writeFileSync(file, '');
  fs.truncateSync(file, bytes);
}

/**
 * Mostly zeros with a pseudo-random byte every 512: it packs about a hundred to one, as
 * output full of repeated lines does (zeros alone pack a thousand to one, which tar's own
 * ratio guard refuses).
 */
function repetitiveFile(file: string, bytes: number): void {
  const chunk = Buffer.alloc(MB);
  let seed = 1;
  const fd = fs.openSync(file, 'w');
  try {
    for (let written = 0; written < bytes; written += chunk.length) {
      for (let at = 0; at < chunk.length; at += 512) chunk[at] = (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
      fs.writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - written));
    }
  } finally {
    fs.closeSync(fd);
  }
}

describe('sessions import refuses crafted bundles, leaving everything as it was', () => {
  after(removeTempDirs);

  it("refuses a bundle whose snapshots carry refs that are not its sessions' (a user's branch, another session's), moving nothing", async () => {
    const { laptop, ci } = repositoryAndClone();
    git(laptop, 'branch', 'feature');
    git(ci, 'fetch', '-q', 'origin', 'feature:feature');
    // On the runner, the branch moves on: a bundle carrying it would fast-forward the user's.
    git(ci, 'update-ref', 'refs/heads/feature', git(ci, 'commit-tree', '-p', 'feature', '-m', 'not yours', 'feature^{tree}').trim());
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const headOf = git(ci, 'rev-parse', `refs/codeloops/${sessionId}/head`).trim();
    const other = `refs/codeloops/2030-01-01T00-00-00Z_abcdef/head`;
    git(ci, 'update-ref', other, headOf);
    const home = machine({});
    const before = allRefs(laptop);
    for (const extra of ['refs/heads/feature', other]) {
      const crafted = await repack(bundle, `with-${extra.split('/')[1]}.tar.gz`, (root) => {
        const snapshots = path.join(root, 'snapshots.bundle');
        fs.rmSync(snapshots);
        git(ci, 'bundle', 'create', '--quiet', snapshots, ...refsIn(ci).filter((ref) => ref.includes(sessionId)), extra, '--not', 'main');
      });
      const refused = failureOf(await runCli(['sessions', 'import', crafted, '-d', laptop, '--json'], { cwd: laptop, env: home.env }));
      assert.equal(refused.code, 'bundle_invalid', refused.message);
      assert.match(refused.message, new RegExp(`a ref that is not one of its sessions': ${extra}`));
      assert.equal(allRefs(laptop), before, `${extra}: every ref as it was`);
      assertNothingImported(home.home);
    }
  });

  it('refuses a well-formed archive whose session file does not start with session_start', async () => {
    const { laptop, ci } = repositoryAndClone();
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const crafted = await repack(bundle, 'no-start.tar.gz', (root) => {
      const file = path.join(root, 'sessions', `${sessionId}.jsonl`);
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split('\n').slice(1).join('\n'));
    });
    const home = machine({});
    const refused = failureOf(await runCli(['sessions', 'import', crafted, '-d', laptop, '--json'], { cwd: laptop, env: home.env }));
    assert.equal(refused.code, 'bundle_invalid');
    assert.match(refused.message, new RegExp(`sessions/${sessionId}\\.jsonl does not start with a session_start line`));
    assertNothingImported(home.home);
    assert.deepEqual(refsIn(laptop), []);
  });

  it("a bundle whose snapshots git verifies but cannot read (a damaged pack) is bundle_invalid with git's reason", async () => {
    const { laptop, ci } = repositoryAndClone();
    const { bundle } = await exportedRun(ci, oneStepRunner());
    const crafted = await repack(bundle, 'damaged-pack.tar.gz', (root) => {
      const file = path.join(root, 'snapshots.bundle');
      const bytes = fs.readFileSync(file);
      // The header (refs and prerequisites) stays readable; the compressed objects after the pack's own header do not.
      bytes.fill(0xff, bytes.indexOf('PACK') + 14, bytes.indexOf('PACK') + 30);
      fs.writeFileSync(file, bytes);
      git(laptop, 'bundle', 'verify', '--quiet', file); // the damage shows only once the objects are read
    });
    const home = machine({});
    const refused = failureOf(await runCli(['sessions', 'import', crafted, '-d', laptop, '--json'], { cwd: laptop, env: home.env }));
    assert.equal(refused.code, 'bundle_invalid');
    assert.match(refused.message, /git cannot read its snapshots \(.*(inflate|pack).*\)/s);
    assertNothingImported(home.home);
    assert.deepEqual(refsIn(laptop), []);
  });

  it('refuses without a stack trace a session listed twice, an events.jsonl that is a folder, and a working folder outside the repository', async () => {
    const { laptop, ci } = repositoryAndClone();
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const manifestOf = (root: string) => path.join(root, 'manifest.json');
    const editManifest = (root: string, edit: (manifest: { sessions: Record<string, unknown>[] }) => void) => {
      const manifest = JSON.parse(fs.readFileSync(manifestOf(root), 'utf8'));
      edit(manifest);
      fs.writeFileSync(manifestOf(root), JSON.stringify(manifest));
    };
    const cases = [
      {
        name: 'twice',
        edit: (root: string) => editManifest(root, (manifest) => manifest.sessions.push(manifest.sessions[0]!)),
        reason: new RegExp(`its manifest lists ${sessionId} twice`),
      },
      {
        name: 'events-folder',
        edit: (root: string) => {
          const events = path.join(root, 'sidecars', sessionId, 'events.jsonl');
          fs.rmSync(events);
          fs.mkdirSync(events);
          fs.writeFileSync(path.join(events, 'inside'), 'x');
        },
        reason: new RegExp(`its sidecars/${sessionId}/events\\.jsonl is a folder, not a file`),
      },
      {
        name: 'outside',
        edit: (root: string) => editManifest(root, (manifest) => (manifest.sessions[0]!.relative_dir = '../../../../etc')),
        reason: new RegExp(`places ${sessionId} at "\\.\\./\\.\\./\\.\\./\\.\\./etc", outside the repository`),
      },
      {
        name: 'absolute',
        edit: (root: string) => editManifest(root, (manifest) => (manifest.sessions[0]!.relative_dir = '/etc')),
        reason: /at "\/etc", outside the repository/,
      },
    ];
    const home = machine({});
    for (const { name, edit, reason } of cases) {
      const crafted = await repack(bundle, `${name}.tar.gz`, edit);
      const refused = failureOf(await runCli(['sessions', 'import', crafted, '-d', laptop, '--json'], { cwd: laptop, env: home.env }));
      assert.equal(refused.code, 'bundle_invalid', `${name}: ${refused.message}`);
      assert.match(refused.message, reason);
      assertNothingImported(home.home);
      assert.deepEqual(refsIn(laptop), [], name);
    }
  });

  it('sessions export -o <a folder>, or into a folder that is a file, is a usage error that writes nothing', async () => {
    const { ci } = repositoryAndClone();
    const runner = oneStepRunner();
    const { sessionId } = await exportedRun(ci, runner);
    const folder = tempDir('codeloops-out-');
    const refused = failureOf(await runCli(['sessions', 'export', sessionId, '-o', folder, '--json'], { cwd: ci, env: runner.env }));
    assert.equal(refused.code, 'usage');
    assert.match(refused.message, new RegExp(`${folder} is a folder: a bundle is written to a file`));
    assert.deepEqual(fs.readdirSync(folder), []);
    const file = path.join(folder, 'a-file');
    fs.writeFileSync(file, 'mine\n');
    const inside = failureOf(await runCli(['sessions', 'export', sessionId, '-o', path.join(file, 'bundle.tar.gz'), '--json'], { cwd: ci, env: runner.env }));
    assert.equal(inside.code, 'usage');
    assert.match(inside.message, new RegExp(`${file} cannot be a folder`));
    assert.equal(fs.readFileSync(file, 'utf8'), 'mine\n');
  });

  it('refuses a bundle that unpacks to more than --max-unpacked-mb, one file or all together, leaving no temporary files', async () => {
    const { laptop, ci } = repositoryAndClone();
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const oneBig = await repack(bundle, 'one-big.tar.gz', (root) => sparseFile(path.join(root, 'sidecars', sessionId, 'iteration-9-actor.stdout'), 2 * MB));
    const manySmall = await repack(bundle, 'many-small.tar.gz', (root) => {
      for (const n of [7, 8, 9]) sparseFile(path.join(root, 'sidecars', sessionId, `iteration-${n}-actor.stdout`), MB / 2);
    });
    const home = machine({});
    const temporary = tempDir('codeloops-tmp-');
    for (const [crafted, reason] of [
      [oneBig, /unpacks to more than 1 MB \(codeloops-bundle\/sidecars\/.*\/iteration-9-actor\.stdout alone is 2097152 bytes\)/],
      [manySmall, /unpacks to more than 1 MB \(its files come to \d+ bytes\)/],
    ] as const) {
      const result = await runCli(['sessions', 'import', crafted, '-d', laptop, '--max-unpacked-mb', '1', '--json'], {
        cwd: laptop,
        env: { ...home.env, TMPDIR: temporary },
      });
      const refused = failureOf(result);
      assert.equal(refused.code, 'bundle_invalid', refused.message);
      assert.match(refused.message, reason);
      assert.match(refused.hint ?? '', /--max-unpacked-mb/);
      assert.deepEqual(fs.readdirSync(temporary), [], 'the unpacked files are gone');
      assertNothingImported(home.home);
      assert.deepEqual(refsIn(laptop), []);
    }
    // Under the limit, the same bundle imports.
    const imported = await runCli(['sessions', 'import', manySmall, '-d', laptop, '--max-unpacked-mb', '2', '--json'], { cwd: laptop, env: home.env });
    assert.equal(imported.code, 0, imported.stderr);
  });

  it('imports a bundle that unpacks to 256 MB in bounded memory', async function () {
    if (!fs.existsSync('/usr/bin/time')) this.skip();
    const { laptop, ci } = repositoryAndClone();
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const big = await repack(bundle, 'big.tar.gz', (root) => repetitiveFile(path.join(root, 'sidecars', sessionId, 'iteration-9-actor.stdout'), 256 * MB));
    const home = machine({});
    const measured = path.join(tempDir(), 'rss');
    // GNU time reports the peak resident memory of the process it ran (kilobytes).
    const child = spawnSync('/usr/bin/time', ['-f', '%M', '-o', measured, process.execPath, cliPath(), 'sessions', 'import', big, '-d', laptop, '--json'], {
      cwd: laptop,
      env: { ...process.env, ...home.env },
      encoding: 'utf8',
    });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(importResultSchema.parse(JSON.parse(child.stdout)).sessions, [sessionId]);
    const peakMb = Number(fs.readFileSync(measured, 'utf8').trim().split('\n').at(-1)) / 1024;
    assert.ok(peakMb < 150, `peak RSS ${peakMb.toFixed(0)} MB for 256 MB unpacked (from ${(fs.statSync(big).size / MB).toFixed(1)} MB)`);
    assert.equal(fs.statSync(path.join(home.home.dataHome, 'codeloops', 'sidecars', sessionId, 'iteration-9-actor.stdout')).size, 256 * MB);
  });

  it('imported records are private, as local ones are: folders 0700, files 0600', async () => {
    const { laptop, ci } = repositoryAndClone();
    const { sessionId, bundle } = await exportedRun(ci, oneStepRunner());
    const home = machine({});
    const imported = await runCli(['sessions', 'import', bundle, '-d', laptop], { cwd: laptop, env: home.env });
    assert.equal(imported.code, 0, imported.stderr);
    const sidecar = path.join(home.home.dataHome, 'codeloops', 'sidecars', sessionId);
    const modes = { '': (fs.statSync(sidecar).mode & 0o777).toString(8), ...modesUnder(sidecar) };
    assert.ok(Object.keys(modes).length > 2, JSON.stringify(modes));
    for (const [name, mode] of Object.entries(modes))
      assert.equal(mode, name === '' || name.endsWith('/') ? '700' : '600', `${name || 'the sidecar'}: ${mode}`);
    assert.equal((fs.statSync(path.join(home.home.sessionsDir, `${sessionId}.jsonl`)).mode & 0o777).toString(8), '600');
  });
});
