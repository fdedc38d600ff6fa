import { MemoryBackend, MemoryRecords, describeStoreContracts } from 'nestjs-gatekeeper/testing';

// Every promise of the store contract, and of each capability store the library builds on it, run against a backend
// factory: put your backend where MemoryBackend is.
describeStoreContracts('my backend', async () => {
  // Two instances on one store, as two nodes have (here: two memory backends sharing their records).
  const records = new MemoryRecords();
  return {
    backends: [new MemoryBackend(records), new MemoryBackend(records)],
    // Leave loseData out if your store never loses an acknowledged write.
    loseData: async () => records.loseData(),
    close: async () => undefined,
  };
});
