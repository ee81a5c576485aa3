import type { TestReport } from '../sessionFormat/testResults.js';
import { TestReportBuilder } from './testReportBuilder.js';

interface GoTestEvent {
  Action?: string;
  Package?: string;
  Test?: string;
  Output?: string;
}

/**
 * Reads `go test -json`'s events, one JSON object a line. A test's id is its package
 * and name (`example.com/m TestSub/case`). A package that fails with no test of its
 * own failing (it did not build) is an error outside tests, with what go printed of it;
 * so is a line that is not an event (go before 1.24 prints build failures as text).
 */
export function readGoTestEvents(text: string): TestReport {
  const report = new TestReportBuilder('go');
  const output = new Map<string, string[]>();
  const failedTests = new Set<string>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const event = parseEvent(line);
    if (!event) {
      if (/\[(build|setup) failed\]|^#|^\S+\.go:\d+/.test(line)) report.error(line);
      continue;
    }
    const pkg = event.Package ?? '';
    const at = event.Test ? `${pkg} ${event.Test}` : pkg;
    if (event.Action === 'output') output.set(at, [...(output.get(at) ?? []), event.Output ?? '']);
    else if (event.Test && (event.Action === 'pass' || event.Action === 'fail' || event.Action === 'skip')) {
      if (event.Action === 'fail') failedTests.add(pkg);
      report.add(
        at,
        event.Action === 'pass' ? 'passed' : event.Action === 'fail' ? 'failed' : 'skipped',
        event.Action === 'fail' ? (output.get(at) ?? []).join('') : '',
      );
    } else if (!event.Test && event.Action === 'fail' && !failedTests.has(pkg)) {
      report.error(`${pkg}: ${(output.get(pkg) ?? []).join('').trim() || 'the package failed'}`);
    }
  }
  return report.build();
}

function parseEvent(line: string): GoTestEvent | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as GoTestEvent;
  } catch {
    return null;
  }
}
