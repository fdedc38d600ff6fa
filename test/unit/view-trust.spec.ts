import { ViewTrust } from '../../lib/store/view-trust';

/** The suspicion of a view across a feed that drops and comes back while calls still work. */
describe('ViewTrust', () => {
  const setup = () => {
    let rereads = 0;
    const trust = new ViewTrust(async () => {
      rereads++;
    }, { disconnected: () => undefined, resynced: () => undefined });
    trust.start();
    return { trust, rereads: () => rereads };
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  it('stays suspect after a re-read made while the feed is down, and trusts again only after the re-read the reconnect starts', async () => {
    const { trust, rereads } = setup();
    trust.missed('disconnected');
    expect(trust.trusted()).toBe(false);
    // A call works while the LISTEN connection is still down (PostgreSQL's pool is not its feed): it re-reads...
    trust.callWorked();
    await settle();
    expect(rereads()).toBe(1);
    // ... but a change committed after that read and before the feed listens again would go unheard: still suspect.
    expect(trust.trusted()).toBe(false);
    trust.missed('reconnected');
    await settle();
    expect(rereads()).toBe(2);
    expect(trust.trusted()).toBe(true);
  });

  it('trusts again after a re-read once the feed is up', async () => {
    const { trust } = setup();
    trust.callFailed();
    expect(trust.trusted()).toBe(false);
    trust.callWorked();
    await settle();
    expect(trust.trusted()).toBe(true);
  });
});
