import { MemoryBackend } from '../memory-backend';
import { MemoryRecords } from '../memory-records';
import { HistoryRecordStore } from '../../../schedules/history-record.store';

/** The records behind one or more {@link MemoryHistoryStore}s: give the same one to the stores of one "cluster". */
export class MemoryHistoryBackend extends MemoryRecords {}

/** Run history in this process's memory (one instance, development, tests): the history store on a memory backend. */
export class MemoryHistoryStore extends HistoryRecordStore {
  constructor(backend: MemoryHistoryBackend = new MemoryHistoryBackend()) {
    super(new MemoryBackend({ records: backend }));
  }
}
