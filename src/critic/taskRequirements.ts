/**
 * The task's requirements as a checklist, read from its prompt: the items of a list
 * under a heading such as "Requirements", "Acceptance criteria", "Verification (plan)"
 * or "Definition of done" (a Markdown heading, or a line ending in `:`), each item
 * verbatim, numbered `REQ1`, `REQ2`… in order. Pure: no files, no git.
 */

export interface TaskRequirement {
  /** `REQ1`, `REQ2`… (never `R…`: those are rejected hunks). */
  id: string;
  text: string;
}

/** The headings a checklist sits under, as people write them. */
const CHECKLIST_HEADING = /^(?:the\s+|our\s+)?(?:requirements?|acceptance\s+criteria|verification(?:\s+plan)?|definition\s+of\s+done)(?:\s*\([^)]*\))?$/i;
const MARKDOWN_HEADING = /^#{1,6}\s+(.*?)\s*#*\s*$/;
const ITEM = /^(\s*)(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(.*)$/;
const FENCE = /^\s*(```|~~~)/;

/** The heading's words without Markdown's marks and a closing colon, or null when the line is no heading. */
function headingText(line: string): string | null {
  const trimmed = line.trim();
  const markdown = MARKDOWN_HEADING.exec(trimmed);
  const words = markdown ? markdown[1]! : /:(\*\*)?$/.test(trimmed) && !ITEM.test(line) ? trimmed : null;
  if (words === null) return null;
  return words
    .replace(/^\*\*|\*\*$/g, '')
    .replace(/\s*:\s*(\*\*)?$/, '')
    .replace(/^\*\*|\*\*$/g, '')
    .trim();
}

/**
 * The checklist of the task, or none when its prompt has no list under such a heading
 * (the critic's first decision then lists the requirements). Several such sections are
 * one checklist; an item's continuation lines and nested items belong to it.
 */
export function parseTaskRequirements(prompt: string): TaskRequirement[] {
  const texts: string[] = [];
  let inChecklist = false;
  let inFence = false;
  let itemIndent: number | null = null;
  for (const line of prompt.split(/\r?\n/)) {
    if (FENCE.test(line)) inFence = !inFence;
    if (inFence) continue;
    const heading = headingText(line);
    if (heading !== null) {
      inChecklist = CHECKLIST_HEADING.test(heading);
      itemIndent = null;
      continue;
    }
    if (!inChecklist || line.trim() === '') continue;
    const item = ITEM.exec(line);
    const indent = line.length - line.trimStart().length;
    if (item && (itemIndent === null || indent <= itemIndent)) {
      itemIndent = indent;
      if (item[2]!.trim()) texts.push(item[2]!.trim());
    } else if (itemIndent !== null && (indent > itemIndent || item)) {
      // A continuation line or a nested item: part of the item above, verbatim.
      texts[texts.length - 1] = `${texts.at(-1)!} ${line.trim()}`;
    } else {
      // Prose after the list ends it.
      inChecklist = false;
    }
  }
  return texts.map((text, index) => ({ id: `REQ${index + 1}`, text }));
}

/** `REQ2` from how a critic may write it: `REQ2`, `req-2`, `Req 2`, `2`; null otherwise. */
export function requirementId(written: string): string | null {
  const match = /^\s*(?:req[\s_-]*)?(\d{1,4})\s*$/i.exec(written);
  return match ? `REQ${Number(match[1])}` : null;
}
