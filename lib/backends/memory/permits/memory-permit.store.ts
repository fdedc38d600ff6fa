import { MemoryBackend } from '../memory-backend';
import { MemoryRecords } from '../memory-records';
import { PermitRecordStore, SEMAPHORE_MAP } from '../../../permits/permit-record.store';

/**
 * The data behind one or more {@link MemoryPermitStore}s. Share one backend between stores to simulate several
 * nodes in a single process (e.g. in your own tests).
 */
export class MemoryStoreBackend extends MemoryRecords {
  /** Encoded entries by semaphore name. */
  get entries(): Map<string, string> {
    return this.map(SEMAPHORE_MAP);
  }

  /** Stores a raw value as is (for tests that plant values the library did not write). */
  writeRaw(name: string, raw: string): void {
    this.write(SEMAPHORE_MAP, name, raw);
  }
}

/**
 * A store in this process's memory: for a single instance, local development and tests (the permit store of the
 * store contract on a memory backend). Several stores can share one {@link MemoryStoreBackend} to act as nodes of
 * one cluster. Nothing is ever lost, so no recovery waits.
 */
export class MemoryPermitStore extends PermitRecordStore {
  constructor(backend: MemoryStoreBackend = new MemoryStoreBackend()) {
    super(new MemoryBackend({ records: backend }));
  }
}
