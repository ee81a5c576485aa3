import { XMLParser } from 'fast-xml-parser';
import type { TestReport } from '../sessionFormat/testResults.js';
import { TestReportBuilder } from './testReportBuilder.js';

/** The parts of a JUnit XML report read here; every element that can repeat is a list. */
interface JunitCase {
  '@_name'?: string;
  '@_classname'?: string;
  failure?: (JunitProblem | string)[];
  error?: (JunitProblem | string)[];
  skipped?: (JunitProblem | string)[];
}
interface JunitProblem {
  '@_message'?: string;
  '@_type'?: string;
  '#text'?: string;
}
interface JunitSuite {
  '@_name'?: string;
  testcase?: JunitCase[];
  testsuite?: JunitSuite[];
}

const LISTS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped']);
const parser = new XMLParser({
  ignoreAttributes: false,
  // Attributes apart from elements: node's JUnit has a `failure` attribute beside its `failure` element.
  attributeNamePrefix: '@_',
  parseAttributeValue: false,
  parseTagValue: false,
  isArray: (name) => LISTS.has(name),
  // Entities other than XML's own are never expanded: a report is the runner's, but its text is the tests'.
  processEntities: true,
  htmlEntities: false,
});

/**
 * Reads a JUnit XML report: pytest's (`--junitxml`, xunit2) and `node --test`'s
 * (`--test-reporter=junit`). A test's id is pytest's `module.Class::name[param]`, or
 * node's suites and name joined by ` › `. pytest's `xfail` is a `skipped` of type
 * `pytest.xfail`; a module it could not collect is an `error` of message
 * `collection failure`, outside any test.
 */
export function readJunitReport(xml: string, runner: 'pytest' | 'node'): TestReport {
  const report = new TestReportBuilder(runner);
  const document = parser.parse(xml) as { testsuites?: JunitSuite; testsuite?: JunitSuite[] };
  const roots = document.testsuites ? [document.testsuites] : (document.testsuite ?? []);
  const walk = (suite: JunitSuite, path: readonly string[]): void => {
    for (const testCase of suite.testcase ?? []) readCase(report, testCase, runner, path);
    for (const child of suite.testsuite ?? []) walk(child, runner === 'node' ? [...path, child['@_name'] ?? ''] : path);
  };
  for (const root of roots) walk(root, []);
  return report.build();
}

function readCase(report: TestReportBuilder, testCase: JunitCase, runner: 'pytest' | 'node', path: readonly string[]): void {
  const name = testCase['@_name'] ?? '';
  const classname = testCase['@_classname'] ?? '';
  const problem = testCase.failure?.[0] ?? testCase.error?.[0];
  if (runner === 'pytest' && !classname && attribute(testCase.error?.[0], 'message') === 'collection failure') {
    report.error(`${name}: ${problemText(testCase.error?.[0])}`);
    return;
  }
  const id = runner === 'pytest' ? `${classname ? `${classname}::` : ''}${name}` : [...path, name].join(' › ');
  if (problem !== undefined) report.add(id, 'failed', problemText(problem));
  else if (testCase.skipped) report.add(id, attribute(testCase.skipped[0], 'type') === 'pytest.xfail' ? 'xfail' : 'skipped', problemText(testCase.skipped[0]));
  else report.add(id, 'passed');
}

/** An element with neither attributes nor text (`<skipped/>`) is read as ''. */
type JunitElement = JunitProblem | string | undefined;

function attribute(element: JunitElement, name: 'message' | 'type'): string | undefined {
  return typeof element === 'object' ? element[`@_${name}`] : undefined;
}

function problemText(element: JunitElement): string {
  if (typeof element !== 'object') return '';
  const text = element['#text'] ?? '';
  return text.trim() ? text : (element['@_message'] ?? '');
}
