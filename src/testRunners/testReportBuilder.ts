import type { TestCase, TestOutcome, TestReport, TestRunner } from '../sessionFormat/testResults.js';

/** How much of a failure's message a report keeps: the assertion and the top of its stack. */
const MESSAGE_CHARS = 2_000;

/**
 * Gathers one report's tests as a reader finds them. A runner can name two tests
 * alike (two files with the same `describe`, node's JUnit with no file): the second is
 * `id #2`, the third `id #3`, in the runner's order, which is the same on the same tree.
 */
export class TestReportBuilder {
  private readonly tests: TestCase[] = [];
  private readonly seen = new Map<string, number>();
  private readonly errors: string[] = [];

  constructor(private readonly runner: TestRunner) {}

  add(id: string, outcome: TestOutcome, message = ''): void {
    const count = (this.seen.get(id) ?? 0) + 1;
    this.seen.set(id, count);
    this.tests.push({ id: count === 1 ? id : `${id} #${count}`, outcome, message: clip(message) });
  }

  /** A failure outside any test: a file that does not load, a package that does not build. */
  error(text: string): void {
    this.errors.push(clip(text));
  }

  build(): TestReport {
    return { runner: this.runner, tests: this.tests, errors: this.errors };
  }
}

function clip(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MESSAGE_CHARS ? `${trimmed.slice(0, MESSAGE_CHARS)}…` : trimmed;
}
