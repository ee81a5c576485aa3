import assert from 'node:assert/strict';
import { quoteHiddenCharactersInDiffNames } from '../../src/text/terminalText.js';

describe('file names that hide characters, in a diff', () => {
  it('are quoted in every header line that names them, as git quotes them, and changed lines are left alone', () => {
    const diff = [
      'diff --git a/x\u202eexe.txt b/x\u202eexe.txt',
      'index 1111111..2222222 100644',
      '--- a/x\u202eexe.txt',
      '+++ b/x\u202eexe.txt',
      '@@ -1,2 +1,2 @@',
      '--- a/looks\u202elike a header',
      '+++ b/looks\u202elike one too',
      ' context',
      'diff --git a/img\u200b.png b/img\u200b.png',
      'new file mode 100644',
      'Binary files /dev/null and b/img\u200b.png differ',
      'diff --git "a/tab\\there\u2066" b/plain',
      'rename from "tab\\there\u2066"',
      'rename to plain',
      'diff --git a/with space\u202e.txt b/with space\u202e.txt',
      '--- a/with space\u202e.txt\t',
      '+++ b/with space\u202e.txt\t',
      '',
    ].join('\n');
    assert.deepEqual(quoteHiddenCharactersInDiffNames(diff).split('\n'), [
      'diff --git "a/x\\342\\200\\256exe.txt" "b/x\\342\\200\\256exe.txt"',
      'index 1111111..2222222 100644',
      '--- "a/x\\342\\200\\256exe.txt"',
      '+++ "b/x\\342\\200\\256exe.txt"',
      '@@ -1,2 +1,2 @@',
      '--- a/looks\u202elike a header',
      '+++ b/looks\u202elike one too',
      ' context',
      'diff --git "a/img\\342\\200\\213.png" "b/img\\342\\200\\213.png"',
      'new file mode 100644',
      'Binary files /dev/null and "b/img\\342\\200\\213.png" differ',
      'diff --git "a/tab\\there\\342\\201\\246" b/plain',
      'rename from "tab\\there\\342\\201\\246"',
      'rename to plain',
      'diff --git "a/with space\\342\\200\\256.txt" "b/with space\\342\\200\\256.txt"',
      '--- "a/with space\\342\\200\\256.txt"\t',
      '+++ "b/with space\\342\\200\\256.txt"\t',
      '',
    ]);
  });

  it('leave a diff without them as it is', () => {
    const diff = 'diff --git a/ünï.txt b/ünï.txt\n--- a/ünï.txt\n+++ b/ünï.txt\n@@ -1 +1 @@\n-a\n+b\n';
    assert.equal(quoteHiddenCharactersInDiffNames(diff), diff);
  });
});
