import { MemoryBackend } from '../memory-backend';
import { MemoryRecords } from '../memory-records';
import { PRESENCE_MAP, PresenceRecordStore } from '../../../presence/presence-record.store';

/** The presence records behind one or more {@link MemoryPresenceStore}s (share one to simulate several nodes). */
export class MemoryPresenceBackend extends MemoryRecords {
  /** Encoded entries by instance id. */
  get entries(): Map<string, string> {
    return this.map(PRESENCE_MAP);
  }

  /** Stores a raw value as is (for tests that plant values the library did not write). */
  writeRaw(instance: string, raw: string | null): void {
    this.write(PRESENCE_MAP, instance, raw);
  }
}

/** Presence in this process's memory: one instance, development and tests (the presence store on a memory backend). */
export class MemoryPresenceStore extends PresenceRecordStore {
  constructor(backend: MemoryPresenceBackend = new MemoryPresenceBackend()) {
    super(new MemoryBackend({ records: backend }));
  }
}
