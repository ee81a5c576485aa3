import type { Repository } from '../git/repository.js';
import { pointRef, sessionHeadRef, snapshotRef, takeSnapshot, type Snapshot, type SnapshotLabel, type SnapshotResult } from '../git/snapshots.js';
import type { EmitEvent } from './iterationWork.js';
import type { NestedRepositoryWatch } from './nestedRepositories.js';
import { revertChangesSince, type UserGitState } from './treeGuard.js';

/**
 * The loop's snapshots of the tree (`pre`, `post`, and what the checks or the critic
 * left), and the putting back of what the checks and the critic changed: the tree
 * that ends an iteration is the actor's.
 */
export class IterationSnapshots {
  constructor(
    private readonly repository: Repository,
    private readonly sessionId: string,
    private readonly nested: NestedRepositoryWatch,
    private readonly emit: EmitEvent,
  ) {}

  async take(iteration: number, label: SnapshotLabel, withRef = true): Promise<SnapshotResult> {
    const ref = withRef ? snapshotRef(this.sessionId, iteration, label) : null;
    // The session's head follows the tree the loop leaves: pre and post, not the critic's or the checks' (undone).
    const refs = ref ? [ref, ...(label === 'critic' || label === 'checks' ? [] : [sessionHeadRef(this.sessionId)])] : [];
    const taken = await takeSnapshot(this.repository, `codeloops ${this.sessionId} iteration ${iteration} ${label}`, refs);
    for (const folder of this.nested.newlyLeftOut(taken))
      this.warn(`${folder}/ is a git repository with no commit yet: git cannot record it, so snapshots, diffs and reviews leave it out until it has one`);
    if (withRef) this.emit({ type: 'snapshot', iteration, label, commit: taken.commit, ref });
    return taken;
  }

  /**
   * The critic reads and the checks run; neither changes the tree. Anything they
   * changed goes back to the actor's version (theirs is kept under a ref), and the
   * iteration says so.
   */
  async putBack(iteration: number, who: 'critic' | 'checks', post: Snapshot, gitBefore: UserGitState): Promise<string[]> {
    const after = await this.take(iteration, who, false);
    if (after.tree !== post.tree) {
      const ref = snapshotRef(this.sessionId, iteration, who);
      await pointRef(this.repository, ref, after.commit, `codeloops ${this.sessionId} iteration ${iteration} ${who} changes`);
      this.emit({ type: 'snapshot', iteration, label: who, commit: after.commit, ref });
    }
    const whom = who === 'critic' ? 'the critic' : 'the checks';
    const report = await revertChangesSince(this.repository, gitBefore, after, post, whom);
    if (report.revertedFiles.length > 0) {
      const paths = report.revertedFiles;
      if (who === 'critic') this.emit({ type: 'critic_changes_reverted', iteration, paths });
      this.warn(
        `iteration ${iteration}: ${whom} changed ${paths.length} file${paths.length === 1 ? '' : 's'} (${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}); ` +
          `restored the actor's version. Their version is kept at ${snapshotRef(this.sessionId, iteration, who)}.`,
      );
    }
    if (report.revertedGitState.length > 0) this.warn(`iteration ${iteration}: ${whom} changed the repository; ${report.revertedGitState.join('; ')}`);
    return report.revertedFiles;
  }

  private warn(message: string): void {
    this.emit({ type: 'warning', message });
  }
}
