import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseLockOwner } from '../../src/sessionFormat/loopLock.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { isRunning, stopRunners, waitUntilGone } from '../support/processes.js';
import { done, scriptedCliSetup } from '../support/scriptedAgent.js';
import { removeTempDirs } from '../support/testEnvironment.js';

/** A pid that certainly belongs to no process: one that has just ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

describe('crashes leave nothing running and nothing behind (the built CLI)', () => {
  const leftovers: number[] = [];
  afterEach(async () => {
    // A runner killed outright leaves its agent's group to us.
    for (const group of leftovers.splice(0)) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await stopRunners();
  });
  after(removeTempDirs);

  it('records the agent’s process group in the lock; after SIGKILL of the runner, refuses a new loop while that agent runs, with its pid and how to stop it', async () => {
    const { repo, env, agent } = scriptedCliSetup({
      actor: [[{ spawnChild: true }, { print: 'editing away' }, { hang: true }], [{ write: { path: 'b.txt', content: 'b\n' } }]],
      critic: [[done()]],
    });
    const lockFile = path.join(repo, '.git', 'codeloops.lock');
    const run = startCli(['-p', 'edit'], { cwd: repo, env });
    await run.waitForStderr(/editing away/);
    const agentPid = Number(agent.envSeen('actor', 1).pid);
    leftovers.push(agentPid);
    const owner = parseLockOwner(fs.readFileSync(lockFile, 'utf8'));
    assert.equal(owner?.pid, run.child.pid);
    assert.deepEqual(owner?.processGroups, [agentPid], 'the agent leads its own group, and the lock says so');

    run.child.kill('SIGKILL');
    await run.done;
    assert.ok(isRunning(agentPid), 'a runner killed outright cannot stop its agent');

    const refused = await runCli(['-p', 'again', '--json-output'], { cwd: repo, env });
    assert.equal(refused.code, 2, refused.stderr);
    const output = JSON.parse(refused.stdout) as { error_code: string; error: string; error_details: Record<string, unknown> };
    assert.equal(output.error_code, 'loop_running');
    assert.equal(output.error_details.process_group, agentPid);
    assert.equal(output.error_details.runner_pid, run.child.pid);
    assert.match(
      output.error,
      new RegExp(`stopped without ending it, but what it started still runs: process group ${agentPid}, which may still be changing files`),
    );
    assert.ok(
      refused.stderr.includes(`Stop it with "kill -- -${agentPid}" (or "kill -9 -- -${agentPid}" if it ignores that), then run again.`),
      refused.stderr,
    );
    assert.equal(fs.existsSync(path.join(repo, 'b.txt')), false, 'nothing started');

    // As the hint says (this agent ignores SIGTERM): the group is stopped, and the next run takes the stale lock over.
    process.kill(-agentPid, 'SIGKILL');
    assert.ok(await waitUntilGone(agentPid));
    const grandchild = Number(fs.readFileSync(path.join(agent.dir, 'grandchild.pid'), 'utf8'));
    assert.ok(await waitUntilGone(grandchild));
    const next = await runCli(['-p', 'again', '--json-output'], { cwd: repo, env });
    assert.equal(next.code, 0, next.stderr);
    assert.equal(fs.readFileSync(path.join(repo, 'b.txt'), 'utf8'), 'b\n');
    assert.equal(fs.existsSync(lockFile), false, 'released at the end');
  });

  it('removes the temporary index files of runners that died mid-snapshot, and leaves a live process’s alone', async () => {
    const { repo, env } = scriptedCliSetup({ actor: [[{ write: { path: 'x.txt', content: 'x\n' } }, { print: 'x' }]], critic: [[done()]] });
    const gitDir = path.join(repo, '.git');
    const dead = [
      `codeloops-snapshot-${deadPid()}-0a1b2c3d.index`,
      `codeloops-snapshot-${deadPid()}-deadbeef.index`,
      `codeloops-restore-${deadPid()}-00ff00ff.index.lock`,
    ];
    const live = `codeloops-snapshot-${process.pid}-12345678.index`;
    for (const name of [...dead, live]) fs.writeFileSync(path.join(gitDir, name), 'DIRC');
    const ran = await runCli(['-p', 'x'], { cwd: repo, env });
    assert.equal(ran.code, 0, ran.stderr);
    assert.deepEqual(
      fs.readdirSync(gitDir).filter((name) => name.startsWith('codeloops-')),
      [live],
    );
  });

  it('stops a runner and every process group below it when a test ends (stopRunners, in afterEach)', async () => {
    const { repo, env, agent } = scriptedCliSetup({ actor: [[{ spawnChild: true }, { print: 'busy' }, { hang: true }]], critic: [[done()]] });
    const run = startCli(['-p', 'x'], { cwd: repo, env });
    await run.waitForStderr(/busy/);
    const agentPid = Number(agent.envSeen('actor', 1).pid);
    const grandchild = Number(fs.readFileSync(path.join(agent.dir, 'grandchild.pid'), 'utf8'));
    const stopped = await stopRunners();
    assert.ok(stopped.includes(run.child.pid!) && stopped.includes(agentPid) && stopped.includes(grandchild), String(stopped));
    for (const pid of [run.child.pid!, agentPid, grandchild]) assert.ok(!isRunning(pid), `${pid} still runs`);
  });
});
