import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readGroup } from '../../src/candidates/groupRecord.js';
import { applyOutcomeSchema } from '../../src/sessionFormat/applyOutcome.js';
import { groupComparisonSchema, parseCandidateStreamEvent, type CandidateStreamEvent, type GroupComparison } from '../../src/sessionFormat/candidateGroups.js';
import { groupsDir } from '../../src/sessionFormat/candidateGroupFiles.js';
import { runEventSchema } from '../../src/sessionFormat/runEvents.js';
import { runCli, startCli } from '../support/cliProcess.js';
import { isRunning } from '../support/processes.js';
import { carryOn, done, scriptedCliSetup, type AgentScript, type ScriptStep } from '../support/scriptedAgent.js';
import { readJsonLines } from '../support/scriptedLoop.js';
import { assertValidSessionFile } from '../support/sessionFormatCheck.js';
import { git, removeTempDirs, treeOf, twoProgramsOfOneName, writeFile } from '../support/testEnvironment.js';

const ranking = (order: string[], reasoning = 'the first is the cleanest'): ScriptStep => ({
  print: `Compared them.\n<decision>${JSON.stringify({ type: 'ranking', ranking: order, reasoning })}</decision>`,
});

/**
 * A repository as a user has it mid-work: a commit, an uncommitted edit, an untracked
 * file, an ignored secret, and a project file naming what each worktree gets.
 */
