import type { ScheduleDefinition } from './schedule-definition';

/**
 * What the cluster keeps per schedule id: the definition and who changed it when. Written only by compare-and-set
 * of its exact stored string. Removing a schedule keeps its record as a tombstone (`definition: null`), so its
 * revision goes on growing if the id is defined again and a node's view never mistakes an old write for a new one.
 */
export interface ScheduleRecord {
  /** The schedule's id (the map key). */
  readonly id: string;
  /**
   * Grows by one with every change and never goes back, across remove and re-create. A new id starts at its
   * creator's clock in microseconds, so one created again after its record was lost starts above the lost one.
   */
  readonly revision: number;
  /** When the last change was written (epoch ms, the writer's clock). */
  readonly updatedAt: number;
  /** Who wrote the last change (the writing node's acquirer name). */
  readonly updatedBy: string;
  /** A nonce unique to the operation that wrote this record: settles a write whose outcome was unknown. */
  readonly writeId: string;
  /** The definition; `null` once removed (a tombstone). */
  readonly definition: ScheduleDefinition | null;
}

/** A record of a schedule that exists (not a tombstone). */
export interface LiveScheduleRecord extends ScheduleRecord {
  /** The definition (never `null` here). */
  readonly definition: ScheduleDefinition;
}

/** Whether `record` is a schedule that exists (neither absent nor a tombstone). */
export function isLive(record: ScheduleRecord | undefined): record is LiveScheduleRecord {
  return record !== undefined && record.definition !== null;
}
