/**
 * Retakes the README's screenshot of the stats page (`media/readme/browser-stats.png`):
 * `codeloops ui` (the built `dist/cli.js`) over a data folder of three months of made-up
 * use, shot in Debian's Chromium with playwright-core, as the server tier shoots its pages.
 * The sessions have what the stats count per task: tasks resumed across sessions, DONEs
 * the gate refused, verified successes (some on the start's tests), costs and tokens,
 * four pairs of agents. The same seed gives the same picture.
 *
 *   node esbuild.mjs && node esbuild.mjs --tests && node out/test/support/readmeScreenshots.js
 *
 * The picture ships in the VSIX: where pngquant is installed (Debian's `pngquant`), it
 * is made a palette image, a fifth of the size.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { cliPath } from './cliProcess.js';
import { endLine, iterationLine, startLine, writeSession } from './sessionFixtures.js';
import { repoRoot } from './testEnvironment.js';
import { pick, seededRandom } from './seededRandom.js';

const CHROMIUM = { executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'] };
const DAY_MS = 24 * 3600 * 1000;
const TASKS = 900;
const DAYS = 90;

const PROJECTS = [
  ['storefront', 30],
  ['payments-api', 20],
  ['mobile-app', 14],
  ['design-system', 9],
  ['data-pipeline', 8],
  ['auth-service', 6],
  ['docs', 5],
  ['infra', 4],
] as const;

/** Actor and critic, their models, their dollars per iteration and how often they succeed. */
interface Pair {
  actor_agent: string;
  critic_agent: string;
  actor_model: string;
  critic_model: string;
  cost: number;
  skill: number;
}

const PAIRS: ReadonlyArray<readonly [Pair, number]> = [
  [{ actor_agent: 'Claude Code', critic_agent: 'Claude Code', actor_model: 'sonnet', critic_model: 'opus', cost: 0.42, skill: 0.8 }, 50],
  [{ actor_agent: 'Codex', critic_agent: 'Claude Code', actor_model: 'gpt-5', critic_model: 'sonnet', cost: 0.31, skill: 0.72 }, 22],
  [{ actor_agent: 'Gemini CLI', critic_agent: 'Codex', actor_model: 'gemini-2.5-pro', critic_model: 'gpt-5', cost: 0.24, skill: 0.64 }, 16],
  [{ actor_agent: 'OpenCode', critic_agent: 'Claude Code', actor_model: 'sonnet', critic_model: 'sonnet', cost: 0.27, skill: 0.68 }, 12],
];

const PROMPTS = [
  'Add input validation to the registration endpoint',
  'Fix the flaky login test',
  'Refactor the payment module into smaller services',
  'Document the CLI flags',
  'Speed up the report query',
  'Migrate the settings page to the new form library',
  'Add retries to the webhook sender',
];

const FEEDBACK = [
  'The empty email case is not handled: the endpoint returns 500.',
  'The test still sleeps for a fixed time; wait for the event instead.',
  'npm test fails: 2 tests in payments.test.ts.',
  'The new flag is not documented in the README table.',
];

