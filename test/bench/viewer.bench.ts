/**
 * Opening a session of 100 iterations (about 26 MB, each with a 4,000-line diff and a
 * long output) in the viewer, to its timeline; against a viewer that renders every diff
 * and every output at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SessionLibrary } from '../../src/sessionView/sessionLibrary.js';
import { SessionStore } from '../../src/sessions/sessionStore.js';
import { renderDiff, renderText } from '../../webview-ui/diffView.js';
import { ViewerApp } from '../../webview-ui/viewerApp.js';
import { installDom } from '../support/dom.js';
import { endLine, iterationLine, startLine, writeSession } from '../support/sessionFixtures.js';
import { runBenchmark, scratch } from './benchmark.js';

const ITERATIONS = 100;

/** The session, written afresh. */
function bigSession(dir: string): string {
  const diffLines = Array.from({ length: 4000 }, (_, i) => (i % 3 === 0 ? `-old line ${i}` : `+new line ${i} 🎉`)).join('\n');
  const diff = `diff --git a/src/big.ts b/src/big.ts\n--- a/src/big.ts\n+++ b/src/big.ts\n@@ -1,4000 +1,4000 @@\n${diffLines}\n`;
  const output = 'The actor explains what it did. '.repeat(6000);
  return writeSession(dir, [
    startLine({ prompt: 'A long session' }),
    ...Array.from({ length: ITERATIONS }, (_, i) => iterationLine(i + 1, { git_diff: diff, actor_output: output, git_files_changed: 1 })),
    endLine({ iterations: ITERATIONS }),
  ]);
}

/** Opens the session in a viewer, and with `eager` renders every iteration's diff and output as a viewer without lazy rendering does; returns the time. */
async function open(dir: string, id: string, eager: boolean): Promise<number> {
  const library = new SessionLibrary(new SessionStore(dir), () => path.join(dir, 'no-sidecar'));
  const started = performance.now();
  const view = await library.view(id);
  const root = document.createElement('div');
  const transport = {
    send() {},
    onMessage: (listener: (message: unknown) => void) => listener({ type: 'session', view, running: false, capabilities: { openDiff: true } }),
    loadState: () => undefined,
    saveState() {},
  };
  new ViewerApp(root, transport as never);
  if (eager) {
    for (let n = 1; n <= ITERATIONS; n++) {
      const detail = (await library.detail(id, n))!;
      root.appendChild(renderDiff(detail.diff, Number.MAX_SAFE_INTEGER));
      root.appendChild(renderText(detail.actor_output, Number.MAX_SAFE_INTEGER));
    }
  }
  return performance.now() - started;
}

runBenchmark(async () => {
  const dir = path.join(scratch('viewer'), 'sessions');
  fs.rmSync(dir, { recursive: true, force: true });
  const id = bigSession(dir);
  const megabytes = fs.statSync(path.join(dir, `${id}.jsonl`)).size / 1024 / 1024;
  const dom = installDom();
  try {
    await open(dir, id, false); // warm the page cache and the JIT for both
    const ours = await open(dir, id, false);
    const eager = await open(dir, id, true);
    const ratio = eager / ours;
    return {
      name: `opening a session of ${ITERATIONS} iterations (${megabytes.toFixed(0)} MB) in the viewer`,
      ours: `${ours.toFixed(0)} ms to the timeline`,
      baseline: `rendering every diff and output: ${eager.toFixed(0)} ms`,
      ratio,
      ratioText: `${ratio.toFixed(1)}× faster`,
      goal: 'timeline under 2 s; diffs rendered on demand',
      met: ours < 2000,
    };
  } finally {
    dom.remove();
  }
});
