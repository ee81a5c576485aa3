import type { CriticRequirement } from '../critic/criticDecision.js';
import { checklistOfCritic, filesNamedIn, judgeRequirements } from '../critic/requirementEvidence.js';
import { parseTaskRequirements, type TaskRequirement } from '../critic/taskRequirements.js';
import type { Repository } from '../git/repository.js';
import { requirementHolds, type CriticCommand, type RequirementSource, type RequirementStatus } from '../sessionFormat/verification.js';
import { fileLocator } from './reviewItems.js';

/** What one iteration's judging of the checklist gives: the statuses, and those that keep DONE from standing. */
export interface JudgedRequirements {
  source: RequirementSource;
  statuses: RequirementStatus[];
  /** Unmet, not judged, or with evidence the record does not confirm. */
  open: RequirementStatus[];
}

/** The checklist as a session last judged it, carried into the run that resumes it. */
export interface CarriedChecklist {
  source: RequirementSource;
  requirements: RequirementStatus[];
}

/**
 * The task's requirements through a run: the list in its prompt, or else the one the
 * critic's first decision gives; each iteration, the critic's answer for each, its
 * evidence checked against that iteration's record (its checks, the critic's own
 * commands, its post snapshot). A resumed run goes on with the checklist its session
 * last judged: a list the critic gave is not given again, and DONE still waits for it.
 */
export class RequirementsChecklist {
  private checklist: TaskRequirement[];
  private source: RequirementSource | null;
  private latest: RequirementStatus[] | null = null;

  constructor(prompt: string, carried?: CarriedChecklist) {
    if (carried && carried.requirements.length > 0) {
      this.checklist = carried.requirements.map(({ id, text }) => ({ id, text }));
      this.source = carried.source;
      this.latest = carried.requirements;
      return;
    }
    this.checklist = parseTaskRequirements(prompt);
    this.source = this.checklist.length > 0 ? 'task' : null;
  }

  /** For the critic's prompt: the checklist with its latest statuses (not judged yet: `met` null); none when the critic is to list it. */
  forCritic(): RequirementStatus[] | null {
    if (this.source === null) return null;
    return this.latest ?? this.checklist.map((each) => ({ ...each, met: null, evidence: '', confirmed_by: null }));
  }

  /** The latest statuses, for the actor's prompt; null before the first judging. */
  statuses(): RequirementStatus[] | null {
    return this.latest;
  }

  /** Judges the critic's answer on one iteration; null when there is no checklist (the task lists none and the critic listed none). */
  async judge(
    answered: readonly CriticRequirement[],
    record: { checks: readonly { name: string; passed: boolean }[]; commands: readonly CriticCommand[] },
    snapshot: { repository: Repository; commit: string; workingDirPrefix: string },
  ): Promise<JudgedRequirements | null> {
    if (this.source === null && answered.length > 0) {
      this.checklist = checklistOfCritic(answered);
      this.source = 'critic';
    }
    if (this.source === null || this.checklist.length === 0) return null;
    const locate = fileLocator(snapshot.repository, snapshot.commit, snapshot.workingDirPrefix);
    const lines = new Map<string, number | undefined>();
    for (const file of filesNamedIn(answered)) lines.set(file, (await locate(file))?.lines);
    this.latest = judgeRequirements(this.checklist, answered, { ...record, lines });
    return { source: this.source, statuses: this.latest, open: this.latest.filter((each) => !requirementHolds(each)) };
  }
}
