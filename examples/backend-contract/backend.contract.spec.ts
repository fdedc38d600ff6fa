import { MemoryBackend, describeStoreContracts } from 'nestjs-gatekeeper/testing';
import { TracedBackend } from '../own-backend/traced-backend';

// Every promise of the store contract, and of each capability store the library builds on it, run against a backend
// factory: here TracedBackend over two nodes of one memory backend; put yours in its place.
describeStoreContracts('my backend', async () => {
  // Two instances on one store, as two nodes have.
  const memory = new MemoryBackend();
  return {
    backends: [new TracedBackend(memory.node()), new TracedBackend(memory.node())],
    // Leave loseData out if your store never loses an acknowledged write.
    loseData: async () => memory.records.loseData(),
    close: async () => undefined,
  };
});
