/**
 * What must happen, synchronously, if the runner crashes: a running loop ends its
 * session and lets go of its lock. Registered by whoever starts something that needs
 * it, so that the entry point need not load the loop to handle a crash.
 */
const handlers = new Set<(message: string) => void>();

export function onCrash(handler: (message: string) => void): () => void {
  handlers.add(handler);
  return () => handlers.delete(handler);
}

export function runCrashHandlers(message: string): void {
  for (const handler of handlers) {
    try {
      handler(message);
    } catch {
      // the crash is reported anyway
    }
  }
}
