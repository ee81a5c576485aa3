import type { AppearedRepository } from '../critic/criticPrompt.js';
import type { Repository } from '../git/repository.js';
import type { Snapshot, SnapshotResult } from '../git/snapshots.js';
import { appearedRepositories, changedPaths, type TreeEntryChange } from '../git/treeDiff.js';
import type { NestedRepository } from '../sessionFormat/runEvents.js';

/**
 * The nested repositories a loop has met: folders with a `.git` folder or file of
 * their own. git records one as the commit it is at, so no diff shows what was written
 * in it; one without a commit yet git cannot record at all, so snapshots leave it out.
 * Each is said once, when it is first seen; the critic is told of all of them every time.
 */
export class NestedRepositoryWatch {
  private readonly reportedLeftOut = new Set<string>();
  /** Nested repositories without a commit that this run's first snapshot left out: the user's, there before it. */
  private leftOutAtStart: readonly string[] | undefined;
  /** Folders that became nested repositories since the task began, by path: the iteration each appeared in (null: before this run). */
  private readonly appeared = new Map<string, number | null>();

  constructor(
    private readonly repository: Repository,
    /** A resumed run's first iteration: the folders that appeared in the sessions it carries on are there before it. */
    private readonly resumedAt: number | null,
  ) {}

  /** The folders a snapshot left out that were not said yet; the first snapshot's count as there before the loop. */
  newlyLeftOut(snapshot: SnapshotResult): string[] {
    this.leftOutAtStart ??= snapshot.leftOut;
    const fresh = snapshot.leftOut.filter((folder) => !this.reportedLeftOut.has(folder));
    for (const folder of fresh) this.reportedLeftOut.add(folder);
    return fresh;
  }

  /**
   * The folders that became nested repositories since the task began (`taskStart`),
   * each with the iteration it appeared in, and those that appeared in this iteration.
   */
  async sinceStart(
    iteration: number,
    changesSinceStart: readonly TreeEntryChange[],
    snapshots: { taskStart: Snapshot; pre: Snapshot; post: SnapshotResult },
  ): Promise<{ all: AppearedRepository[]; appearedNow: NestedRepository[] }> {
    const nested = appearedRepositories(changesSinceStart, { before: this.leftOutAtStart ?? [], after: snapshots.post.leftOut });
    const fresh = nested.filter((repository) => !this.appeared.has(repository.path));
    // A resumed run finds those of the sessions it carries on there before its first iteration.
    const earlier =
      iteration === this.resumedAt && fresh.length > 0
        ? appearedRepositories(await changedPaths(this.repository, snapshots.taskStart.tree, snapshots.pre.tree), { before: [], after: [] }).map(
            (repository) => repository.path,
          )
        : [];
    for (const repository of fresh) this.appeared.set(repository.path, earlier.includes(repository.path) ? null : iteration);
    return {
      all: nested.map((repository) => ({ ...repository, iteration: this.appeared.get(repository.path) ?? null })),
      appearedNow: fresh.filter((repository) => this.appeared.get(repository.path) === iteration),
    };
  }
}
