import fs from 'node:fs';
import path from 'node:path';
import type { CriticDecisionKind, Outcome } from '../sessionFormat/sessionLines.js';
import { fileTimestamp, promptHash, sessionFilePath } from '../sessionFormat/sessionFiles.js';
import { sessionLineSchema } from '../sessionFormat/sessionLines.js';
import { AppendOnlyFile } from './appendOnlyFile.js';

export interface SessionStartFields {
  prompt: string;
  workingDir: string;
  actorAgent: string;
  criticAgent: string;
  actorModel: string | null;
  criticModel: string | null;
  maxIterations: number | null;
  /** Set when this session carries on another one (see `codeloops resume`). */
  resumedFrom?: { sessionId: string; afterIteration: number };
}

export interface IterationFields {
  iterationNumber: number;
  actorOutput: string;
  actorStderr: string;
  actorExitCode: number;
  actorDurationSecs: number;
  gitDiff: string;
  gitFilesChanged: number;
  gitInsertions: number;
  gitDeletions: number;
  criticDecision: CriticDecisionKind;
  feedback: string | null;
  remainingIssues: string[];
  criticRevertedFiles: string[];
}

export interface SessionEndFields {
  outcome: Outcome;
  iterations: number;
  summary: string | null;
  confidence: number | null;
  durationSecs: number;
  error: string | null;
}

/**
 * Writes one session file in the documented format. The documented fields come
 * first, in documented order; this runner's extra fields follow.
 */
export class SessionWriter {
  private ended = false;

  private constructor(
    readonly sessionId: string,
    private readonly file: AppendOnlyFile,
  ) {}

  get filePath(): string {
    return this.file.filePath;
  }

  /**
   * Creates `<timestamp>_<hash>.jsonl` and writes `session_start`. Two sessions with
   * the same prompt in the same second would collide; the later one takes the next
   * free second so the documented name format holds.
   */
  static create(sessionsDirectory: string, fields: SessionStartFields, startedAt: Date): SessionWriter {
    fs.mkdirSync(sessionsDirectory, { recursive: true, mode: 0o700 });
    const hash = promptHash(fields.prompt);
    for (let offsetSecs = 0; ; offsetSecs++) {
      const sessionId = `${fileTimestamp(new Date(startedAt.getTime() + offsetSecs * 1000))}_${hash}`;
      let file: AppendOnlyFile;
      try {
        file = AppendOnlyFile.createExclusive(sessionFilePath(sessionsDirectory, sessionId));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST' && offsetSecs < 3600) continue;
        throw error;
      }
      const writer = new SessionWriter(sessionId, file);
      writer.writeStart(fields, startedAt);
      return writer;
    }
  }

  /** Reopens a session that has no `session_end` yet, to carry it on (a torn last line is cut off first). */
  static reopen(filePath: string): SessionWriter {
    const sessionId = path.basename(filePath, '.jsonl');
    return new SessionWriter(sessionId, AppendOnlyFile.openForAppend(filePath));
  }

  private writeStart(fields: SessionStartFields, startedAt: Date): void {
    this.append({
      type: 'session_start',
      timestamp: startedAt.toISOString(),
      prompt: fields.prompt,
      working_dir: fields.workingDir,
      actor_agent: fields.actorAgent,
      critic_agent: fields.criticAgent,
      actor_model: fields.actorModel,
      critic_model: fields.criticModel,
      max_iterations: fields.maxIterations,
      ...(fields.resumedFrom ? { resumed_from: fields.resumedFrom.sessionId, resumed_after_iteration: fields.resumedFrom.afterIteration } : {}),
    });
    this.file.sync();
  }

  writeIteration(fields: IterationFields, completedAt: Date = new Date()): void {
    this.assertOpen();
    this.append({
      type: 'iteration',
      iteration_number: fields.iterationNumber,
      actor_output: fields.actorOutput,
      actor_stderr: fields.actorStderr,
      actor_exit_code: fields.actorExitCode,
      actor_duration_secs: roundSecs(fields.actorDurationSecs),
      git_diff: fields.gitDiff,
      git_files_changed: fields.gitFilesChanged,
      critic_decision: fields.criticDecision,
      feedback: fields.criticDecision === 'DONE' ? null : fields.feedback,
      timestamp: completedAt.toISOString(),
      git_insertions: fields.gitInsertions,
      git_deletions: fields.gitDeletions,
      ...(fields.remainingIssues.length > 0 ? { remaining_issues: fields.remainingIssues } : {}),
      ...(fields.criticRevertedFiles.length > 0 ? { critic_reverted_files: fields.criticRevertedFiles } : {}),
    });
    this.file.sync();
  }

  writeEnd(fields: SessionEndFields, endedAt: Date = new Date()): void {
    this.assertOpen();
    this.ended = true;
    this.append({
      type: 'session_end',
      outcome: fields.outcome,
      iterations: fields.iterations,
      summary: fields.summary,
      confidence: fields.confidence,
      duration_secs: roundSecs(fields.durationSecs),
      timestamp: endedAt.toISOString(),
      ...(fields.error ? { error: fields.error } : {}),
    });
    this.file.sync();
  }

  close(): void {
    this.file.close();
  }

  /** Every line is checked against the documented format before it is written: a line no reader accepts is never written. */
  private append(line: Record<string, unknown>): void {
    const checked = sessionLineSchema.safeParse(line);
    if (!checked.success) throw new Error(`refusing to write an invalid ${String(line.type)} line: ${checked.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`);
    this.file.appendLine(line);
  }

  private assertOpen(): void {
    if (this.ended) throw new Error(`session ${this.sessionId} has already ended`);
  }
}

function roundSecs(value: number): number {
  return Math.round(value * 1000) / 1000;
}
