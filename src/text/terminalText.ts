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
/* eslint-enable no-control-regex */

export function sanitizeForTerminal(text: string): string {
  return text.replace(OSC, '').replace(CSI, '').replace(OTHER_ESCAPES, '').replace(CONTROLS, '').replace(INVISIBLE_FORMATTING, '');
}
