import { CodeloopsError } from '../sessionFormat/failures.js';

/** A mistake in how the command was called: reported without a stack, exit code 2. */
export class UsageError extends CodeloopsError {
  override name = 'UsageError';
  constructor(message: string) {
    super('usage', message);
  }
}
