import assert from 'node:assert/strict';
import { explainUnreadableDecision, feedbackText, parseCriticDecision } from '../../src/critic/criticDecision.js';

describe('critic decision parsing', () => {
  it('reads a done block', () => {
    const parsed = parseCriticDecision('Looks good.\n<decision>{"type":"done","summary":"Added validation","confidence":0.95}</decision>');
    assert.deepEqual(parsed, {
      decision: { kind: 'DONE', summary: 'Added validation', confidence: 0.95 },
      source: 'block',
      findings: [],
      resolved: [],
      requirements: [],
    });
  });

  it('reads findings and resolved ids in any decision, and drops what cannot be read in them rather than the decision', () => {
    const parsed = parseCriticDecision(
      '<decision>{"type":"continue","feedback":"Fix the null case","findings":[' +
        '{"file":"src/a.ts","line":42,"end_line":44,"severity":"error","message":"  x can be null  "},' +
        '{"file":"src/b.ts","line":"7","severity":"WARNING","message":"unused import"},' +
        '{"line":3,"end_line":1,"severity":"critical","message":"end before start"},' +
        '{"file":"src/c.ts","line":0,"message":"line zero is no line"},' +
        '{"file":"src/d.ts","line":5},' +
        '"not an object"],"resolved":["F1.2"," U3.1 ",""]}</decision>',
    );
    assert.equal(parsed?.decision.kind, 'CONTINUE');
    assert.deepEqual(parsed?.findings, [
      { file: 'src/a.ts', line: 42, endLine: 44, severity: 'error', message: 'x can be null' },
      { file: 'src/b.ts', line: 7, endLine: 7, severity: 'warning', message: 'unused import' },
      { file: null, line: 3, endLine: 3, severity: 'warning', message: 'end before start' },
      { file: 'src/c.ts', line: null, endLine: null, severity: 'warning', message: 'line zero is no line' },
    ]);
    assert.deepEqual(parsed?.resolved, ['F1.2', 'U3.1']);
    // Malformed review fields never sink a verdict.
    const done = parseCriticDecision('<decision>{"type":"done","summary":"ok","findings":"none","resolved":{"a":1}}</decision>');
    assert.deepEqual(done, { decision: { kind: 'DONE', summary: 'ok', confidence: null }, source: 'block', findings: [], resolved: [], requirements: [] });
  });

  it('reads continue with its remaining issues, and error with its recovery', () => {
    const go = parseCriticDecision('<decision>{"type":"continue","feedback":"Add tests","remaining_issues":["no tests"," ",  "README"]}</decision>');
    assert.deepEqual(go?.decision, { kind: 'CONTINUE', feedback: 'Add tests', remainingIssues: ['no tests', 'README'] });
    // What cannot be read as an issue names nothing and is dropped, not the decision.
    const issuesOf = (issues: string) =>
      parseCriticDecision(`<decision>{"type":"continue","feedback":"More","remaining_issues":${issues}}</decision>`)?.decision;
    assert.deepEqual(issuesOf('["", "  ", "\\n\\t", "-", "\\u200b", "…", 7, null, {"issue":"x"}, ["y"], " sum subtracts "]'), {
      kind: 'CONTINUE',
      feedback: 'More',
      remainingIssues: ['sum subtracts'],
    });
    assert.deepEqual(issuesOf('"one issue"'), { kind: 'CONTINUE', feedback: 'More', remainingIssues: ['one issue'] });
    assert.deepEqual(issuesOf('{"a":1}'), { kind: 'CONTINUE', feedback: 'More', remainingIssues: [] });
    assert.deepEqual(issuesOf('null'), { kind: 'CONTINUE', feedback: 'More', remainingIssues: [] });
    const error = parseCriticDecision('<decision>{"type":"error","error_description":"build broken","recovery_suggestion":"revert x.ts"}</decision>');
    assert.deepEqual(error?.decision, { kind: 'ERROR', description: 'build broken', recovery: 'revert x.ts' });
    assert.equal(feedbackText(error!.decision), 'build broken\n\nRecovery: revert x.ts');
  });

  it('takes the last block, so a critic quoting the format is not taken at its word', () => {
    const answer = [
      'The format is <decision>{"type":"done","summary":"example","confidence":1}</decision>.',
      'But the work is not finished.',
      '<decision>{"type":"continue","feedback":"Finish the parser"}</decision>',
    ].join('\n');
    assert.equal(parseCriticDecision(answer)?.decision.kind, 'CONTINUE');
  });

  it('does not fall back to an earlier block when the last one is broken', () => {
    const answer = '<decision>{"type":"done","summary":"x","confidence":1}</decision>\n<decision>{"type":"continue",</decision>';
    assert.equal(parseCriticDecision(answer), null);
    assert.match(explainUnreadableDecision(answer), /not contain valid JSON/);
  });

  it('tolerates fences, prose, case and percent confidences', () => {
    const answer = '<DECISION>\n```json\n{"type":"DONE","summary":"ok","confidence":87}\n```\n</DECISION>';
    assert.deepEqual(parseCriticDecision(answer)?.decision, { kind: 'DONE', summary: 'ok', confidence: 0.87 });
  });

  it('rejects blocks that break the contract', () => {
    for (const body of [
      '{"type":"continue"}', // no feedback
      '{"type":"continue","feedback":"   "}',

      '{"type":"maybe"}',
      '[1,2,3]',
      '',
      'null',
    ]) {
      assert.equal(parseCriticDecision(`<decision>${body}</decision>`), null, body);
    }
    assert.match(explainUnreadableDecision('<decision>{"type":"continue"}</decision>'), /feedback/);
  });

  it('drops a confidence it cannot read instead of throwing the verdict away', () => {
    assert.deepEqual(parseCriticDecision('<decision>{"type":"done","summary":"ok","confidence":"very"}</decision>')?.decision, {
      kind: 'DONE',
      summary: 'ok',
      confidence: null,
    });
    assert.deepEqual(parseCriticDecision('<decision>{"type":"done","summary":"ok","confidence":7000}</decision>')?.decision, {
      kind: 'DONE',
      summary: 'ok',
      confidence: null,
    });
    assert.deepEqual(parseCriticDecision('<decision>{"type":"done","summary":"ok","confidence":"0.8"}</decision>')?.decision, {
      kind: 'DONE',
      summary: 'ok',
      confidence: 0.8,
    });
  });

  it('falls back to the plain markers, the last one winning', () => {
    assert.equal(parseCriticDecision('Everything works. TASK COMPLETE')?.decision.kind, 'DONE');
    assert.equal(parseCriticDecision('TASK COMPLETE? No: NEEDS MORE WORK, the tests fail.')?.decision.kind, 'CONTINUE');
    const parsed = parseCriticDecision('The tests fail.\nNEEDS_MORE_WORK');
    assert.deepEqual(parsed, {
      decision: { kind: 'CONTINUE', feedback: 'The tests fail.', remainingIssues: [] },
      source: 'marker',
      findings: [],
      resolved: [],
      requirements: [],
    });
  });

  it('returns null for garbage, empty and binary-looking answers', () => {
    for (const answer of ['', 'lorem ipsum', '\u0000\u0001\ufffd', '<decision>', '</decision><decision>']) {
      assert.equal(parseCriticDecision(answer), null, JSON.stringify(answer));
    }
  });

  it('handles emoji and non-ASCII text inside the JSON', () => {
    const parsed = parseCriticDecision('<decision>{"type":"done","summary":"Añadido ✅ 🎉","confidence":1}</decision>');
    assert.equal(parsed?.decision.kind === 'DONE' && parsed.decision.summary, 'Añadido ✅ 🎉');
  });

  it('reads the decision at the end of a huge answer (how fast: npm run bench)', () => {
    const answer = 'x'.repeat(5_000_000) + '<decision>{"type":"done","summary":"ok","confidence":1}</decision>';
    assert.equal(parseCriticDecision(answer)?.decision.kind, 'DONE');
  });
});
