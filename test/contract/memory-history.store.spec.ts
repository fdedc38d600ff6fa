import { MemoryHistoryBackend, MemoryHistoryStore } from '../../lib/backends/memory/schedules/memory-history.store';
import { describeHistoryStoreContract } from './history-store.contract';

describeHistoryStoreContract('memory', async () => {
  const backend = new MemoryHistoryBackend();
  return { stores: [new MemoryHistoryStore(backend), new MemoryHistoryStore(backend)], async close() {} };
});
