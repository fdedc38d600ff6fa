import { HazelcastError, SplitBrainProtectionError } from 'hazelcast-client';
import { CorruptStateError } from '../../lib/core/errors/corrupt-state.error';
import { QuorumLostError } from '../../lib/core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import { callWithDeadline, StoreCalls } from '../../lib/backends/hazelcast/store-call';
import { StoreCallObservers, type StoreCall } from '../../lib/store/store-call-observers';

/**
 * The fail-closed rule every Hazelcast store call obeys: whatever the client does, a caller sees one of the library's
 * errors, so it denies or lets go rather than acting on an unknown outcome. No cluster needed: a call only runs the
 * operation it is given.
 */
describe('a Hazelcast store call', () => {
  const calls = () => new StoreCalls(50);
  const failing = (error: unknown) => () => Promise.reject(error);

  it('that gets no answer within its deadline fails with StoreTimeoutError naming the operation', async () => {
    const error = await calls().run(() => new Promise(() => undefined), 'read "billing"', 20).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreTimeoutError);
    expect((error as Error).message).toBe('read "billing": no answer within 20 ms');
  });

  it('uses the store default deadline when given none', async () => {
    const error = await calls().run(() => new Promise(() => undefined), 'list').catch((e: unknown) => e);
    expect((error as Error).message).toBe('list: no answer within 50 ms');
  });

  it('refused by the members split-brain protection fails with QuorumLostError', async () => {
    const refusal = new SplitBrainProtectionError('Split brain protection exception: gatekeeper-quorum has failed!');
    const error = await calls().run(failing(refusal), 'write "billing"').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QuorumLostError);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/^write "billing": the members' split-brain protection is not met \(Split brain/);
    expect((error as Error).cause).toBe(refusal);
  });

  it('that fails any other way fails with StoreUnavailableError naming the operation, the failure as cause', async () => {
    const failure = new HazelcastError('Target is not a member');
    const error = await calls().run(failing(failure), 'read "billing"').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).not.toBeInstanceOf(StoreTimeoutError);
    expect((error as Error).message).toBe('Hazelcast call failed (read "billing"): Target is not a member');
    expect((error as Error).cause).toBe(failure);
    // Not even a thrown non-Error escapes as itself.
    expect(await calls().run(failing('boom'), 'list').catch((e: unknown) => e)).toBeInstanceOf(StoreUnavailableError);
  });

  it("keeps the library's own errors as they are", async () => {
    const unavailable = new StoreUnavailableError('not connected');
    const corrupt = new CorruptStateError('billing', 'not JSON');
    expect(await calls().run(failing(unavailable), 'list').catch((e: unknown) => e)).toBe(unavailable);
    expect(await calls().run(failing(corrupt), 'list').catch((e: unknown) => e)).toBe(corrupt);
  });

  it("turns another library copy's timeout or quorum error into ours, so instanceof checks still fail closed", async () => {
    const foreign = (name: string) => Object.assign(new Error(`${name} from elsewhere`), { name });
    expect(await calls().run(failing(foreign('StoreTimeoutError')), 'list').catch((e: unknown) => e)).toBeInstanceOf(StoreTimeoutError);
    expect(await calls().run(failing(foreign('QuorumLostError')), 'list').catch((e: unknown) => e)).toBeInstanceOf(QuorumLostError);
  });

  it("is counted, and a native store's call is reported to its observers with how it ended", async () => {
    const heard: StoreCall[] = [];
    const observers = new StoreCallObservers();
    const stop = observers.listen((call) => heard.push(call));
    const store = new StoreCalls(50, observers);
    try {
      await store.run(() => Promise.resolve(1), 'read');
      await store.run(failing(new Error('x')), 'read').catch(() => undefined);
      await store.run(() => new Promise(() => undefined), 'read', 5).catch(() => undefined);
      await store.run(failing(new SplitBrainProtectionError('quorum')), 'read').catch(() => undefined);
    } finally {
      stop();
    }
    expect(store.count()).toBe(4);
    expect(heard.map((c) => [c.store, c.outcome])).toEqual([['tasks', 'ok'], ['tasks', 'unavailable'], ['tasks', 'timeout'], ['tasks', 'quorum']]);
  });

  it('made without a store (declaring a cluster new) follows the same mapping', async () => {
    const refusal = new SplitBrainProtectionError('quorum');
    expect(await callWithDeadline(failing(refusal), 1000, 'cluster init: read').catch((e: unknown) => e)).toBeInstanceOf(QuorumLostError);
    expect(await callWithDeadline(failing(new Error('x')), 1000, 'cluster init: read').catch((e: unknown) => e)).toBeInstanceOf(StoreUnavailableError);
    expect(await callWithDeadline(() => new Promise(() => undefined), 5, 'cluster init: read').catch((e: unknown) => e)).toBeInstanceOf(StoreTimeoutError);
  });
});
