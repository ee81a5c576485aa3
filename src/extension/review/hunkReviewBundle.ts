/**
 * An iteration's hunks, rejected, restored or staged (`review/hunkReview.ts` and the
 * hunk parser under it), bundled apart as `dist/review.js` and loaded when the user
 * first reviews hunks (`lazyBundle.ts`): most windows never do, and the extension's
 * own bundle stays small.
 */
export { iterationHunks, rejectHunk, stageChanges, undoRejection } from '../../review/hunkReview.js';
