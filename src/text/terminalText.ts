/**
 * Text from agents is shown in terminals, and a terminal obeys escape sequences:
 * an agent could set the window title, write to the clipboard (OSC 52) or clear the
 * screen, or reorder what a line shows. Sequences, control characters and invisible
 * formatting characters are removed before printing; newlines and tabs stay.
 */

/* eslint-disable no-control-regex -- matching control characters is what this file is for */
const OSC = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?/g;
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
const OTHER_ESCAPES = /\x1b[@-Z\\-_]/g;
// C0 controls except tab and newline, DEL, and C1 controls.
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/**
 * Invisible characters that change what text looks like: the bidirectional controls
 * (marks, embeddings, overrides, isolates: "invoice\u202Egpj.exe" shows as "invoiceexe.jpg") and
 * the zero-width ones (U+200B, U+2060, U+FEFF) that hide text or break a table's
 * columns. Joiners (U+200C, U+200D) stay: emoji and several scripts are built with them.
 */
const INVISIBLE_FORMATTING = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;
/** What makes a file name read as another: the invisible formatting characters above, and C1 controls (git quotes C0 ones itself). */
const HIDDEN_IN_NAME = /[\u0080-\u009f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
/* eslint-enable no-control-regex */

export function sanitizeForTerminal(text: string): string {
  return text.replace(OSC, '').replace(CSI, '').replace(OTHER_ESCAPES, '').replace(CONTROLS, '').replace(INVISIBLE_FORMATTING, '');
}

/**
 * A unified diff with every file name that holds an invisible or bidirectional character
 * quoted as git quotes names (`core.quotepath`): `"a/invoice\342\200\256gpj.exe"`, the
 * character's UTF-8 bytes in octal. The diff still applies as a patch (git reads quoted
 * names back); other names, and the changed lines themselves, are left as they are.
 */
export function quoteHiddenCharactersInDiffNames(diff: string): string {
  if (!HIDDEN_IN_NAME.test(diff)) return diff;
  const lines = diff.split('\n');
  // Lines left in the current hunk: a removed line "-- x" reads "--- x", and is no header.
  let oldLeft = 0;
  let newLeft = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // A new file always ends the hunk: a diff cut to its head and tail may stop in one.
    if (line.startsWith('diff --git ')) oldLeft = newLeft = 0;
    if (oldLeft > 0 || newLeft > 0) {
      if (line[0] !== '+' && line[0] !== '\\') oldLeft -= 1;
      if (line[0] !== '-' && line[0] !== '\\') newLeft -= 1;
      continue;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      oldLeft = Number(hunk[1] ?? 1);
      newLeft = Number(hunk[2] ?? 1);
    } else if (HIDDEN_IN_NAME.test(line)) lines[i] = quoteHeaderNames(line);
  }
  return lines.join('\n');
}

/** A diff header line with its names quoted where they hide characters. */
function quoteHeaderNames(line: string): string {
  const single = /^(--- |\+\+\+ |rename from |rename to |copy from |copy to )(.*?)(\t?)$/.exec(line);
  if (single) return `${single[1]}${quoteName(single[2]!)}${single[3]}`;
  const pair = /^(diff --git |Binary files )(.*?)( differ)?$/.exec(line);
  const separator = pair?.[1] === 'diff --git ' ? ' ' : ' and ';
  const names = pair ? splitNames(pair[2]!, separator) : undefined;
  return names ? `${pair![1]}${quoteName(names[0])}${separator}${quoteName(names[1])}${pair![3] ?? ''}` : line;
}

/**
 * Two names side by side. A quoted one ends at its closing quote; an unquoted one holds no
 * quote. Two unquoted ones are the same name after `a/` and `b/` (git writes them so when
 * the file kept its name), or split where the second prefix starts.
 */
function splitNames(text: string, separator: string): [string, string] | undefined {
  if (text.startsWith('"')) {
    const end = /^"(?:[^"\\]|\\.)*"/.exec(text)?.[0].length;
    return end !== undefined && text.startsWith(separator, end) ? [text.slice(0, end), text.slice(end + separator.length)] : undefined;
  }
  const quoted = text.indexOf(`${separator}"`);
  if (quoted >= 0) return [text.slice(0, quoted), text.slice(quoted + separator.length)];
  const half = (text.length - separator.length) / 2;
  if (Number.isInteger(half) && text.startsWith(separator, half) && text.slice(2, half) === text.slice(half + separator.length + 2)) {
    return [text.slice(0, half), text.slice(half + separator.length)];
  }
  const second = [`${separator}b/`, `${separator}/dev/null`].map((start) => text.indexOf(start)).find((at) => at > 0);
  return second === undefined ? undefined : [text.slice(0, second), text.slice(second + separator.length)];
}

/** A name (quoted by git already, or not) with its hidden characters as octal escapes, quoted. */
function quoteName(name: string): string {
  if (!HIDDEN_IN_NAME.test(name)) return name;
  const inner = name.startsWith('"') && name.endsWith('"') && name.length >= 2 ? name.slice(1, -1) : name.replace(/[\\"]/g, '\\$&');
  const escaped = [...inner]
    .map((character) =>
      HIDDEN_IN_NAME.test(character) ? [...new TextEncoder().encode(character)].map((byte) => `\\${byte.toString(8).padStart(3, '0')}`).join('') : character,
    )
    .join('');
  return `"${escaped}"`;
}
