import type { ScheduleDefinition } from './schedule-definition';

/** A runtime schedule that exists, with who changed it when. */
export interface LiveScheduleRecord {
  /** The schedule's id. */
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
  /** The definition. */
  readonly definition: ScheduleDefinition;
}

/**
 * What the cluster keeps per schedule id (the map key): a {@link LiveScheduleRecord}, or its tombstone. Written only
 * by compare-and-set of its exact stored string. Removing a schedule keeps its record as a tombstone
 * (`definition: null`), so its revision goes on growing if the id is defined again and a node's view never mistakes
 * an old write for a new one.
 */
export interface ScheduleRecord extends Omit<LiveScheduleRecord, 'definition'> {
  /** The definition; `null` once removed (a tombstone). */
  readonly definition: ScheduleDefinition | null;
}

/** Whether `record` is a schedule that exists (neither absent nor a tombstone). */
export function isLive(record: ScheduleRecord | undefined): record is LiveScheduleRecord {
  return record !== undefined && record.definition !== null;
}
