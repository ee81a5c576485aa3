import type { Event } from '../editorPorts.js';
import type { RunningLoopsView } from './runController.js';

/**
 * Several sources of running loops (single loops, candidate groups) as one, for the
 * views: the tree and the viewers follow every running session alike.
 */
export function allRunningLoops(...sources: readonly RunningLoopsView[]): RunningLoopsView {
  const merge =
    <T>(pick: (source: RunningLoopsView) => Event<T>): Event<T> =>
    (listener) => {
      const subscriptions = sources.map((source) => pick(source)(listener));
      return { dispose: () => subscriptions.forEach((subscription) => subscription.dispose()) };
    };
  return {
    runningLoops: () => sources.flatMap((source) => source.runningLoops()),
    runningSessionIds: () => new Set(sources.flatMap((source) => [...source.runningSessionIds()])),
    onEvent: merge((source) => source.onEvent),
    onDidEnd: merge((source) => source.onDidEnd),
  };
}
