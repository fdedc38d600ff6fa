import { MemoryBackend } from '../memory-backend';
import { MemoryRecords } from '../memory-records';
import { ScheduleRecordStore } from '../../../schedules/schedule-record.store';

/** The records behind one or more {@link MemoryScheduleStore}s: give the same one to the stores of one "cluster". */
export class MemoryScheduleBackend extends MemoryRecords {}

/** Runtime schedules in this process's memory (one instance, development, tests): the schedule store on a memory backend. */
export class MemoryScheduleStore extends ScheduleRecordStore {
  constructor(backend: MemoryScheduleBackend = new MemoryScheduleBackend()) {
    super(new MemoryBackend({ records: backend }));
  }
}