function groupSetup(script: AgentScript, projectToml = '[worktree]\ncopy = [".env", ".env.local"]\n') {
  const setup = scriptedCliSetup(script);
  const { repo } = setup;
  writeFile(repo, '.gitignore', '.env\n');
  writeFile(repo, 'a.txt', 'base\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'a');
  writeFile(repo, 'a.txt', 'edited by the user\n');
  writeFile(repo, 'notes/untracked.txt', 'not committed yet\n');
  writeFile(repo, '.env', 'SECRET=1\n');
  writeFile(repo, 'codeloops.toml', projectToml);
  return { ...setup, groupsDirectory: groupsDir({ XDG_DATA_HOME: setup.home.dataHome }) };
}

/** What a user's git has besides the files: HEAD, branches, the index's bytes, the stash. */
function userGitState(repo: string): string {
  const index = createHash('sha256')
    .update(fs.readFileSync(path.join(repo, '.git', 'index')))
    .digest('hex');
  return JSON.stringify({
    head: git(repo, 'rev-parse', 'HEAD'),
    branches: git(repo, 'for-each-ref', 'refs/heads', 'refs/stash'),
    status: git(repo, 'status', '--porcelain', '--untracked-files=all'),
    index,
  });
}

function events(stdout: string): CandidateStreamEvent[] {
  return stdout.split('\n').flatMap((line) => {
    const event = parseCandidateStreamEvent(line);
    return event ? [event] : [];
  });
}

async function comparisonOf(repo: string, env: Record<string, string>, group = 'latest'): Promise<GroupComparison> {
  const result = await runCli(['candidates', group, '--json'], { cwd: repo, env });
  assert.equal(result.code, 0, result.stderr);
  return groupComparisonSchema.parse(JSON.parse(result.stdout));
}

describe('candidate groups (the built CLI, scripted agents in real repositories)', () => {
  after(removeTempDirs);

  it('runs three candidates at once in worktrees of the same starting tree, never touching the user’s tree, and ranks them', async () => {
    const { repo, env, home, agent, groupsDirectory } = groupSetup({
      critic: [[ranking(['B', 'A'])]],
      candidates: {
        'command#1': { actor: [[{ write: { path: 'hello.txt', content: 'hello from one\n' } }, { sleep: 1500 }]], critic: [[done('one did it', 0.7)]] },
        'command#2': {
          actor: [[{ write: { path: 'hello.txt', content: 'hi\n' } }, { write: { path: 'a.txt', content: 'edited by two\n' } }, { sleep: 1500 }]],
          critic: [[done('two did it', 0.9)]],
        },
        'command#3': { actor: [[{ sleep: 1500 }]], critic: [[carryOn('nothing done')]] },
      },
    });
    const before = treeOf(repo);
    const gitBefore = userGitState(repo);
    const run = startCli(['run', '--parallel', '3', '--jobs', '3', '-n', '2', '-p', 'Greet', '--trust', '--events', 'ndjson'], { cwd: repo, env });
    // All three actors at work at the same time: the user's files and git are as they were.
    let stdout = '';
    run.child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    await waitFor(() => {
      const working = events(stdout).filter((event) => event.type === 'candidate_event' && event.event.type === 'phase' && event.event.phase === 'actor');
      return new Set(working.map((event) => (event.type === 'candidate_event' ? event.label : ''))).size === 3;
    });
    assert.deepEqual(treeOf(repo), before, 'the working tree is untouched while the candidates run');
    assert.equal(userGitState(repo), gitBefore, 'HEAD, branches, index and status too');
    const result = await run.done;
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(treeOf(repo), before);
    assert.equal(userGitState(repo), gitBefore);

    // The three really overlapped: each actor started before any finished.
    const stream = events(result.stdout);
    const firstFinish = stream.findIndex((event) => event.type === 'candidate_event' && event.event.type === 'agent_finished');
    const starts = stream.filter(
      (event, index) => index < firstFinish && event.type === 'candidate_event' && event.event.type === 'phase' && event.event.phase === 'actor',
    );
    assert.equal(starts.length, 3);
    for (const event of stream) if (event.type === 'candidate_event') runEventSchema.parse(event.event);

    const comparison = await comparisonOf(repo, env);
    assert.equal(comparison.status, 'finished');
    assert.deepEqual(
      comparison.candidates.map((row) => [row.label, row.status, row.rank]),
      [
        ['command#2', 'success', 1],
        ['command#1', 'success', 2],
        ['command#3', 'max_iterations_reached', 3],
      ],
      'the judge (B = command#2) breaks the tie between the two successes; the one at its limit comes last',
    );
    assert.equal(comparison.winner, 'command#2');
    assert.equal(comparison.judge?.reasoning, 'the first is the cleanest');
    assert.equal(comparison.judge_overruled, undefined, 'the judge had the last word');
    const two = comparison.candidates[0]!;
    assert.deepEqual([two.files_changed, two.insertions, two.deletions, two.confidence, two.iterations], [2, 2, 1, 0.9, 1]);
    assert.deepEqual([comparison.candidates[2]!.files_changed, comparison.candidates[2]!.iterations], [0, 2]);
    // The judge saw both finished diffs side by side, by letter only.
    const judgePrompt = agent.prompt('critic', 1);
    assert.match(judgePrompt, /## Candidate A[\s\S]*\+hello from one[\s\S]*## Candidate B[\s\S]*\+hi/);
    assert.doesNotMatch(judgePrompt, /command#/);

    for (const row of comparison.candidates) {
      const { start } = assertValidSessionFile(path.join(home.sessionsDir, `${row.session_id}.jsonl`));
      assert.equal(start.candidate_group, comparison.group_id);
      assert.equal(start.candidate, row.label);
      assert.equal(path.basename(start.working_dir), path.basename(repo), "the session's project reads as the user's");
      assert.ok(!start.working_dir.startsWith(repo + path.sep) && start.working_dir.startsWith(home.dataHome), 'the worktree is outside the repository');
      // Every candidate started from the user's tree as it was: the uncommitted edit and the untracked file, but not the ignored file...
      const pre = `refs/codeloops/${row.session_id}/1/pre`;
      assert.equal(git(repo, 'show', `${pre}:a.txt`), 'edited by the user\n');
      assert.equal(git(repo, 'show', `${pre}:notes/untracked.txt`), 'not committed yet\n');
      // ...which [worktree] copy brought in (.env.local, absent, was said so).
      assert.equal(fs.readFileSync(path.join(row.worktree!, '.env'), 'utf8'), 'SECRET=1\n');
      const prepared = readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', row.session_id!, 'events.jsonl')).find(
        (event) => event.type === 'worktree_prepared',
      );
      assert.deepEqual([prepared?.copied, prepared?.not_found], [['.env'], ['.env.local']]);
    }
    const state = await readGroup(groupsDirectory, comparison.group_id);
    assert.equal(state.end?.status, 'finished');
    assert.deepEqual(state.end?.ranking, ['command#2', 'command#1', 'command#3']);
  });

  it('ranks by the checks really run in each worktree: more checks passed first, above the outcome and the judge', async () => {
    // A required check and an advisory one, run by each candidate's loop on its own worktree.
    const checksToml =
      '[[checks]]\nname = "tests"\nrun = "test -f tests-pass.txt"\n\n[[checks]]\nname = "lint"\nrun = "test -f lint-clean.txt"\nrequired = false\n';
    const write = (name: string): ScriptStep => ({ write: { path: name, content: `${name}\n` } });
    const { repo, env } = groupSetup(
      {
        critic: [[ranking(['A', 'B', 'C'], 'A reads best')]], // the judge prefers the first candidate
        candidates: {
          'command#1': { actor: [[write('tests-pass.txt')]], critic: [[done('one', 0.9)]] },
          'command#2': { actor: [[write('tests-pass.txt'), write('lint-clean.txt')]], critic: [[done('two', 0.9)]] },
          // Both checks pass, but its critic wants more and its one iteration is used up.
          'command#3': { actor: [[write('tests-pass.txt'), write('lint-clean.txt')]], critic: [[carryOn('not yet')]] },
          // Its required check fails: its DONE is refused.
          'command#4': { actor: [[write('lint-clean.txt')]], critic: [[done('four', 0.9)]] },
        },
      },
      checksToml,
    );
    const result = await runCli(['run', '--parallel', '4', '--jobs', '4', '-n', '1', '-p', 'Make the checks pass', '--trust', '--json-output'], {
      cwd: repo,
      env,
    });
    assert.equal(result.code, 0, result.stderr);
    const comparison = groupComparisonSchema.parse(JSON.parse(result.stdout));
    assert.deepEqual(comparison.judge?.ranking.slice(0, 2), ['command#1', 'command#2'], 'the judge put the first candidate first');
    assert.deepEqual(
      comparison.candidates.map((row) => [row.label, row.status, row.checks_passed, row.checks_total, row.required_checks_failed, row.rank]),
      [
        ['command#2', 'success', 2, 2, 0, 1],
        ['command#3', 'max_iterations_reached', 2, 2, 0, 2],
        ['command#1', 'success', 1, 2, 0, 3],
        ['command#4', 'max_iterations_reached', 1, 2, 1, 4],
      ],
    );
    assert.equal(comparison.winner, 'command#2');
    assert.deepEqual(comparison.judge_overruled, { judged_first: 'command#1', ranked_first: 'command#2', by: 'checks' });

    // In words, the judge's reasoning for the candidate that lost comes after what overruled it.
    const text = await runCli(['candidates', comparison.group_id], { cwd: repo, env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /Judge \(Command\)\n {2}The judge ranked command#1 first, but command#2 passed 2 of 2 checks and command#1 1 of 2: checks come first\.\n {2}A reads best\n/,
    );
  });

  it('applies exactly the winner’s changes, refuses a conflict with nothing changed, and undoes', async () => {
    const { repo, env } = groupSetup({
      critic: [[ranking(['A', 'B'])]],
      candidates: {
        'command#1': {
          actor: [
            [{ write: { path: 'hello.txt', content: 'hi\n' } }, { write: { path: 'a.txt', content: 'edited by one\n' } }, { delete: 'notes/untracked.txt' }],
          ],
          critic: [[done('one', 0.9)]],
        },
        'command#2': { actor: [[{ write: { path: 'other.txt', content: 'two\n' } }]], critic: [[done('two', 0.9)]] },
      },
    });
    const result = await runCli(['run', '--parallel', '2', '-p', 'Greet', '--trust', '--json-output'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const comparison = groupComparisonSchema.parse(JSON.parse(result.stdout));
    const winner = comparison.candidates[0]!;
    assert.equal(winner.label, 'command#1');
    const before = treeOf(repo);
    const headBefore = git(repo, 'rev-parse', 'HEAD');

    // The user changed a file the winner changed: nothing happens.
    writeFile(repo, 'a.txt', 'the user kept working\n');
    const changed = treeOf(repo);
    const refused = await runCli(['apply', winner.session_id!, '--json'], { cwd: repo, env });
    assert.equal(refused.code, 4, refused.stderr);
    const conflict = applyOutcomeSchema.parse(JSON.parse(refused.stdout));
    assert.equal(conflict.result, 'conflict');
    assert.deepEqual(conflict.conflicts, ['a.txt']);
    assert.deepEqual(treeOf(repo), changed, 'a conflict changes nothing');
    assert.ok(fs.existsSync(winner.worktree!), 'nor removes any worktree');

    writeFile(repo, 'a.txt', 'edited by the user\n');
    const applied = await runCli(['apply', winner.session_id!, '--json'], { cwd: repo, env });
    assert.equal(applied.code, 0, applied.stderr);
    const outcome = applyOutcomeSchema.parse(JSON.parse(applied.stdout));
    assert.equal(outcome.result, 'applied');
    const expected: Record<string, string> = { ...before, 'hello.txt': 'hi\n', 'a.txt': 'edited by one\n' };
    delete expected['notes/untracked.txt'];
    assert.deepEqual(treeOf(repo), expected, "exactly the winner's changes, nothing of the other candidate");
    assert.equal(git(repo, 'rev-parse', 'HEAD'), headBefore);
    assert.deepEqual(outcome.worktrees_removed.sort(), ['command#1', 'command#2']);
    for (const row of comparison.candidates) assert.ok(!fs.existsSync(row.worktree!), `${row.label}'s worktree is gone`);
    assert.equal(git(repo, 'worktree', 'list', '--porcelain').match(/^worktree /gm)?.length, 1, 'git has forgotten them too');
    assert.equal((await comparisonOf(repo, env, comparison.group_id)).applied?.label, 'command#1');

    const undone = await runCli(['apply', '--undo', winner.session_id!], { cwd: repo, env });
    assert.equal(undone.code, 0, undone.stderr);
    assert.deepEqual(treeOf(repo), before);
    assert.equal((await comparisonOf(repo, env, comparison.group_id)).applied, null);

    // Deleting a candidate whose worktree is gone still finds its snapshots, in the user's repository.
    const loser = comparison.candidates[1]!.session_id!;
    assert.notEqual(git(repo, 'for-each-ref', `refs/codeloops/${loser}/`), '');
    const deleted = await runCli(['sessions', 'delete', loser, '--json'], { cwd: repo, env });
    assert.equal(deleted.code, 0, deleted.stderr);
    const report = JSON.parse(deleted.stdout) as { snapshot_refs: number; warnings: string[] };
    assert.ok(report.snapshot_refs > 0, deleted.stdout);
    assert.deepEqual(report.warnings, []);
    assert.equal(git(repo, 'for-each-ref', `refs/codeloops/${loser}/`), '');
  });

  it('a failing setup fails only its candidate, with its output recorded', async () => {
    // The setup fails in the second candidate's worktree only (its folder is named 2).
    const { repo, env, home } = groupSetup(
      { candidates: { 'command#1': { actor: [[{ write: { path: 'x.txt', content: 'x\n' } }]], critic: [[done()]] } } },
      '[worktree]\nsetup = "echo installing; test \\"$(basename \\"$(dirname \\"$PWD\\")\\")\\" != 2 || { echo broken >&2; exit 3; }"\n',
    );
    const result = await runCli(['run', '--parallel', '2', '-p', 'Make x', '--trust', '--json-output', '--no-judge'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const comparison = groupComparisonSchema.parse(JSON.parse(result.stdout));
    assert.deepEqual(
      comparison.candidates.map((row) => [row.label, row.status]),
      [
        ['command#1', 'success'],
        ['command#2', 'failed'],
      ],
    );
    const failed = comparison.candidates[1]!;
    const { end } = assertValidSessionFile(path.join(home.sessionsDir, `${failed.session_id}.jsonl`));
    assert.equal(end?.error_code, 'setup_failed');
    assert.equal(end?.iterations, 0);
    const prepared = readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', failed.session_id!, 'events.jsonl')).find(
      (event) => event.type === 'worktree_prepared',
    ) as { setup: { passed: boolean; exit_code: number; output: string } };
    assert.deepEqual([prepared.setup.passed, prepared.setup.exit_code], [false, 3]);
    assert.match(prepared.setup.output, /installing[\s\S]*broken/);
  });

  it("runs a project's checks in each worktree's copy of its codeloops.toml's folder, wherever -d points", async () => {
    const { repo, env, home } = groupSetup(
      { actor: [[{ write: { path: 'x.txt', content: 'x\n' } }]], critic: [[done()]] },
      '[[checks]]\nname = "tests"\nrun = "./where.sh"\n',
    );
    twoProgramsOfOneName(repo, 'top');
    const result = await runCli(['run', '--parallel', '2', '-d', 'sub', '-p', 'Make x', '--trust', '--json-output', '--no-judge'], { cwd: repo, env });
    assert.equal(result.code, 0, result.stderr);
    const comparison = groupComparisonSchema.parse(JSON.parse(result.stdout));
    for (const row of comparison.candidates) {
      assert.deepEqual([row.status, row.checks_passed, row.checks_total], ['success', 1, 1], row.label);
      const [check] = readJsonLines(path.join(home.dataHome, 'codeloops', 'sidecars', row.session_id!, 'events.jsonl')).filter(
        (event) => event.type === 'check_finished',
      );
      // The worktree is gone by now; its top was where the check ran.
      assert.equal(check?.output, `where.sh ran in ${row.worktree}\n`, row.label);
    }
  });

  it('candidates do not pause for review: --review is refused, review = "pause" in the config is said not to apply', async () => {
    const { repo, env, groupsDirectory } = groupSetup({ actor: [[{ write: { path: 'a.txt', content: 'x\n' } }]], critic: [[done()]] }, 'review = "pause"\n');
    const refused = await runCli(['run', '--parallel', '2', '--review', '-p', 'Greet', '--trust'], { cwd: repo, env });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /candidates run side by side unattended[\s\S]*codeloops candidates/);
    assert.deepEqual(fs.existsSync(groupsDirectory) ? fs.readdirSync(groupsDirectory) : [], [], 'no group was started');

    const ran = await runCli(['run', '--parallel', '2', '-p', 'Greet', '--trust', '--no-judge'], { cwd: repo, env });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /review = "pause" does not pause candidates/);
  });

  it('Ctrl+C stops every candidate: each session ends interrupted', async () => {
    const { repo, env, home, groupsDirectory } = groupSetup({ actor: [[{ sleep: 60_000 }]], critic: [[done()]] });
    const run = startCli(['run', '--parallel', '2', '-p', 'Wait', '--trust'], { cwd: repo, env });
    await run.waitForStderr(/actor working…[\s\S]*actor working…/);
    run.child.kill('SIGINT');
    const result = await run.done;
    assert.equal(result.code, 130, result.stderr);
    const comparison = await comparisonOf(repo, env);
    assert.equal(comparison.status, 'interrupted');
    for (const row of comparison.candidates) {
      assert.equal(row.status, 'interrupted');
      assert.equal(assertValidSessionFile(path.join(home.sessionsDir, `${row.session_id}.jsonl`)).end?.outcome, 'interrupted');
    }
    assert.equal((await readGroup(groupsDirectory, comparison.group_id)).end?.status, 'interrupted');
  });

  it('after a SIGKILL every session is readable; the next run refuses while its agents run, then prunes the worktrees (saving unsnapshotted edits)', async () => {
    const { repo, env, home, agent, groupsDirectory } = groupSetup({
      actor: [[{ write: { path: 'again.txt', content: 'again\n' } }, { sleep: 1 }]],
      critic: [[done()]],
      candidates: {
        'command#1': { actor: [[{ write: { path: 'half-done.txt', content: 'in progress\n' } }, { sleep: 60_000 }]] },
        'command#2': { actor: [[{ sleep: 60_000 }]] },
      },
    });
    const run = startCli(['run', '--parallel', '2', '-p', 'Work', '--trust'], { cwd: repo, env });
    await run.waitForStderr(/actor working…[\s\S]*actor working…/);
    await waitFor(
      () => agent.calls('command#1-actor') === 1 && agent.calls('command#2-actor') === 1 && fs.existsSync(path.join(agent.dir, 'command#1-actor-1.env')),
    );
    run.child.kill('SIGKILL');
    await run.done;
    const crashed = await comparisonOf(repo, env);
    assert.equal(crashed.status, 'crashed');
    const worktrees = crashed.candidates.map((row) => row.worktree);

    // Its agents (their own process groups) outlive it. While they run, the next run touches nothing and names one to stop.
    const agentGroups = (['command#1-actor', 'command#2-actor'] as const).map((role) => Number(agent.envSeen(role, 1).pid));
    const whileAgentsRun = await runCli(['run', '--candidates', 'command', '-p', 'Again', '--trust', '--json-output'], { cwd: repo, env });
    assert.equal(whileAgentsRun.code, 2, whileAgentsRun.stderr);
    const refusal = JSON.parse(whileAgentsRun.stdout) as { error_code: string; error: string; error_details: Record<string, unknown>; session_id: null };
    assert.equal(refusal.error_code, 'loop_running');
    assert.equal(refusal.session_id, null);
    assert.ok(agentGroups.includes(refusal.error_details.process_group as number), JSON.stringify(refusal.error_details));
    assert.equal(refusal.error_details.group_id, crashed.group_id);
    assert.match(refusal.error, new RegExp(`what it started still runs: process group ${String(refusal.error_details.process_group)}`));
    assert.ok(whileAgentsRun.stderr.includes(`kill -- -${String(refusal.error_details.process_group)}`), whileAgentsRun.stderr);
    for (const pid of agentGroups) assert.ok(isRunning(pid), 'the agents were not stopped');
    for (const worktree of worktrees) assert.ok(fs.existsSync(worktree!), `${worktree} is still there`);
    assert.equal(
      git(repo, 'for-each-ref', `refs/codeloops/${crashed.group_id}/`, '--format=%(refname)').includes('/kept'),
      false,
      'no half-made tree snapshotted',
    );
    assert.equal((await readGroup(groupsDirectory, crashed.group_id)).end, null, 'the group is not marked dealt with');
    assert.equal((await comparisonOf(repo, env)).group_id, crashed.group_id, 'no new group was started');
    // Discarding the group by hand keeps those worktrees too, saying why.
    const discard = await runCli(['candidates', crashed.group_id, '--discard', '--force', '--json'], { cwd: repo, env });
    assert.equal(discard.code, 4, discard.stderr);
    const kept = (JSON.parse(discard.stdout) as { kept: { label: string; reason: string }[] }).kept;
    assert.deepEqual(
      kept.map((entry) => entry.label),
      ['command#1', 'command#2'],
    );
    for (const entry of kept) assert.match(entry.reason, /what its loop started still runs \(process group \d+\): stop it first/);
    for (const worktree of worktrees) assert.ok(fs.existsSync(worktree!), `${worktree} is still there`);

    // Stopped by hand (as its hint says, or as a reboot would): the agents are gone.
    for (const pid of agentGroups) {
      process.kill(-pid, 'SIGKILL');
      await waitFor(() => !isRunning(pid));
    }
    for (const row of crashed.candidates) {
      assert.equal(row.status, 'crashed');
      assert.equal(assertValidSessionFile(path.join(home.sessionsDir, `${row.session_id}.jsonl`)).end, null, 'readable, without an end');
      assert.ok(row.worktree && fs.existsSync(row.worktree));
    }
    // A session that never ended is not applied: said with its code, nothing in the user's tree changed.
    const treeBefore = git(repo, 'status', '--porcelain', '--untracked-files=all');
    const notEnded = await runCli(['apply', crashed.candidates[0]!.session_id!], { cwd: repo, env });
    assert.equal(notEnded.code, 2);
    assert.match(notEnded.stderr, /has not ended: wait for its loop to finish/);
    assert.equal(git(repo, 'status', '--porcelain', '--untracked-files=all'), treeBefore);

    const next = await runCli(['run', '--candidates', 'command', '-p', 'Again', '--trust'], { cwd: repo, env });
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stderr, new RegExp(`candidate group ${crashed.group_id} was left by a runner that stopped: removed its worktrees`));
    assert.match(next.stderr, /the worktree of command#1 held changes no snapshot had; they are kept in refs\/codeloops\/group-[^/]+\/1\/kept/);
    for (const worktree of worktrees) assert.ok(!fs.existsSync(worktree!), `${worktree} was pruned`);
    assert.equal(git(repo, 'show', `refs/codeloops/${crashed.group_id}/1/kept:half-done.txt`), 'in progress\n');
    assert.equal((await comparisonOf(repo, env, crashed.group_id)).status, 'crashed');
  });
});

async function waitFor(test: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!test()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
