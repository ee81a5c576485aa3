import assert from 'node:assert/strict';
import { checkCommandSources, simpleCommands, sourceChange, type CommandSource } from '../../src/verify/checkCommandSources.js';
import { ProtectedPaths } from '../../src/verify/protectedPaths.js';
import { addedSkips, testMarkersOf } from '../../src/verify/testMarkers.js';

describe('protected files: what the gate rests on', () => {
  describe('test cases and skip markers, per language', () => {
    it('counts JavaScript test cases and sees skip, only and x-prefixed markers, not describe blocks', () => {
      const text = [
        "describe('sum', () => {",
        "  it('adds', () => {});",
        "  test('adds negatives', () => {});",
        "  it.skip('adds floats', () => {});",
        "  xit('adds strings', () => {});",
        "  test.only('adds big numbers', () => {});",
        '  test.each([[1, 2]])("adds %i", () => {});',
        '});',
        "const split = 'it(' ; // a string that looks like a call still counts",
      ].join('\n');
      const markers = testMarkersOf('test/sum.test.js', text);
      assert.ok(markers);
      assert.equal(markers.tests, 6, 'it, test, it.skip, test.only, test.each and the string');
      assert.deepEqual(markers.skips, ['it.skip', 'xit', 'test.only']);
    });

    it('Python: test functions and pytest/unittest skips and xfail', () => {
      const text =
        'import pytest\n\ndef test_a():\n    pass\n\n@pytest.mark.skip(reason="later")\ndef test_b():\n    pass\n\nasync def test_c():\n    pytest.xfail("x")\n';
      assert.deepEqual(testMarkersOf('tests/test_a.py', text), { tests: 3, skips: ['@pytest.mark.skip', 'pytest.xfail'] });
    });

    it('Go: Test functions and t.Skip; Rust: #[test] and #[ignore]', () => {
      assert.deepEqual(testMarkersOf('sum_test.go', 'func TestSum(t *testing.T) {\n\tt.Skip("flaky")\n}\nfunc helper() {}\n'), { tests: 1, skips: ['t.Skip'] });
      assert.deepEqual(testMarkersOf('tests/sum.rs', '#[test]\n#[ignore]\nfn sums() {}\n#[tokio::test]\nasync fn later() {}\n'), {
        tests: 2,
        skips: ['#[ignore]'],
      });
    });

    it('knows no language for other files, and counts a marker added only when there are more of it', () => {
      assert.equal(testMarkersOf('test/fixture.txt', 'it('), undefined);
      assert.deepEqual(addedSkips(['it.skip', 'xit'], ['xit', 'it.skip', 'it.skip']), ['it.skip']);
      assert.deepEqual(addedSkips(['it.skip'], []), []);
    });
  });

  describe('the default protected set, by what the tree shows', () => {
    it('protects npm test files and folders, CI and codeloops.toml, and leaves the source alone', () => {
      const paths = ProtectedPaths.of(['package.json', 'src/sum.js', 'test/sum.test.js'], []);
      assert.equal(paths.roleOf('test/sum.test.js'), 'test');
      assert.equal(paths.roleOf('src/sum.spec.ts'), 'test');
      assert.equal(paths.roleOf('lib/__tests__/a.js'), 'test');
      assert.equal(paths.roleOf('jest.config.js'), 'runner');
      assert.equal(paths.roleOf('.github/workflows/ci.yml'), 'ci');
      assert.equal(paths.roleOf('.gitlab-ci.yml'), 'ci');
      assert.equal(paths.roleOf('codeloops.toml'), 'config');
      assert.equal(paths.roleOf('packages/a/codeloops.toml'), 'config');
      assert.equal(paths.roleOf('src/sum.js'), undefined);
    });

    it('adds Python, Go and Cargo tests only where the tree has them, and the user’s own patterns', () => {
      const bare = ProtectedPaths.of(['README.md'], []);
      assert.equal(bare.roleOf('test/a.test.js'), undefined, 'no ecosystem: only CI and codeloops.toml');
      assert.equal(bare.roleOf('codeloops.toml'), 'config');
      const python = ProtectedPaths.of(['pyproject.toml', 'pkg/a.py'], []);
      assert.equal(python.roleOf('pkg/test_a.py'), 'test');
      assert.equal(python.roleOf('conftest.py'), 'test');
      const go = ProtectedPaths.of(['go.mod'], []);
      assert.equal(go.roleOf('pkg/sum_test.go'), 'test');
      assert.equal(go.roleOf('pkg/sum.go'), undefined);
      const user = ProtectedPaths.of(['README.md'], ['golden/', '*.snap']);
      assert.equal(user.roleOf('golden/out.txt'), 'test');
      assert.equal(user.roleOf('ui/__snapshots__/a.snap'), 'test');
    });
  });

  describe('what a check’s command rests on', () => {
    const files = new Set(['package.json', 'Makefile', 'scripts/check.sh', 'web/package.json', 'pyproject.toml']);
    const contents: Record<string, string> = {
      'package.json': JSON.stringify({ scripts: { pretest: 'npm run lint', test: 'node --test && sh scripts/check.sh', lint: 'eslint .' } }),
      'web/package.json': JSON.stringify({ scripts: { test: 'vitest run' } }),
    };
    const read = (file: string) => Promise.resolve(contents[file]);

    it('follows npm scripts (pre, post and scripts they run), make targets, pytest’s config and named files', async () => {
      const sources = await checkCommandSources(
        [
          { name: 'tests', run: 'CI=1 npm test', folder: '' },
          { name: 'web', run: 'cd web && yarn test', folder: '' },
          { name: 'build', run: 'make -C . build', folder: '' },
          { name: 'py', run: 'python -m pytest -q', folder: '' },
        ],
        files,
        read,
      );
      const seen = sources.map((source) => `${source.check}: ${source.file} ${JSON.stringify(source.part)}`).sort();
      assert.deepEqual(seen, [
        'build: Makefile {"kind":"make_target","name":"build"}',
        'py: pyproject.toml {"kind":"config_section","headers":["tool.pytest.ini_options","tool.pytest"]}',
        'tests: package.json {"kind":"npm_script","name":"lint"}',
        'tests: package.json {"kind":"npm_script","name":"test"}',
        'tests: scripts/check.sh {"kind":"whole"}',
        'web: web/package.json {"kind":"npm_script","name":"test"}',
      ]);
    });

    it('says what changed in the script a check runs, and nothing for other changes to the file', () => {
      const source: CommandSource = { file: 'package.json', part: { kind: 'npm_script', name: 'test' }, check: 'tests' };
      const before = JSON.stringify({ name: 'a', version: '1.0.0', scripts: { test: 'node --test' } });
      assert.equal(
        sourceChange(source, before, JSON.stringify({ name: 'a', version: '1.0.1', scripts: { test: 'node --test' } })),
        undefined,
        'a version bump is not a check change',
      );
      assert.equal(sourceChange(source, before, JSON.stringify({ name: 'a', scripts: { test: 'exit 0' } })), 'scripts.test: "node --test" → "exit 0"');
      assert.equal(
        sourceChange(source, before, JSON.stringify({ name: 'a', scripts: { pretest: 'exit 0', test: 'node --test' } })),
        'scripts.pretest: none → "exit 0"',
      );
      assert.equal(sourceChange(source, before, undefined), 'deleted');
    });

    it('compares a Makefile target’s recipe and a pytest section, not the rest of the file', () => {
      const target: CommandSource = { file: 'Makefile', part: { kind: 'make_target', name: 'test' }, check: 'tests' };
      const makefile = 'build:\n\tcc -o app app.c\n\ntest: build\n\t./run-tests\n';
      assert.equal(sourceChange(target, makefile, makefile.replace('cc -o', 'gcc -o')), undefined);
      assert.equal(sourceChange(target, makefile, makefile.replace('./run-tests', 'true')), 'the test target changed');
      const section: CommandSource = { file: 'pyproject.toml', part: { kind: 'config_section', headers: ['tool.pytest.ini_options'] }, check: 'py' };
      const pyproject = '[project]\nname = "a"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n';
      assert.equal(sourceChange(section, pyproject, pyproject.replace('name = "a"', 'name = "b"')), undefined);
      assert.equal(sourceChange(section, pyproject, pyproject.replace('"-q"', '"-q --deselect tests/test_a.py"')), '[tool.pytest.ini_options] changed');
    });

    it('splits a shell line into its simple commands, quotes and assignments taken off', () => {
      assert.deepEqual(simpleCommands('FOO=1 npm run "lint" && env X=2 make test; ./ci.sh | tee log'), [
        ['npm', 'run', 'lint'],
        ['make', 'test'],
        ['./ci.sh'],
        ['tee', 'log'],
      ]);
    });
  });
});
