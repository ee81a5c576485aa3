import type { DescribedLine } from '../../sessionFormat/eventWording.js';
import type { ChatCommand } from './chatPorts.js';

/** Text as Markdown shows it literally: agents' words, file names and commands carry `*`, `_`, `<`… */
export function markdownText(text: string): string {
  return text.replace(/[\\`*_[\]<>|~]/g, '\\$&').replace(/^(\s*)([#>+-]|\d+\.)/gm, '$1\\$2');
}

/** The wording's lines (`describeEvent`…) as Markdown: headings as headings, each other line kept a line. */
export function linesMarkdown(lines: readonly DescribedLine[]): string {
  return lines
    .map((line) => {
      if (line.tone === 'heading') return `\n#### ${markdownText(line.text)}\n\n`;
      const text = markdownText(line.text).replace(/\n/g, '  \n');
      return `${line.tone === 'error' ? `**${text}**` : text}  \n`;
    })
    .join('');
}

/** A link that runs one of our commands with JSON arguments; the stream must be told the command may run. */
export function commandLink(label: string, command: ChatCommand): string {
  return `[${markdownText(label)}](command:${command.command}?${encodeURIComponent(JSON.stringify(command.arguments ?? []))})`;
}
