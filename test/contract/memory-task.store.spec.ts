import { MemoryTaskBackend, MemoryTaskStore } from '../../lib/tasks/memory-task.store';
import { describeTaskStoreContract } from './task-store.contract';
import { describeRankedClaimsContract } from './task-store-ranks.contract';

describeTaskStoreContract('memory', async () => {
  const backend = new MemoryTaskBackend();
  return { stores: [new MemoryTaskStore(backend), new MemoryTaskStore(backend)], async close() {} };
});

describeRankedClaimsContract('memory', async () => {
  const backend = new MemoryTaskBackend();
  return {
    stores: [new MemoryTaskStore(backend), new MemoryTaskStore(backend)],
    async plant(id, json) {
      backend.tasks.set(id, json);
    },
    async close() {},
  };
});
