import assert from 'node:assert/strict';
import { planCandidates } from '../../src/candidates/candidateSpecs.js';
import { judgeOverruled, rankCandidates } from '../../src/candidates/comparison.js';
import { parseConfigText, projectConfigSchema } from '../../src/config/configFiles.js';
import { programsOf } from '../../src/config/projectTrust.js';
import { buildJudgePrompt, parseRanking } from '../../src/critic/judgeCandidates.js';
import type { CandidateRow, Judgment } from '../../src/sessionFormat/candidateGroups.js';
import { judgeOverruledText } from '../../src/sessionFormat/groupWording.js';
import { isCodeloopsError } from '../../src/sessionFormat/failures.js';

function row(label: string, index: number, status: CandidateRow['status'], checksPassed: number | null = null): CandidateRow {
  return {
    index,
    label,
    agent: 'claude',
    model: null,
    session_id: null,
    status,
    progress: null,
    iterations: 1,
    checks_passed: checksPassed,
    checks_total: checksPassed === null ? null : 2,
    required_checks_failed: null,
    total_cost_usd: null,
    cost_estimated: false,
    total_tokens: 0,
    duration_secs: null,
    files_changed: null,
    insertions: null,
    deletions: null,
    confidence: null,
    summary: null,
    error: null,
    rank: null,
    worktree: null,
    applied: false,
  };
}

