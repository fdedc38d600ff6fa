import { MemoryBackend, MemoryRecords, describeStoreContracts } from '../../lib/testing';

// The primitives and every capability store over them (the memory stores are these stores on a memory backend).
describeStoreContracts('memory', async () => {
  const records = new MemoryRecords();
  return {
    backends: [new MemoryBackend({ records }), new MemoryBackend({ records })],
    loseData: async () => records.loseData(),
    close: async () => undefined,
  };
});
