import { diffIsSinceHead } from '../sessionFormat/sessionLines.js';
import { IterationNotFoundError } from './sessionErrors.js';
import type { SessionPart } from './sessionReading.js';

/**
 * The diff a session recorded, in pieces as its parts are read: one iteration's, or
 * every iteration's in order under a header each. A diff of megabytes left in the
 * file comes a slice at a time.
 */
export async function* recordedDiffParts(id: string, parts: AsyncIterable<SessionPart>, iterationNumber?: number): AsyncGenerator<string> {
  const seen: number[] = [];
  for await (const part of parts) {
    if (part.kind !== 'iteration') continue;
    const iteration = part.line;
    const diff: AsyncIterable<string> | Iterable<string> = part.long?.chars.has('git_diff') ? part.long.text('git_diff') : [iteration.git_diff];
    if (iterationNumber !== undefined) {
      seen.push(iteration.iteration_number);
      if (iteration.iteration_number !== iterationNumber) continue;
      yield* diff;
      return;
    }
    const scope = diffIsSinceHead(iteration) ? ' (the whole change since HEAD, as the original codeloops recorded it; not the iteration’s own)' : '';
    let header = `# iteration ${iteration.iteration_number}${scope}\n`;
    let last = '';
    for await (const piece of diff) {
      if (piece.length === 0) continue;
      yield header + piece;
      header = '';
      last = piece;
    }
    if (last.length > 0 && !last.endsWith('\n')) yield '\n';
  }
  if (iterationNumber !== undefined) {
    throw new IterationNotFoundError(`Session ${id} has no iteration ${iterationNumber} (iterations: ${seen.join(', ') || 'none'}).`);
  }
}
