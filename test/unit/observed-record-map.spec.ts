import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { MemoryRecords } from '../../lib/backends/memory/memory-records';
import { QuorumLostError } from '../../lib/core/errors/quorum-lost.error';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { StoreUnavailableError } from '../../lib/core/errors/store-unavailable.error';
import { ObservedRecordMap, openObservedMap } from '../../lib/store/observed-record-map';
import type { RecordMap } from '../../lib/store/record-map';
import { StoreCallObservers, storeCallsOf, type StoreCall } from '../../lib/store/store-call-observers';
import { FakeClock } from '../support/fake-clock';

/**
 * Store calls are measured above the backends, alike for every one: a capability's map reports each call, labelled
 * by the capability whose map it is, with how it ended. The backend contract suites prove the maps themselves; this
 * proves the measuring, on the memory backend and on a map whose calls fail as a backend's may.
 */
describe('an observed record map', () => {
  const backend = new MemoryBackend({ records: new MemoryRecords(new FakeClock(1_000)) });
  beforeAll(() => backend.open());
  afterAll(() => backend.close());

  const heardOn = (observers: StoreCallObservers) => {
    const heard: StoreCall[] = [];
    return { heard, stop: observers.listen((call) => heard.push(call)) };
  };

  it('reports every call with its capability and outcome: ok, or conflict when a compare-and-set finds the record changed', async () => {
    const map = await openObservedMap(backend, 'semaphores');
    const { heard, stop } = heardOn(storeCallsOf(backend));
    try {
      expect(await map.create('billing', 'a')).toBe(true);
      expect(await map.create('billing', 'b')).toBe(false);
      const stored = (await map.get('billing'))!;
      expect(await map.replace({ key: 'billing', value: 'stale' }, 'c')).toBe(false);
      expect(await map.replace(stored, 'c')).toBe(true);
      expect(await map.remove(stored)).toBe(false);
    } finally {
      stop();
    }
    expect(heard.map((c) => [c.store, c.outcome])).toEqual([
      ['permits', 'ok'], ['permits', 'conflict'], ['permits', 'ok'], ['permits', 'conflict'], ['permits', 'ok'], ['permits', 'conflict'],
    ]);
    expect(heard.every((c) => c.durationMs >= 0)).toBe(true);
  });

  it('labels each map by its capability', async () => {
    const { heard, stop } = heardOn(storeCallsOf(backend));
    try {
      for (const name of ['semaphore-keys', 'presence', 'tasks', 'task-groups', 'schedules', 'job-runs']) await (await openObservedMap(backend, name)).list();
    } finally {
      stop();
    }
    expect(heard.map((c) => c.store)).toEqual(['permits', 'presence', 'tasks', 'tasks', 'schedules', 'schedules']);
  });

  it('reports a failed call as timeout, quorum or unavailable, and fails as the backend did', async () => {
    const failures = [new StoreTimeoutError('read: no answer within 5 ms'), new QuorumLostError('refused'), new StoreUnavailableError('down')];
    const failing = { name: 'presence', get: () => Promise.reject(failures.shift()!) } as unknown as RecordMap;
    const observers = new StoreCallObservers();
    const map = new ObservedRecordMap(failing, observers, 'presence');
    const { heard, stop } = heardOn(observers);
    const errors = [];
    try {
      for (let i = 0; i < 3; i++) errors.push(await map.get('a').catch((e: unknown) => e));
    } finally {
      stop();
    }
    expect(errors.map((e) => (e as Error).constructor.name)).toEqual(['StoreTimeoutError', 'QuorumLostError', 'StoreUnavailableError']);
    expect(heard.map((c) => c.outcome)).toEqual(['timeout', 'quorum', 'unavailable']);
  });

  it('times nothing while nobody listens, and a listener that throws does not fail the call', async () => {
    const map = await openObservedMap(backend, 'schedules');
    await map.put('quiet', '1'); // nobody listening: passes straight through
    const stop = storeCallsOf(backend).listen(() => {
      throw new Error('listener bug');
    });
    try {
      await expect(map.get('quiet')).resolves.toEqual({ key: 'quiet', value: '1' });
    } finally {
      stop();
    }
    expect(storeCallsOf(backend).heard).toBe(false);
  });
});
