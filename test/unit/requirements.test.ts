import assert from 'node:assert/strict';
import { parseCriticDecision } from '../../src/critic/criticDecision.js';
import { checklistOfCritic, confirmEvidence, fileReferences, judgeRequirements, type EvidenceRecord } from '../../src/critic/requirementEvidence.js';
import { parseTaskRequirements, requirementId } from '../../src/critic/taskRequirements.js';
import { requirementLine } from '../../src/sessionFormat/verification.js';

describe("the task's requirements: the checklist from its prompt", () => {
  it('reads each item verbatim under a Markdown heading or a line ending in a colon, bullets and numbers, as REQ1, REQ2…', () => {
    const prompt = [
      'Add a product function.',
      '',
      '## Requirements',
      '- `product(a, b)` returns a * b',
      '* it is exported from src/sum.js',
      '',
      'Acceptance criteria:',
      '1. the tests pass',
      '2) a test covers product',
      '',
      'Thanks!',
    ].join('\n');
    assert.deepEqual(parseTaskRequirements(prompt), [
      { id: 'REQ1', text: '`product(a, b)` returns a * b' },
      { id: 'REQ2', text: 'it is exported from src/sum.js' },
      { id: 'REQ3', text: 'the tests pass' },
      { id: 'REQ4', text: 'a test covers product' },
    ]);
  });

  it('knows the headings people use, and nothing else: Verification plan, Definition of done, checkboxes', () => {
    assert.deepEqual(
      parseTaskRequirements('### Verification plan\n- [ ] run npm test\n- [x] read the diff').map((each) => each.text),
      ['run npm test', 'read the diff'],
    );
    assert.deepEqual(
      parseTaskRequirements('**Definition of done:**\n- shipped').map((each) => each.text),
      ['shipped'],
    );
    assert.deepEqual(parseTaskRequirements('## Notes\n- not a requirement\nSteps:\n- neither'), []);
    assert.deepEqual(parseTaskRequirements('Fix the bug in sum.'), [], 'no list: the critic lists them');
  });

  it('keeps continuation lines and nested items with their item, skips code fences, and ends the list at prose', () => {
    const prompt = [
      'Requirements:',
      '- handles negative numbers',
      '  and zero',
      '  - even -0',
      '- no new dependency',
      '```',
      '- not an item',
      '```',
      'The rest is context.',
      '- a later bullet that is not a requirement',
    ].join('\n');
    assert.deepEqual(
      parseTaskRequirements(prompt).map((each) => each.text),
      ['handles negative numbers and zero - even -0', 'no new dependency'],
    );
  });

  it('reads an id as a critic may write it', () => {
    assert.deepEqual(['REQ2', 'req-2', 'Req 2', ' 2 ', 'R2', 'REQ'].map(requirementId), ['REQ2', 'REQ2', 'REQ2', 'REQ2', null, null]);
  });
});

describe("a requirement's evidence, checked against the record", () => {
  const record: EvidenceRecord = {
    checks: [
      { name: 'tests', passed: true },
      { name: 'lint', passed: false },
    ],
    commands: [
      { tool: 'shell', command: "bash -lc 'npm test'", ok: true },
      { tool: 'Bash', command: 'node -e "require(\'./src/sum.js\').product(2, 3)"', ok: false },
      { tool: 'Bash', command: 'grep -n product src/sum.js', ok: null },
    ],
    lines: new Map([
      ['src/sum.js', 3],
      ['test/gone.test.js', undefined],
    ]),
  };

  it('a check that passed on the tree, a command the critic ran that did not fail, a file and line in the snapshot', () => {
    assert.equal(confirmEvidence('the tests check passed', record), 'check tests passed');
    assert.equal(confirmEvidence('ran `npm test`: 3 passing', record), "`bash -lc 'npm test'` ok");
    assert.equal(confirmEvidence('ran npm test, all pass', record), "`bash -lc 'npm test'` ok", 'the command written out, without quotes');
    assert.equal(confirmEvidence('`grep -n product src/sum.js` finds it', record), '`grep -n product src/sum.js` ran');
    assert.equal(confirmEvidence('src/sum.js:2 exports product', record), 'src/sum.js:2');
    assert.equal(confirmEvidence('see src/sum.js lines 1-3', record), 'src/sum.js:1');
  });

  it('what cannot be checked counts as none: a check that failed, a command never run or only failed, a line past the end, a file not there', () => {
    assert.equal(confirmEvidence('the lint check is clean', record), null);
    assert.equal(confirmEvidence('`npm run e2e` passes', record), null, 'never run');
    assert.equal(confirmEvidence('`node -e "require(\'./src/sum.js\').product(2, 3)"` prints 6', record), null, 'it failed');
    assert.equal(confirmEvidence('src/sum.js:40', record), null);
    for (const range of ['src/sum.js:2-40', 'src/sum.js#L2-L40', 'src/sum.js lines 2 to 40', 'src/sum.js:3-4'])
      assert.equal(confirmEvidence(range, record), null, `${range}: a range that runs past the end of a 3-line file`);
    assert.equal(confirmEvidence('test/gone.test.js:1', record), null);
    assert.equal(confirmEvidence('I read the code carefully and it is right', record), null);
    assert.equal(confirmEvidence('tests pass, and lint too', record), null, 'a named check that failed contradicts it');
  });

  it('finds files and lines as critics write them', () => {
    assert.deepEqual(fileReferences('src/a.ts:12-14, `lib/b.js`:3, c.py#L7, docs/x.md line 2, test/sum.test.js, at v1.2'), [
      { file: 'src/a.ts', line: 12, endLine: 14 },
      { file: 'lib/b.js', line: 3, endLine: 3 },
      { file: 'c.py', line: 7, endLine: 7 },
      { file: 'docs/x.md', line: 2, endLine: 2 },
    ]);
  });

  it('judges the checklist by id or verbatim text; one the critic left out is not judged', () => {
    const parsed = parseCriticDecision(
      '<decision>{"type":"done","summary":"ok","requirements":[' +
        '{"id":"REQ1","text":"adds","met":true,"evidence":"the tests check passed"},' +
        '{"id":"x","text":"Subtracts","met":true,"evidence":"src/sum.js:9"},' +
        '{"text":"no id","met":"yes"}]}</decision>',
    )!;
    const statuses = judgeRequirements(
      [
        { id: 'REQ1', text: 'adds' },
        { id: 'REQ2', text: 'subtracts' },
        { id: 'REQ3', text: 'multiplies' },
      ],
      parsed.requirements,
      record,
    );
    assert.deepEqual(
      statuses.map((each) => requirementLine(each)),
      [
        '[x] REQ1 adds — evidence: check tests passed',
        '[ ] REQ2 subtracts — no evidence the record confirms (said: src/sum.js:9)',
        '[ ] REQ3 multiplies — not judged yet',
      ],
    );
    assert.deepEqual(checklistOfCritic(parsed.requirements), [
      { id: 'REQ1', text: 'adds' },
      { id: 'REQ2', text: 'Subtracts' },
      { id: 'REQ3', text: 'no id' },
    ]);
  });
});
