import { Client } from 'hazelcast-client';
import { InvalidInputError, PermitNotHeldError, NotFoundError, type Permit } from '../../lib';
import { startNode, TickJobs, type LedgerEntry, type TestNode } from '../fixtures/gatekeeper-node.fixture';
import { eventually } from '../support/eventually';
import { testClientConfig, uniquePrefix } from '../support/test-cluster';

type Call = (node: TestNode, held: Permit) => unknown;

/** Every bad call gets an error naming the thing and the field, and the cluster's maps are byte-for-byte unchanged. */
describe('bad input and foreign data', () => {
  const mapPrefix = uniquePrefix('bad');
  const ledger: LedgerEntry[] = [];
  let a: TestNode;
  let b: TestNode;
  let raw: Client;
  let held: Permit;

  const snapshot = async () => (await (await raw.getMap<string, string>(`${mapPrefix}.semaphores`)).entrySet()).sort();

  beforeAll(async () => {
    raw = await Client.newHazelcastClient(testClientConfig());
    const definitions = [{ name: 'billing', duration: '1m' }, { name: 'reports', duration: '1m', permits: 2 }];
    a = await startNode({ identity: { acquirer: 'node-a' }, mapPrefix, definitions, ledger });
    b = await startNode({ identity: { acquirer: 'node-b' }, mapPrefix, definitions, ledger });
    held = await b.gatekeeper.acquire('reports');
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await raw.shutdown();
  });

  const cases: Array<[string, Call, new (...args: never[]) => Error, RegExp]> = [
    ['an invalid group regex', (n) => n.semaphores.putDefinition({ name: 'billing', duration: '1m', groupPattern: 'prod(' }), InvalidInputError, /"billing": invalid groupPattern/],
    ['an invalid acquirer regex', (n) => n.semaphores.updateDefinition('billing', { acquirerPattern: '*' }), InvalidInputError, /"billing": invalid acquirerPattern/],
    ['negative permits', (n) => n.semaphores.updateDefinition('billing', { permits: -1 }), InvalidInputError, /"billing": invalid permits/],
    ['fractional permits', (n) => n.semaphores.putDefinition({ name: 'billing', duration: '1m', permits: 1.5 }), InvalidInputError, /"billing": invalid permits/],
    ['an unparsable duration', (n) => n.semaphores.putDefinition({ name: 'billing', duration: 'soon' }), InvalidInputError, /"billing": invalid duration/],
    ['a zero duration', (n) => n.semaphores.updateDefinition('billing', { duration: 0 }), InvalidInputError, /"billing": invalid duration/],
    ['an empty name', (n) => n.semaphores.putDefinition({ name: '', duration: '1m' }), InvalidInputError, /invalid name/],
    ['an over-long name', (n) => n.semaphores.putDefinition({ name: 'n'.repeat(201), duration: '1m' }), InvalidInputError, /invalid name: must be at most 200/],
    ['an unknown field', (n) => n.semaphores.updateDefinition('billing', { permit: 2 } as never), InvalidInputError, /"billing": invalid permit: is not a definition field/],
    ['a rename by update', (n) => n.semaphores.updateDefinition('billing', { name: 'x' } as never), InvalidInputError, /"billing": invalid name/],
    ['an update of an unknown semaphore', (n) => n.semaphores.updateDefinition('ghost', { permits: 1 }), NotFoundError, /"ghost" has no definition/],
    ['a resume of an unknown semaphore', (n) => n.semaphores.resume('ghost'), NotFoundError, /"ghost"/],
    ['an empty migration group', (n) => n.semaphores.migrate('', 'dr-site'), InvalidInputError, /^Invalid migration\.fromGroup: must be a non-empty group name/],
    ['a release of another node\'s permit', (n, p) => n.gatekeeper.release(p), PermitNotHeldError, /"reports": permit with fencing token \d+ is not held by "node-a"/],
    ['a release of a forged token', (n, p) => n.gatekeeper.release({ ...p, acquirer: 'node-a', fencingToken: 1 }), PermitNotHeldError, /fencing token 1 is not held/],
    ['a force-release of a non-number', (n) => n.semaphores.forceRelease('reports', Number.NaN), InvalidInputError, /"reports": invalid fencingToken/],
    ['an acquire timeout that is no duration', (n) => n.gatekeeper.acquire('billing', { timeout: 'soon' }), InvalidInputError, /"billing": invalid timeout/],
    ['a permit asked by an empty name', (n) => n.gatekeeper.tryAcquire(''), InvalidInputError, /invalid name/],
    ['a name with a NUL byte', (n) => n.semaphores.putDefinition({ name: 'bill\u0000ing', duration: '1m' }), InvalidInputError, /"bill\\u0000ing": invalid name: must not contain control characters \(U\+0000 at index 4\)/],
    ['a permit asked by a name with a C1 control', (n) => n.gatekeeper.tryAcquire('bill\u009bing'), InvalidInputError, /invalid name: must not contain control characters \(U\+009B at index 4\)/],
    ['an update of a name with a lone surrogate', (n) => n.semaphores.updateDefinition('bill\ud800', { permits: 2 }), InvalidInputError, /invalid name: must be well-formed Unicode text \(a lone surrogate U\+D800 at index 4\)/],
    ['a migration to a group with a line feed', (n) => n.semaphores.migrate('production', 'dr\nsite'), InvalidInputError, /^Invalid migration\.toGroup: must not contain control characters \(U\+000A at index 2\)/],
  ];

  it.each(cases)('rejects %s with a clear error and changes nothing', async (_, call, type, message) => {
    const before = await snapshot();
    const error = await (async () => call(a, held))().then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(type);
    expect((error as Error).message).toMatch(message);
    expect(await snapshot()).toEqual(before);
  });

  it('denies, logs once per node with the key, and once an operator resets it rebuilds the entry and waits out its permits', async () => {
    const token = (await a.semaphores.permits()).find((s) => s.name === 'billing')?.lastToken ?? 0;
    await (await raw.getMap<string, string>(`${mapPrefix}.semaphores`)).set('billing', '{"holder":"someone by hand"}');
    const jobs = a.get(TickJobs);
    for (let tick = 0; tick < 3; tick++) await jobs.billing(tick);
    expect(ledger.filter((e) => e.job === 'billing')).toEqual([]);
    // Once per node (Nest's static loggers may route both nodes' lines to the last app's logger).
    await eventually('each node to log it once', () => [a, b].flatMap((n) => n.logger.find('error', /unreadable value under "billing"/)).length === 2);
    expect(await a.gatekeeper.tryAcquire('billing')).toMatchObject({ granted: false, reason: 'CORRUPT_STATE' });
    await a.semaphores.resetPermits('billing');
    // Nobody can tell what the unreadable entry held: nothing is granted until a permit of it would have lapsed.
    const denied = await b.gatekeeper.tryAcquire('billing');
    expect(denied).toMatchObject({ granted: false, reason: 'RECOVERING' });
    const status = (await a.semaphores.permits()).find((s) => s.name === 'billing')!;
    expect(status.definition?.durationMs).toBe(60_000); // the definition the nodes remembered is put back
    expect(status.recoveringUntil! - Date.now()).toBeGreaterThan(55_000);
    expect(status.lastToken ?? 0).toBeGreaterThanOrEqual(token);
  });

  it('skips a hand-written entry without crashing, and takes the repaired one', async () => {
    await (await raw.getMap<string, string>(`${mapPrefix}.semaphores`)).set('hand-made', 'permits=3');
    await eventually('the bad definition to be reported', () => [a, b].some((n) => n.logger.find('error', /"hand-made"/).length));
    expect(a.semaphores.getDefinition('hand-made')).toBeUndefined();
    expect(await a.gatekeeper.tryAcquire('hand-made')).toMatchObject({ granted: false, reason: 'CORRUPT_STATE' });
    await a.semaphores.resetPermits('hand-made');
    await a.semaphores.putDefinition({ name: 'hand-made', duration: '1m', permits: 3 });
    expect(await a.gatekeeper.tryAcquire('hand-made')).toMatchObject({ granted: false, reason: 'RECOVERING' });
  });
});
