import { MemoryBackend, MemoryRecords, describeBackendContract } from '../../lib/testing';

describeBackendContract('memory', async () => {
  const records = new MemoryRecords();
  return {
    backends: [new MemoryBackend(records), new MemoryBackend(records)],
    loseData: async () => records.loseData(),
    close: async () => undefined,
  };
});
