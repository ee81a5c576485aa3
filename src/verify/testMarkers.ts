/**
 * Test cases and skip markers in a test file's text, counted per language by the
 * file's name. A count, not a parse: a test commented out still counts as there,
 * which errs towards letting a change pass, never towards refusing good work. What
 * counts as weakening is a drop in test cases or a rise in skip markers against the
 * file as the loop found it.
 */

interface Language {
  /** Each match is one test case (a call, a function, an attribute). */
  tests: RegExp;
  /** Each match skips, narrows to `only`, or expects a failure. */
  skips: RegExp;
}

const JAVASCRIPT: Language = {
  // `it(`, `test(`, `it.only(`, `test.each(…)(`; `describe` blocks are not cases.
  tests: /(?<![\w.$])(?:it|test|specify)(?:\.(?:only|skip|todo|concurrent|failing|each))*\s*(?:\(|`)/g,
  skips:
    /(?<![\w.$])(?:(?:it|test|describe|context|suite|specify)\.(?:skip|only|todo|failing)\b|x(?:it|test|describe|context|specify)\s*\(|f(?:it|describe)\s*\(|this\.skip\s*\()/g,
};

const PYTHON: Language = {
  tests: /^[ \t]*(?:async[ \t]+)?def[ \t]+test\w*[ \t]*\(/gm,
  skips: /@pytest\.mark\.(?:skip|skipif|xfail)\b|@unittest\.(?:skip|skipIf|skipUnless|expectedFailure)\b|\bpytest\.(?:skip|xfail)\s*\(|\.skipTest\s*\(/g,
};

const GO: Language = {
  tests: /^func[ \t]+(?:Test|Fuzz|Example)\w*[ \t]*\(/gm,
  skips: /\b\w+\.Skip(?:Now|f)?\s*\(/g,
};

const RUST: Language = {
  tests: /#\[(?:\w+::)*test\b[^\]]*\]/g,
  skips: /#\[ignore\b[^\]]*\]/g,
};

function languageOf(file: string): Language | undefined {
  if (/\.(?:[cm]?[jt]sx?)$/.test(file)) return JAVASCRIPT;
  if (file.endsWith('.py')) return PYTHON;
  if (file.endsWith('.go')) return GO;
  if (file.endsWith('.rs')) return RUST;
  return undefined;
}

export interface TestMarkers {
  tests: number;
  /** The skip markers as written, in order (`it.skip`, `@pytest.mark.skip`). */
  skips: string[];
}

/** Undefined for a file in no language this knows: only its deletion is judged. */
export function testMarkersOf(file: string, text: string): TestMarkers | undefined {
  const language = languageOf(file);
  if (!language) return undefined;
  return {
    tests: [...text.matchAll(language.tests)].length,
    skips: [...text.matchAll(language.skips)].map((match) => match[0].replace(/\s*\($/, '').trim()),
  };
}

/** The markers `after` has more of than `before` (each occurrence counts). */
export function addedSkips(before: readonly string[], after: readonly string[]): string[] {
  const left = new Map<string, number>();
  for (const marker of before) left.set(marker, (left.get(marker) ?? 0) + 1);
  const added: string[] = [];
  for (const marker of after) {
    const count = left.get(marker) ?? 0;
    if (count > 0) left.set(marker, count - 1);
    else added.push(marker);
  }
  return added;
}
