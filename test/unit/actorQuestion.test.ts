import assert from 'node:assert/strict';
import { actorQuestion } from '../../src/loop/actorPrompt.js';
import { quotedRanges } from '../../src/text/quotedMarkdown.js';

/** The quoted parts of a text, as the text they cover. */
const quotedParts = (text: string) => quotedRanges(text).map((range) => text.slice(range.start, range.end));

describe("the actor's question: only the <needs_input> that ends its answer, outside what it quotes", () => {
  it('reads the tag that ends the answer, with its question trimmed, a trailing Addressed: line allowed', () => {
    assert.equal(actorQuestion('I need the key.\n<needs_input>What is the staging API key?</needs_input>'), 'What is the staging API key?');
    assert.equal(actorQuestion('Stuck. <NEEDS_INPUT>\n  Which port?  \n</Needs_Input>\n\n'), 'Which port?');
    assert.equal(actorQuestion('<needs_input>Use `pg` or `sqlite`?</needs_input>'), 'Use `pg` or `sqlite`?', 'code inside the question is the question');
    assert.equal(actorQuestion('Fixed F2.1.\n<needs_input>Which port?</needs_input>\nAddressed: F2.1'), 'Which port?');
    assert.equal(
      actorQuestion('An earlier `<needs_input>` aside.\n```\n<needs_input>quoted</needs_input>\n```\n<needs_input>The real one?</needs_input>'),
      'The real one?',
    );
  });

  const quotedOrMidway: [string, string][] = [
    ['in a fenced block at the end', 'The loop reads this tag:\n```\n<needs_input>What is the key?</needs_input>\n```'],
    ['in a fenced block, the answer going on after it', 'The tag:\n```text\n<needs_input>What is the key?</needs_input>\n```\nDone: I documented it.'],
    ['in an unclosed fence', 'Here is the template:\n```markdown\n<needs_input>What is the key?</needs_input>'],
    ['in a tilde fence', '~~~~\n<needs_input>What is the key?</needs_input>\n~~~~'],
    ['in a fence closed by a shorter fence (still open)', '````\n<needs_input>What is the key?</needs_input>\n```'],
    ['in inline code at the end', 'I added support for `<needs_input>What is the key?</needs_input>`'],
    ['opened in inline code', 'The tag is `<needs_input>` and it ends with </needs_input>'],
    ['in double-backtick code', 'Write ``<needs_input>What is the key?</needs_input>``'],
    ['in an HTML comment', 'Done.\n<!-- <needs_input>What is the key?</needs_input> -->'],
    ['in an unclosed HTML comment', 'Done.\n<!--\n<needs_input>What is the key?</needs_input>'],
    ['in a block quote', 'The user wrote:\n> <needs_input>What is the key?</needs_input>'],
    ['in an indented code block', 'Example:\n\n    <needs_input>What is the key?</needs_input>'],
    ['in the middle of the answer', 'I saw <needs_input>What is the key?</needs_input> in the docs and implemented it.'],
    ['followed by more words', '<needs_input>What is the key?</needs_input> (never mind, found it)'],
    ['empty', 'Done.\n<needs_input>   </needs_input>'],
    ['unclosed', 'Done.\n<needs_input>What is the key?'],
  ];
  for (const [where, answer] of quotedOrMidway) {
    it(`asks nothing for a tag ${where}`, () => {
      assert.equal(actorQuestion(answer), null, answer);
    });
  }

  it('a tag after a closed code block or a closed comment asks; a stray backtick is plain text', () => {
    assert.equal(actorQuestion('```\ncode\n```\n<needs_input>Which port?</needs_input>'), 'Which port?');
    assert.equal(actorQuestion('<!-- a note -->\n<needs_input>Which port?</needs_input>'), 'Which port?');
    assert.equal(actorQuestion('A lone ` backtick.\n<needs_input>Which port?</needs_input>'), 'Which port?');
    assert.equal(actorQuestion('Two paragraphs: `one\n\n<needs_input>Which port?</needs_input> and `'), null, 'not at the end');
    assert.equal(actorQuestion('A ` here\n\n<needs_input>Which port?</needs_input>'), 'Which port?', 'a code span does not cross a blank line');
    assert.equal(
      actorQuestion('<needs_input>Which of these?\n```\na\nb\n```\n</needs_input>'),
      'Which of these?\n```\na\nb\n```',
      'a closed block inside the question',
    );
    assert.equal(actorQuestion('<needs_input>Which?\n```\na</needs_input>'), null, 'a fence the question leaves open swallows its end');
    assert.equal(actorQuestion('Addressed: F1.1 <needs_input>Which port?</needs_input>'), 'Which port?', 'an Addressed line that ends with the tag');
    assert.equal(actorQuestion('<needs_input>Which port?</needs_input>\n\nAddressed: F1.1\n\n'), 'Which port?');
    assert.equal(actorQuestion('<needs_input>Which port?</needs_input>\nAddressed: F1.1\nThanks!'), null, 'words after the Addressed line');
  });

  it('reads an answer as long as an agent may print (its transcript keeps 400,000 characters) in one pass', () => {
    assert.equal(actorQuestion(`<needs_input>Which port?</needs_input>${'\n \t'.repeat(130_000)}x`), null);
    assert.equal(actorQuestion(`${'word `tick\n'.repeat(36_000)}\n<needs_input>Which port?</needs_input>`), 'Which port?');
    assert.equal(actorQuestion(`<needs_input>Which port?</needs_input>${'\nAddressed: F1.1'.repeat(25_000)}`), 'Which port?');
    let runs = '';
    for (let length = 1; runs.length < 400_000; length++) runs += `${'`'.repeat(length)}x`;
    assert.equal(actorQuestion(`${runs}\n\n<needs_input>Which port?</needs_input>`), 'Which port?');
  });

  it('finds code blocks, spans, comments and quotes, and nothing inside code opens more', () => {
    assert.deepEqual(quotedParts('a `b` c ``d`e`` f'), ['`b`', '``d`e``']);
    assert.deepEqual(quotedParts('x\n```\n`open\n<!-- in code\n```\ny `z`'), ['```\n`open\n<!-- in code\n```\n', '`z`']);
    assert.deepEqual(quotedParts('x <!-- `a\n\nb --> `c`'), ['<!-- `a\n\nb -->', '`c`']);
    assert.deepEqual(quotedParts('> quoted\nplain\n\n    code\n    more\nlazy'), ['> quoted\n', '    code\n', '    more\n']);
    assert.deepEqual(quotedParts('- item\n    not code: no blank line before'), []);
    assert.deepEqual(quotedParts('crlf ```\r\n`a`\r\n'), ['`a`']);
  });
});
