import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { writeIdsOf } from '../../lib/store/write-ids';

/** Write ids are made once, above the backends: one mark per backend instance, whoever asks for it. */
describe('write ids of a backend', () => {
  it('are unique across backend instances, and each instance knows its own', () => {
    const [a, b] = [new MemoryBackend(), new MemoryBackend()];
    const ids = new Set<string>();
    for (let n = 0; n < 500; n++) {
      ids.add(writeIdsOf(a).next());
      ids.add(writeIdsOf(b).next());
    }
    expect(ids.size).toBe(1_000);
    const id = writeIdsOf(a).next();
    expect(writeIdsOf(a).wrote(id)).toBe(true);
    expect(writeIdsOf(b).wrote(id)).toBe(false);
  });

  it('are the same for every capability on one backend: one mark, so a write settles whoever reads it back', () => {
    const backend = new MemoryBackend();
    expect(writeIdsOf(backend)).toBe(writeIdsOf(backend));
    expect(writeIdsOf(backend).mark).not.toBe(writeIdsOf(new MemoryBackend()).mark);
  });
});
