import type { RecordSlot } from '../store/read-decide-write';
import type { ScheduleRecord } from './schedule-record';
import type { ScheduleStore, VersionedSchedule } from './schedule-store';

/**
 * A schedule's record as a slot of the one read-decide-write (`readDecideWrite`): a write read back landed when it
 * holds its write id and revision (a record's write id is its writer's alone).
 */
export function scheduleSlot(store: Pick<ScheduleStore, 'read' | 'compareAndSet'>, id: string): RecordSlot<VersionedSchedule, ScheduleRecord> {
  return {
    read: (call) => store.read(id, call),
    write: (read, next, call) => store.compareAndSet(id, read, next, call),
    holds: ({ record }, next) => record?.writeId === next.writeId && record.revision === next.revision,
  };
}
