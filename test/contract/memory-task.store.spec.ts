import { MemoryTaskBackend, MemoryTaskStore } from '../../lib/tasks/memory-task.store';
import { describeTaskStoreContract } from './task-store.contract';

describeTaskStoreContract('memory', async () => {
  const backend = new MemoryTaskBackend();
  return { stores: [new MemoryTaskStore(backend), new MemoryTaskStore(backend)], async close() {} };
});
