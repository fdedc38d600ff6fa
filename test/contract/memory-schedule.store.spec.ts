import { MemoryScheduleBackend, MemoryScheduleStore } from '../../lib/backends/memory/schedules/memory-schedule.store';
import { describeScheduleStoreContract } from './schedule-store.contract';

describeScheduleStoreContract('memory', async () => {
  const backend = new MemoryScheduleBackend();
  return {
    stores: [new MemoryScheduleStore(backend), new MemoryScheduleStore(backend)],
    async plant(id, raw) {
      backend.write('schedules', id, raw);
    },
    async close() {},
  };
});
