import { styleText } from 'node:util';
import type { DescribedLine, LineTone } from '../sessionFormat/eventWording.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { graphemeBoundaryAtOrBefore } from '../text/truncate.js';

type Style = Parameters<typeof styleText>[0];

const TONE_STYLES: Readonly<Record<LineTone, Style | null>> = {
  heading: 'bold',
  info: null,
  agent: null,
  success: 'green',
  warning: 'yellow',
  error: 'red',
  muted: 'dim',
};

/** Colour only for a terminal, and never when NO_COLOR is set. */
export function colorEnabled(stream: NodeJS.WriteStream): boolean {
  return Boolean(stream.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

export function paint(text: string, tone: LineTone, color: boolean): string {
  const style = TONE_STYLES[tone];
  return color && style ? styleText(style, text) : text;
}

/** A warning on stderr: each on lines of its own, without anything a terminal would obey. */
export function writeWarning(message: string): void {
  for (const line of sanitizeForTerminal(message).split('\n')) process.stderr.write(`warning: ${line}\n`);
}

/** Lines for people: agents' text never reaches the terminal as escape sequences. */
export function writeLines(stream: NodeJS.WriteStream, lines: readonly DescribedLine[]): void {
  const color = colorEnabled(stream);
  for (const line of lines) stream.write(paint(sanitizeForTerminal(line.text), line.tone, color) + '\n');
}

/** Display width is approximated by characters; cutting never splits one. */
export function fitColumn(text: string, width: number): string {
  const flat = text.replace(/\s+/g, ' ');
  const characters = [...flat];
  if (characters.length <= width) return flat + ' '.repeat(width - characters.length);
  const cut = flat.slice(0, graphemeBoundaryAtOrBefore(flat, characters.slice(0, width - 1).join('').length));
  return cut + '…' + ' '.repeat(Math.max(0, width - [...cut].length - 1));
}

export function renderTable(headers: readonly string[], rows: readonly string[][], maxLastColumn: number): string {
  const widths = headers.map((header, column) =>
    column === headers.length - 1
      ? Math.min(maxLastColumn, Math.max(header.length, ...rows.map((row) => [...(row[column] ?? '')].length)))
      : Math.max(header.length, ...rows.map((row) => [...(row[column] ?? '')].length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => fitColumn(sanitizeForTerminal(cell), widths[column]!))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}
