import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Move } from '../../src/git/treeMove.js';
import { noMove, settleMove, undoSettlement, type MoveSettlement } from '../../src/rollback/numberedMoves.js';
import type { RollbackOutcome } from '../../src/sessionFormat/rollbackOutcome.js';
import { removeTempDirs, tempDir } from '../support/testEnvironment.js';

/** The one mapping of a move's result to its outcome, shared by rollback, apply and their undos (rollback/numberedMoves.ts). */
describe('a move’s result as its outcome (settleMove)', () => {
  after(removeTempDirs);
  const lists = (overrides: Partial<Move['lists']> = {}): Move['lists'] => ({ ...noMove(), ...overrides });
  const base: RollbackOutcome = { result: 'nothing_to_roll_back', message: '', session_id: 's', iteration: 2, rollback: null, ...noMove() };
  const how = (sidecarDirectory: string): MoveSettlement<RollbackOutcome> => ({
    nothing: { result: 'nothing_to_roll_back', message: 'Already so. Nothing was changed.' },
    action: 'roll back',
    made: 'rolled_back',
    previewWords: 'Would roll session s back to before iteration 2',
    madeWords: 'Rolled session s back to before iteration 2',
    undoable: true,
    sidecarDirectory,
    record: { type: 'rollback', rollback: 1, to_iteration: 2, before_ref: 'refs/before' },
    savedRef: 'refs/before',
    madeFields: { rollback: 1 },
  });
  const recorded = (dir: string) =>
    fs.existsSync(path.join(dir, 'events.jsonl'))
      ? fs
          .readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as Record<string, unknown>)
      : [];

  it('says there was nothing to move, or which paths conflict, and records neither', () => {
    const dir = tempDir();
    const nothing = settleMove(base, { kind: 'nothing', lists: lists() }, how(dir));
    assert.equal(nothing.result, 'nothing_to_roll_back');
    assert.equal(nothing.message, 'Already so. Nothing was changed.');
    const conflict = settleMove(base, { kind: 'conflict', lists: lists({ conflicts: ['a.ts'] }) }, how(dir));
    assert.equal(conflict.result, 'conflict');
    assert.deepEqual(conflict.conflicts, ['a.ts']);
    assert.match(conflict.message, /^Changed nothing: this file was changed .* to roll back would overwrite it: a\.ts/);
    assert.equal(conflict.rollback, null, 'a move not made has no number');
    assert.deepEqual(recorded(dir), []);
  });

  it('previews a dry run in the conditional, writing nothing', () => {
    const dir = tempDir();
    const preview = settleMove(base, { kind: 'preview', lists: lists({ restored: ['a.ts'], removed: ['b.ts'] }) }, how(dir));
    assert.equal(preview.result, 'rolled_back');
    assert.equal(preview.dry_run, true);
    assert.equal(preview.message, 'Would roll session s back to before iteration 2: would restore a.ts; would remove b.ts. Nothing was changed (dry run).');
    assert.equal(preview.saved_ref, null);
    assert.equal(preview.rollback, null);
    assert.deepEqual(recorded(dir), []);
  });

  it('records a move made, with its paths, its number and where the tree as it was is kept', () => {
    const dir = tempDir();
    const made = settleMove(base, { kind: 'moved', lists: lists({ restored: ['a.ts'], removed: ['b.ts'], overwritten: ['a.ts'] }) }, how(dir));
    assert.equal(made.result, 'rolled_back');
    assert.equal(made.dry_run, false);
    assert.equal(made.rollback, 1);
    assert.equal(made.saved_ref, 'refs/before');
    assert.equal(
      made.message,
      'Rolled session s back to before iteration 2: restored a.ts; removed b.ts; overwrote your changes to a.ts. The tree as it was is kept, so this can be undone.',
    );
    assert.deepEqual(made.warnings, []);
    const [event] = recorded(dir);
    assert.deepEqual(
      { ...event, timestamp: undefined },
      {
        type: 'rollback',
        rollback: 1,
        to_iteration: 2,
        before_ref: 'refs/before',
        restored: ['a.ts'],
        removed: ['b.ts'],
        overwritten: ['a.ts'],
        timestamp: undefined,
      },
    );
  });

  it('words the undo of a rollback and of an apply alike, and records each as its kind', () => {
    const dir = tempDir();
    const lists1 = lists({ restored: ['a.ts'] });
    const undo = undoSettlement<RollbackOutcome>(
      { kind: 'apply', move: 2, sessionId: 's', sidecarDirectory: dir },
      { nothing: 'nothing_to_roll_back', made: 'undone' },
    );
    assert.equal(settleMove(base, { kind: 'moved', lists: lists1 }, undo).message, 'Undid apply 2 of session s: restored a.ts.');
    assert.equal(
      settleMove(base, { kind: 'preview', lists: lists1 }, undo).message,
      'Would undo apply 2 of session s: would restore a.ts. Nothing was changed (dry run).',
    );
    assert.equal(
      settleMove(base, { kind: 'nothing', lists: lists() }, undo).message,
      'The files of apply 2 are already as they were before it. Nothing was changed.',
    );
    assert.match(settleMove(base, { kind: 'conflict', lists: lists({ conflicts: ['a.ts'] }) }, undo).message, /to undo the apply would overwrite it/);
    assert.deepEqual(
      recorded(dir).map((event) => [event.type, event.apply, event.rollback]),
      [['apply_undone', 2, undefined]],
    );
    const rollbackDir = tempDir();
    settleMove(
      base,
      { kind: 'moved', lists: lists1 },
      undoSettlement<RollbackOutcome>(
        { kind: 'rollback', move: 1, sessionId: 's', sidecarDirectory: rollbackDir },
        { nothing: 'nothing_to_roll_back', made: 'undone' },
      ),
    );
    assert.deepEqual(
      recorded(rollbackDir).map((event) => [event.type, event.rollback]),
      [['rollback_undone', 1]],
    );
  });

  it('makes the move even when its record cannot be written, and says so', () => {
    const file = path.join(tempDir(), 'not-a-folder');
    fs.writeFileSync(file, '');
    const made = settleMove(
      base,
      { kind: 'moved', lists: lists({ restored: ['a.ts'] }) },
      { ...how(file), undoable: false, madeWords: 'Undid rollback 1 of session s' },
    );
    assert.equal(made.result, 'rolled_back');
    assert.equal(made.message, 'Undid rollback 1 of session s: restored a.ts.');
    assert.equal(made.warnings.length, 1);
    assert.match(made.warnings[0]!, /the rollback was made but could not be recorded/);
  });
});
