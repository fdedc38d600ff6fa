import { MemoryPermitStore, MemoryStoreBackend } from '../../lib/store/memory-permit.store';
import { describePermitStoreContract } from './permit-store.contract';

describePermitStoreContract('memory', async () => {
  const backend = new MemoryStoreBackend();
  return {
    stores: [new MemoryPermitStore(backend), new MemoryPermitStore(backend)],
    async writeRaw(map, key, value) {
      backend[map].set(key, value);
      if (map === 'definitions') backend.publish(key);
    },
    async close() {},
  };
});
