import { MemoryPermitStore, MemoryStoreBackend } from '../../lib/backends/memory/permits/memory-permit.store';
import { describePermitStoreContract } from './permit-store.contract';

describePermitStoreContract('memory', async () => {
  const backend = new MemoryStoreBackend();
  return {
    stores: [new MemoryPermitStore(backend), new MemoryPermitStore(backend)],
    async writeRaw(key, value) {
      backend.writeRaw(key, value);
    },
    async close() {},
  };
});
