import { CodeloopsError, type FailureDetails } from '../sessionFormat/failures.js';

/**
 * What goes wrong when a session is looked for or read. These stop the reading; a
 * bad line inside a session does not: it is skipped and said to a `WarningSink`.
 */

/** Where readers say what they skipped (a bad line, an unreadable file) and go on. */
export type WarningSink = (message: string) => void;

export class SessionNotFoundError extends CodeloopsError {
  override name = 'SessionNotFoundError';
  constructor(id: string, directory: string) {
    super('session_not_found', `No session "${id}" in ${directory}.`, { id, directory });
  }
}

export class AmbiguousSessionIdError extends CodeloopsError {
  override name = 'AmbiguousSessionIdError';
  constructor(prefix: string, matches: readonly string[]) {
    super(
      'session_ambiguous',
      `"${prefix}" matches ${matches.length} sessions (${matches.slice(0, 5).join(', ')}${matches.length > 5 ? ', …' : ''}); give more of the id.`,
      {
        prefix,
        matches: matches.slice(0, 20),
      },
    );
  }
}

export class IterationNotFoundError extends CodeloopsError {
  override name = 'IterationNotFoundError';
  constructor(message: string, details: FailureDetails = {}) {
    super('iteration_not_found', message, details);
  }
}

export class NotASessionError extends CodeloopsError {
  override name = 'NotASessionError';
  constructor(message: string, filePath: string) {
    super('not_a_session', message, { file: filePath });
  }
}
