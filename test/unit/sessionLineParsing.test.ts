import assert from 'node:assert/strict';
import { parseLine, parseReadLine, parseStartLine, validateLine } from '../../src/sessions/sessionLineParsing.js';
import { endLine, iterationLine, startLine } from '../support/sessionFixtures.js';

describe('session line parsing (what listing and reading both check)', () => {
  it('reads each kind of line, a byte-order mark before it no error', () => {
    const start = parseLine('\uFEFF' + JSON.stringify(startLine()));
    assert.ok(start.ok && start.line.type === 'session_start' && start.line.prompt === 'Fix the typo');
    const iteration = parseLine(JSON.stringify(iterationLine(3)));
    assert.ok(iteration.ok && iteration.line.type === 'iteration' && iteration.line.iteration_number === 3);
    const end = parseLine(JSON.stringify(endLine()));
    assert.ok(end.ok && end.line.type === 'session_end' && end.line.outcome === 'success');
  });

  it('puts the original codeloops’ words in the documented terms', () => {
    const iteration = parseLine(JSON.stringify(iterationLine(1, { critic_decision: 'DONE (confidence: 95%)' })));
    assert.ok(iteration.ok && iteration.line.type === 'iteration');
    assert.equal(iteration.line.critic_decision, 'DONE');
    assert.equal(iteration.line.critic_decision_text, 'DONE (confidence: 95%)');
    const end = parseLine(JSON.stringify(endLine({ outcome: 'user_interrupted' })));
    assert.ok(end.ok && end.line.type === 'session_end' && end.line.outcome === 'interrupted');
  });

  it('says why a line is not JSON, naming line endings of a carriage return alone', () => {
    assert.deepEqual(parseLine('{"type":'), { ok: false, reason: 'not valid JSON' });
    const crOnly = parseLine(`${JSON.stringify(startLine())}\r${JSON.stringify(endLine())}`);
    assert.ok(!crOnly.ok);
    assert.equal(crOnly.reason, 'not valid JSON; its lines end in a carriage return alone, and session lines must end in "\\n"');
  });

  it('says which fields a line gets wrong, by their path, three at most', () => {
    const wrong = parseLine(JSON.stringify(iterationLine(1, { iteration_number: 'one' })));
    assert.ok(!wrong.ok);
    assert.match(wrong.reason, /^iteration_number: /);
    const manyWrong = parseLine(JSON.stringify({ type: 'iteration', iteration_number: 'one', actor_output: 1, git_diff: 2, critic_decision: 3, feedback: 4 }));
    assert.ok(!manyWrong.ok);
    assert.equal(manyWrong.reason.split('; ').length, 3);
  });

  it('takes a start line only where a start must be, and a blank line as no line', () => {
    assert.ok(parseStartLine(JSON.stringify(startLine())).ok);
    const notStart = parseStartLine(JSON.stringify(iterationLine(1)));
    assert.ok(!notStart.ok);
    assert.match(notStart.reason, /type/);
    assert.equal(parseReadLine('   '), undefined);
    assert.equal(parseReadLine(''), undefined);
    assert.ok(parseReadLine(JSON.stringify(endLine()))?.ok);
  });

  it('checks a value already parsed through the same schema', () => {
    const checked = validateLine(iterationLine(2));
    assert.ok(checked.ok && checked.line.type === 'iteration' && checked.line.iteration_number === 2);
    const refused = validateLine({ type: 'iteration' });
    assert.ok(!refused.ok);
    assert.match(refused.reason, /iteration_number/);
  });
});