describe('candidates: plans, rankings, the judge’s contract, [worktree]', () => {
  it('plans agents and agent:model pairs; a name twice runs twice, with unique labels', () => {
    assert.deepEqual(
      planCandidates('claude,codex:gpt-5,claude', undefined, 'opencode').map((spec) => [spec.index, spec.label, spec.agent, spec.model]),
      [
        [1, 'claude#1', 'claude', null],
        [2, 'codex:gpt-5', 'codex', 'gpt-5'],
        [3, 'claude#2', 'claude', null],
      ],
    );
    assert.deepEqual(
      planCandidates(undefined, 3, 'opencode').map((spec) => spec.label),
      ['opencode#1', 'opencode#2', 'opencode#3'],
    );
    assert.deepEqual(
      planCandidates('claude,opencode:anthropic/claude-opus', 2, 'claude').map((spec) => spec.label),
      ['claude#1', 'opencode:anthropic/claude-opus#1', 'claude#2', 'opencode:anthropic/claude-opus#2'],
    );
    for (const [list, parallel, message] of [
      ['claude,,codex', undefined, /empty entry/],
      ['claud', undefined, /"claud" in --candidates is not an agent/],
      ['codex:', undefined, /names no model/],
      [undefined, 1, /at least 2/],
      ['claude', 21, /more than 20/],
    ] as const) {
      assert.throws(
        () => planCandidates(list, parallel, 'claude'),
        (error: unknown) => isCodeloopsError(error) && error.code === 'usage' && message.test(error.message),
      );
    }
  });

  it('ranks by checks passed first, then outcome, then the judge, then the order given', () => {
    const rows = [row('a', 1, 'success', 1), row('b', 2, 'failed', 2), row('c', 3, 'success', 1), row('d', 4, 'max_iterations_reached', 1)];
    assert.deepEqual(rankCandidates(rows, null), ['b', 'a', 'c', 'd']);
    const judgment = {
      ranking: ['c', 'a'],
      reasoning: '',
      source: 'block' as const,
      agent: 'x',
      model: null,
      answer: '',
      total_cost_usd: null,
      total_tokens: 0,
    };
    assert.deepEqual(rankCandidates(rows, judgment), ['b', 'c', 'a', 'd']);
    assert.deepEqual(rankCandidates([row('x', 1, 'failed'), row('y', 2, 'success')], null), ['y', 'x'], 'without checks, the outcome decides');
  });

  it('says when the checks or the outcome overruled the judge’s first choice, and in which words', () => {
    const judge = (...ranking: string[]): Judgment => ({
      ranking,
      reasoning: '',
      source: 'block',
      agent: 'x',
      model: null,
      answer: '',
      total_cost_usd: null,
      total_tokens: 0,
    });
    const overruled = (rows: CandidateRow[], judgment: Judgment | null) => {
      const verdict = judgeOverruled(rows, judgment, rankCandidates(rows, judgment));
      return [verdict, judgeOverruledText({ candidates: rows, judge_overruled: verdict })];
    };
    // The judge prefers b; a passed more checks.
    assert.deepEqual(overruled([row('a', 1, 'success', 2), row('b', 2, 'success', 1)], judge('b', 'a')), [
      { judged_first: 'b', ranked_first: 'a', by: 'checks' },
      'The judge ranked b first, but a passed 2 of 2 checks and b 1 of 2: checks come first.',
    ]);
    assert.deepEqual(overruled([row('a', 1, 'success', 0), row('b', 2, 'success')], judge('b', 'a')), [
      { judged_first: 'b', ranked_first: 'a', by: 'checks' },
      'The judge ranked b first, but a passed 0 of 2 checks and b ran none: checks come first.',
    ]);
    // Same checks; a succeeded, b reached its limit.
    assert.deepEqual(overruled([row('a', 1, 'success', 2), row('b', 2, 'max_iterations_reached', 2)], judge('b', 'a')), [
      { judged_first: 'b', ranked_first: 'a', by: 'outcome' },
      'The judge ranked b first, but a succeeded and b reached its iteration limit: the outcome comes before the judge.',
    ]);
    // The judge had its way, said nothing, or was not asked: nothing to say.
    for (const judgment of [judge('a', 'b'), judge(), null]) {
      assert.deepEqual(overruled([row('a', 1, 'success', 2), row('b', 2, 'success', 1)], judgment), [undefined, null]);
    }
    assert.deepEqual(overruled([row('a', 1, 'success', 2), row('b', 2, 'success', 2)], judge('b', 'a')), [undefined, null]);
  });

  it('reads the judge’s ranking from its last decision block, by letter, and refuses letters that are not there', () => {
    const labels = ['claude', 'codex', 'opencode'];
    const answer = (json: unknown) =>
      `I quote <decision>{"type":"ranking","ranking":["A"]}</decision> while thinking.\n<decision>${JSON.stringify(json)}</decision>`;
    assert.deepEqual(parseRanking(answer({ type: 'ranking', ranking: ['C', 'a'], reasoning: ' C is tidiest ' }), labels), {
      ranking: ['opencode', 'claude', 'codex'],
      reasoning: 'C is tidiest',
    });
    assert.equal(parseRanking(answer({ type: 'ranking', ranking: ['D'] }), labels), null);
    assert.equal(parseRanking(answer({ type: 'done', summary: 'x' }), labels), null);
    assert.equal(parseRanking('no block at all', labels), null);
    const prompt = buildJudgePrompt({
      task: 'Fix it',
      candidates: labels.map((label, index) => ({ label, facts: `ended success`, summary: null, diff: `+line ${index}`, tree: `/wt/${index + 1}` })),
    });
    assert.match(prompt, /## Candidate A[\s\S]*\+line 0[\s\S]*## Candidate C[\s\S]*\/wt\/3/);
    assert.doesNotMatch(prompt, /claude|codex|opencode/, 'the vendors stay hidden');
  });

  it('reads [worktree] copy and setup; setup counts as a program to trust; paths must stay inside', () => {
    const file = parseConfigText('codeloops.toml', '[worktree]\ncopy = [".env", "config/local.json"]\nsetup = "npm ci"\n', projectConfigSchema);
    assert.deepEqual(file.worktree, { copy: ['.env', 'config/local.json'], setup: 'npm ci' });
    assert.deepEqual(programsOf(file, '/repo'), [{ key: '[worktree] setup', runs: 'sh -c "npm ci"' }]);
    for (const bad of ['"/etc/passwd"', '"../secrets"', '"a/../../b"', '""']) {
      assert.throws(() => parseConfigText('codeloops.toml', `[worktree]\ncopy = [${bad}]\n`, projectConfigSchema), /must be a path inside the repository/);
    }
    assert.throws(() => parseConfigText('codeloops.toml', '[worktree]\ncopies = []\n', projectConfigSchema), /unknown key "worktree.copies"/);
  });
});
