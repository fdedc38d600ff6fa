import { createTestingGatekeeper } from './memory-store.spec-example';

describe('guide example (docs/configuration.md): the memory store in your own tests', () => {
  it('grants a permit without any cluster', async () => {
    const gatekeeper = await createTestingGatekeeper();
    expect(await gatekeeper.tryAcquire('billing')).toMatchObject({ granted: true });
  });
});
