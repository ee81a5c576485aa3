import { buildTimeline } from '../replay/timeline.js';
import { sidecarDirOf } from '../sessionFormat/sessionFiles.js';
import { readReviewRecords, readSidecarEvents } from '../sessions/sidecarReader.js';
import { describeTimelineEntry, oneLine } from '../sessionFormat/eventWording.js';
import { formatDuration } from '../text/humanize.js';
import { sanitizeForTerminal } from '../text/terminalText.js';
import { openStore } from './openStore.js';
import { colorEnabled, paint, writeWarning } from './terminal.js';
import { printAnswer } from './answers.js';

/** `codeloops sessions replay <id> [--json]`: the session's timeline, as text or one JSON entry a line. */
export async function replayCommand(idOrPrefix: string, options: { json?: boolean }): Promise<number> {
  const store = openStore();
  const session = await store.load(await store.resolveId(idOrPrefix));
  const timeline = buildTimeline(
    session,
    await readSidecarEvents(sidecarDirOf(session.id), writeWarning),
    await readReviewRecords(sidecarDirOf(session.id), writeWarning),
  );
  if (options.json) {
    for (const entry of timeline) printAnswer('sessions replay', entry);
    return 0;
  }
  const color = colorEnabled(process.stdout);
  // The one wording of each entry, one line each, after its time and iteration.
  const lines = timeline.map((entry) => {
    const described = describeTimelineEntry(entry);
    // A checklist reads as one: a line for each requirement.
    const text = entry.kind === 'requirements' ? described.map((line) => line.text).join(`\n${' '.repeat(18)}`) : oneLine(described);
    const tone = described[0]?.tone ?? 'muted';
    const offset = entry.offset_secs === null ? '' : `+${formatDuration(entry.offset_secs)}`;
    const iteration = entry.iteration === null ? '' : `it ${entry.iteration}`;
    return `${offset.padStart(9)}  ${iteration.padEnd(6)} ${paint(sanitizeForTerminal(text), tone, color)}`;
  });
  process.stdout.write(lines.join('\n') + '\n');
  return 0;
}
