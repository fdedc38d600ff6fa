import { MemoryBackend } from '../memory-backend';
import { MemoryRecords } from '../memory-records';
import { TASK_GROUP_MAP, TASK_MAP, TaskRecordStore } from '../../../tasks/task-record.store';

/**
 * The shared state of memory task stores: one per "cluster" (give the same backend to the stores of the nodes one
 * process simulates).
 */
export class MemoryTaskBackend extends MemoryRecords {
  /** Encoded tasks by id. */
  get tasks(): Map<string, string> {
    return this.map(TASK_MAP);
  }

  /** Encoded group records by id. */
  get groups(): Map<string, string> {
    return this.map(TASK_GROUP_MAP);
  }

  /** Stores a raw task value as is (`null`: removes it), telling the watchers: for tests that plant values the library did not write. */
  writeRaw(id: string, raw: string | null): void {
    this.write(TASK_MAP, id, raw);
  }
}

/**
 * Tasks in this process's memory: one instance, development and tests (the default task store of the store contract
 * on a memory backend, the same code every backend without a native path runs). Connect it before use; several stores
 * can share one {@link MemoryTaskBackend} to act as nodes of one cluster. Events of a write come a moment (a
 * microtask) after it, as a store's events come after its answer.
 */
export class MemoryTaskStore extends TaskRecordStore {
  constructor(backend: MemoryTaskBackend = new MemoryTaskBackend()) {
    super(new MemoryBackend({ records: backend }));
  }
}
