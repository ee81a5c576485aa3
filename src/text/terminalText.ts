/**
 * Text from agents is shown in terminals, and a terminal obeys escape sequences:
 * an agent could set the window title, write to the clipboard (OSC 52) or clear the
 * screen. Sequences and control characters are removed before printing; newlines
 * and tabs stay.
 */

/* eslint-disable no-control-regex -- matching control characters is what this file is for */
const OSC = /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?/g;
const CSI = /\x1b\[[0-?]*[ -/]*[@-~]/g;
const OTHER_ESCAPES = /\x1b[@-Z\\-_]/g;
// C0 controls except tab and newline, DEL, and C1 controls.
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/* eslint-enable no-control-regex */

export function sanitizeForTerminal(text: string): string {
  return text.replace(OSC, '').replace(CSI, '').replace(OTHER_ESCAPES, '').replace(CONTROLS, '');
}
