import { MemoryPresenceBackend, MemoryPresenceStore } from '../../lib/backends/memory/presence/memory-presence.store';
import { describePresenceStoreContract } from './presence-store.contract';

describePresenceStoreContract('memory', async () => {
  const backend = new MemoryPresenceBackend();
  return {
    stores: [new MemoryPresenceStore(backend), new MemoryPresenceStore(backend)],
    async writeRaw(instance, raw) {
      backend.writeRaw(instance, raw);
    },
    async close() {},
  };
});
