import { MemoryBackend, describeStoreContracts } from 'nestjs-gatekeeper/testing';

// Every promise of the store contract, and of each capability store the library builds on it, run against a backend
// factory: put your backend where MemoryBackend is.
describeStoreContracts('my backend', async () => {
  // Two instances on one store, as two nodes have (here: two nodes of one memory backend).
  const memory = new MemoryBackend();
  return {
    backends: [memory.node(), memory.node()],
    // Leave loseData out if your store never loses an acknowledged write.
    loseData: async () => memory.records.loseData(),
    close: async () => undefined,
  };
});
