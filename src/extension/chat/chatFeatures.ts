/**
 * What the chat participant and the language model tools run, bundled apart as
 * `dist/chat.js` (esbuild.mjs) and loaded on their first use (`chatRegistration.ts`):
 * the extension's own bundle, read at every activation, stays small. The parts it
 * works with (the run controller, the session store) are the extension's, handed in.
 */
export { LoopChat } from './loopChat.js';
export { LoopTools } from './loopTools.js';
