/**
 * 100 MB of agent output streamed through the runner in one whole iteration (the
 * actor's events to the sidecar record, its raw stdout to disk, the transcript into the
 * session line, then the critic): the runner's peak memory, against a runner that
 * collects the same output whole.
 */
import { execFileSync } from 'node:child_process';
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { SCRIPTED_AGENT, type AgentScript } from '../support/scriptedAgent.js';
import { runScriptedLoop } from '../support/scriptedLoop.js';
import { assertEqual, peakMemoryDuring, runBenchmark, scratch, time } from './benchmark.js';

const BYTES = 100 * 1024 * 1024;

runBenchmark(async () => {
  const repo = path.join(scratch('stream'), 'repo');
  fs.rmSync(repo, { recursive: true, force: true });
  fs.mkdirSync(repo, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const script = {
    actor: [[{ print: 'start' }, { flood: BYTES }, { print: 'end' }]],
    critic: [[{ print: '<decision>{"type":"done","summary":"ok","confidence":1}</decision>' }]],
  };
  const before = process.memoryUsage().rss / 1024 / 1024;
  const ours = await peakMemoryDuring(() => time(() => runScriptedLoop(repo, script as AgentScript, { maxIterations: 1, keepEvents: false })));
  const { summary, sidecarDir } = ours.result.result;
  assertEqual(summary.status, 'success', 'the loop succeeded');
  assertEqual(fs.statSync(path.join(sidecarDir, 'iteration-1-actor.stdout')).size >= BYTES, true, 'all raw output kept on disk');

  // The baseline: the same output collected whole, as a runner that buffers does.
  const dir = scratch('stream-baseline');
  fs.writeFileSync(path.join(dir, 'script.json'), JSON.stringify(script));
  for (const name of fs.readdirSync(dir).filter((file) => /^actor(\.count|-\d+\.claim)$/.test(file))) fs.rmSync(path.join(dir, name));
  global.gc?.();
  const baseline = await peakMemoryDuring(() =>
    time(() => execa(process.execPath, [SCRIPTED_AGENT()], { env: { SCRIPTED_AGENT_DIR: dir, CODELOOPS_ROLE: 'actor' }, input: 'x', maxBuffer: 1 << 30 })),
  );
  const ratio = ours.peakMb / baseline.peakMb;
  return {
    name: '100 MB of agent output streamed through the runner (one whole iteration)',
    ours: `peak RSS ${ours.peakMb.toFixed(0)} MB (${before.toFixed(0)} MB at rest), ${(ours.result.ms / 1000).toFixed(1)} s`,
    baseline: `buffering runner peak RSS ${baseline.peakMb.toFixed(0)} MB`,
    ratio,
    ratioText: `${ratio.toFixed(2)}× the memory`,
    goal: 'peak < 150 MB',
    met: ours.peakMb < 150,
  };
});
