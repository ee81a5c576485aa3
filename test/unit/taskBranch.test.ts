import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { taskBranch, taskSlug } from '../../src/sessionFormat/queueRecords.js';

/** What git says of a branch name: `git check-ref-format --branch` exits 0 only for a name it takes. */
function gitTakes(branch: string): boolean {
  return spawnSync('git', ['check-ref-format', '--branch', branch], { encoding: 'utf8' }).status === 0;
}

describe('a queued task’s branch name (taskBranch)', () => {
  const titles: [string, string][] = [
    ['Bump to v1..2', 'bump-to-v1-2'],
    ['Fix the parser..', 'fix-the-parser'],
    ['Revert HEAD@{1} and main@{upstream}', 'revert-head-1-and-main-upstream'],
    ['Remove the stale index.lock', 'remove-the-stale-index-lock'],
    ['refs.lock', 'refs-lock'],
    ['Ends with a dot.', 'ends-with-a-dot'],
    ['-leading dash --and --force', 'leading-dash-and-force'],
    ['/leading/slash//double/', 'leading-slash-double'],
    ['tab\there NUL\u0000bell\u0007 DEL\u007f escape\u001b[31m', 'tab-here-nul-bell-del-escape-31m'],
    ['first line\nsecond line', 'first-line'],
    ['~ ^ : ? * [ \\ space', 'space'],
    ['🚀 Ship it 🎉', 'ship-it'],
    ['🚀🎉', 'task'],
    ['Ünïcödé façade naïve', 'unicode-facade-naive'],
    ['@', 'task'],
    ['', 'task'],
    ['   \n\n  second line is the title', 'second-line-is-the-title'],
    [`${'word '.repeat(50)}`, 'word-word-word-word-word-word-word-word'],
    ['a'.repeat(500), 'a'.repeat(40)],
  ];

  for (const [title, slug] of titles) {
    it(`${JSON.stringify(title.length > 60 ? `${title.slice(0, 60)}…` : title)} → codeloops/7-${slug}, a name git takes`, () => {
      assert.equal(taskSlug(title), slug);
      const branch = taskBranch(7, title);
      assert.equal(branch, `codeloops/7-${slug}`);
      assert.ok(gitTakes(branch), `git refuses ${branch}`);
      assert.ok(branch.length <= 'codeloops/7-'.length + 40);
    });
  }

  it('the names tested are ones git would refuse as they were typed (so the test can tell)', () => {
    for (const refused of ['v1..2', 'x@{1}', 'a.lock', 'dot.', '-dash', 'tab\there', 'bell\u0007', 'a b', 'a:b', 'a//b', 'trailing/'])
      assert.equal(gitTakes(refused), false, refused);
  });
});