/** Three months of tasks, each one session or, now and then, a session resumed once. */
function writeSessions(dir: string): number {
  const random = seededRandom(20251129);
  let sessions = 0;
  for (let task = 0; task < TASKS; task++) {
    const day = Math.floor(random() ** 0.9 * DAYS);
    const started = Date.UTC(2025, 5, 1) + day * DAY_MS + (8 * 3600 + Math.floor(random() * 11 * 3600)) * 1000;
    const project = pick(random, PROJECTS);
    const pair = pick(random, PAIRS);
    const { cost, skill, ...agents } = pair;
    // Better over time, as prompts and checks improve.
    const succeeds = random() < skill * (0.75 + (0.35 * day) / DAYS);
    const iterations = succeeds
      ? pick(random, [
          [1, 42],
          [2, 30],
          [3, 15],
          [4, 8],
          [5, 3],
          [7, 2],
        ] as const)
      : pick(random, [
          [2, 35],
          [3, 35],
          [10, 30],
        ] as const);
    // Some tasks stop halfway (interrupted or failed) and are resumed later.
    const resumedAt = iterations >= 2 && random() < 0.14 ? 1 + Math.floor(random() * (iterations - 1)) : null;
    const outcome = succeeds
      ? 'success'
      : iterations === 10
        ? 'max_iterations_reached'
        : pick(random, [
            ['failed', 55],
            ['interrupted', 45],
          ] as const);
    const prompt = `${PROMPTS[task % PROMPTS.length]} (#${task})`;
    const working_dir = `/home/dev/${project}`;
    const parts: Array<{ from: number; to: number; outcome: string }> =
      resumedAt === null
        ? [{ from: 1, to: iterations, outcome }]
        : [
            { from: 1, to: resumedAt, outcome: random() < 0.6 ? 'interrupted' : 'failed' },
            { from: resumedAt + 1, to: iterations, outcome },
          ];
    let previous: string | null = null;
    let at = started;
    let spent = 0;
    for (const part of parts) {
      const timestamp = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const lines = [
        startLine({
          prompt,
          timestamp,
          working_dir,
          ...agents,
          ...(previous ? { resumed_from: previous, resumed_after_iteration: part.from - 1 } : {}),
        }),
      ];
      let seconds = 0;
      for (let n = part.from; n <= part.to; n++) {
        const last = n === iterations && succeeds;
        const refused = !last && random() < 0.05;
        const iterationSeconds = 60 + Math.floor(random() * 300);
        seconds += iterationSeconds;
        spent += cost * (0.6 + random() * 0.8);
        lines.push(
          iterationLine(n, {
            critic_decision: last ? 'DONE' : 'CONTINUE',
            feedback: last
              ? null
              : pick(
                  random,
                  FEEDBACK.map((text) => [text, 1] as const),
                ),
            ...(refused ? { critic_verdict: 'DONE', failed_checks: ['test'] } : {}),
            actor_duration_secs: iterationSeconds * 0.7,
            timestamp,
          }),
        );
      }
      const ends = part.to === iterations;
      const verified = ends && succeeds && random() < 0.82;
      const onStartTests = verified && random() < 0.55;
      lines.push(
        endLine({
          outcome: part.outcome,
          iterations: part.to,
          summary: ends && succeeds ? 'Done' : null,
          duration_secs: seconds,
          // A resumed session's totals carry the sessions before it.
          total_cost_usd: Math.round(spent * 100) / 100,
          total_tokens: Math.round(spent * 95_000),
          timestamp,
          ...(ends && succeeds
            ? {
                verification: verified ? 'verified' : 'unverified',
                ...(verified
                  ? {
                      verified_by: {
                        start_tests: onStartTests ? { passed: 20 + Math.floor(random() * 200), flaky: 0 } : null,
                        new_tests: Math.floor(random() * 3),
                        exit_code_checks: [],
                        critic_commands: onStartTests ? 0 : 1,
                      },
                    }
                  : {}),
              }
            : {}),
        }),
      );
      previous = writeSession(dir, lines);
      sessions++;
      at += (seconds + 3600 + Math.floor(random() * 20 * 3600)) * 1000;
    }
  }
  return sessions;
}

/** `codeloops ui --no-open --port 0` over the data folder; resolves with its address once it listens. */
function startUi(env: Record<string, string>) {
  const child = spawn(process.execPath, [cliPath(), 'ui', '--no-open', '--port', '0'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      const line = /^(http:\S+)\n/m.exec(output);
      if (line) resolve(line[1]!.replace(/\/$/, ''));
    });
    child.on('exit', (code) => reject(new Error(`codeloops ui exited (${code})`)));
  });
  return { child, url };
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'codeloops-screenshots-'));
  const env = { XDG_DATA_HOME: path.join(root, 'data'), XDG_CONFIG_HOME: path.join(root, 'config') };
  const count = writeSessions(path.join(env.XDG_DATA_HOME, 'codeloops', 'sessions'));
  const ui = startUi(env);
  const browser = await chromium.launch(CHROMIUM);
  try {
    const url = await ui.url;
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, colorScheme: 'light' });
    await page.goto(`${url}/stats`);
    await page.locator('.agents-table tbody tr').first().waitFor();
    await page.locator('svg.chart').nth(3).waitFor();
    const target = path.join(repoRoot(), 'media', 'readme', 'browser-stats.png');
    await page.screenshot({ path: target, fullPage: true });
    const quantized = spawnSync('pngquant', ['--force', '--skip-if-larger', '--strip', '--output', target, '256', '--', target]);
    const note = quantized.error
      ? 'not made smaller: no pngquant'
      : quantized.status === 0
        ? 'made smaller by pngquant'
        : `pngquant exited ${quantized.status}`;
    process.stdout.write(`${count} sessions; ${path.relative(repoRoot(), target)} taken (${note})\n`);
  } finally {
    await browser.close();
    ui.child.kill();
    if (!process.env.KEEP_TEST_DIRS) fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
