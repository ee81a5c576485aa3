import { sessionsDir } from '../sessionFormat/sessionFiles.js';
import type { WarningSink } from '../sessions/sessionErrors.js';
import { SessionStore } from '../sessions/sessionStore.js';
import { writeWarning } from './terminal.js';

/** The user's sessions, where every command finds them; what cannot be read is a warning on stderr. */
export function openStore(warn: WarningSink = writeWarning): SessionStore {
  return new SessionStore(sessionsDir(), warn);
}
