/** A mistake in how the command was called: reported without a stack, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}
