import { seedRevision } from '../permits/semaphore-entry';
import type { ScheduleDefinition } from './schedule-definition';
import { isLive, type ScheduleRecord } from './schedule-record';
import { sameDefinition } from './schedule-record.codec';
import { EditConflictError } from '../core/errors/edit-conflict.error';
import { unknownSchedule } from './errors/schedule.errors';

/*
 * What a change of a runtime schedule writes, decided from the record read (pure: the clock and the nonce passed
 * in). Every decision is made again from a fresh read when its compare-and-set loses, so concurrent writers are
 * all applied in some order, never lost; an upsert equal to what is stored writes nothing, so replicas deploying
 * the same schedules at once do not bump its revision.
 */

/** What a change did: `unchanged` wrote nothing (equal content, already paused, already removed). */
export type ScheduleOutcome = 'created' | 'updated' | 'unchanged' | 'removed';

/** What a decision needs besides the record. */
export interface ScheduleWriteContext {
  /** The writer's clock, epoch ms. */
  readonly now: number;
  /** Who writes: the node's acquirer name. */
  readonly by: string;
  /** The operation's nonce, the same on every attempt, so a write whose outcome was unknown is recognised. */
  readonly writeId: string;
  /**
   * The revision of the live schedule the caller based the change on (`0`: none exists): an operator's
   * compare-and-set edit. When the schedule is at another revision, the change is refused with
   * {@link EditConflictError}. Absent: the change applies to whatever is stored.
   */
  readonly expectedRevision?: number;
  /** The clock-skew bound between nodes, ms: a new id's first revision starts this far above the writer's clock. Default 0. */
  readonly skewMs?: number;
}

/** A decision: the outcome, the record to write (none for `unchanged`), and the schedule's revision after it. */
export interface ScheduleDecision {
  readonly outcome: ScheduleOutcome;
  /** The record to compare-and-set in place of the one read. */
  readonly write?: ScheduleRecord;
  /** The revision the schedule has once the decision stands: the write's, else the record's (0: no record). */
  readonly revision: number;
}

/** Creates the schedule, replaces its definition, or (equal content) leaves it as it is. */
export function decideUpsert(current: ScheduleRecord | undefined, definition: ScheduleDefinition, context: ScheduleWriteContext): ScheduleDecision {
  checkExpected(definition.id, current, context.expectedRevision);
  if (isLive(current) && sameDefinition(current.definition, definition)) return { outcome: 'unchanged', revision: current.revision };
  return written(isLive(current) ? 'updated' : 'created', current, definition.id, definition, context);
}

/** Pauses (`paused: true`) or resumes a live schedule; throws {@link NotFoundError} when there is none. */
export function decidePaused(current: ScheduleRecord | undefined, id: string, paused: boolean, context: ScheduleWriteContext): ScheduleDecision {
  if (!isLive(current)) throw unknownSchedule(id);
  checkExpected(id, current, context.expectedRevision);
  if (current.definition.paused === paused) return { outcome: 'unchanged', revision: current.revision };
  return written('updated', current, id, { ...current.definition, paused }, context);
}

/** Removes a live schedule, keeping a tombstone; one already removed (or never defined) is left as it is. */
export function decideRemove(current: ScheduleRecord | undefined, id: string, context: ScheduleWriteContext): ScheduleDecision {
  checkExpected(id, current, context.expectedRevision);
  if (!isLive(current)) return { outcome: 'unchanged', revision: current?.revision ?? 0 };
  return written('removed', current, id, null, context);
}

/** The revision a change would be checked against: the live schedule's, `0` for none (absent or a tombstone). */
export function liveRevision(current: ScheduleRecord | undefined): number {
  return isLive(current) ? current.revision : 0;
}

function checkExpected(id: string, current: ScheduleRecord | undefined, expected: number | undefined): void {
  if (expected === undefined) return;
  const actual = liveRevision(current);
  if (expected !== actual) throw new EditConflictError('schedule', id, 1, expected, actual);
}

function written(
  outcome: ScheduleOutcome,
  current: ScheduleRecord | undefined,
  id: string,
  definition: ScheduleDefinition | null,
  { now, by, writeId, skewMs = 0 }: ScheduleWriteContext,
): ScheduleDecision {
  // A tombstone carries the revision on; a new id starts above any record of it that may have been lost.
  const revision = current ? current.revision + 1 : seedRevision(now, 0, skewMs);
  return { outcome, revision, write: { id, revision, updatedAt: now, updatedBy: by, writeId, definition } };
}
