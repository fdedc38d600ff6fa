import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { withDeadline } from '../../lib/core/with-deadline';

/** One timer serves every call in flight: each call must still time out on its own deadline, and only then. */
describe('withDeadline', () => {
  const never = () => new Promise<never>(() => undefined);
  const settle = <T>(p: Promise<T>) => p.then((value) => ({ value }), (error: unknown) => ({ error }));

  it('answers with the operation when it beats its deadline', async () => {
    expect(await withDeadline(Promise.resolve(7), 1000, 'read "a"')).toBe(7);
    await expect(withDeadline(Promise.reject(new Error('refused')), 1000, 'read "a"')).rejects.toThrow('refused');
  });

  it('times out each call at its own deadline, whatever the order they were started in', async () => {
    const started = performance.now();
    const ended: Record<string, number> = {};
    const wait = (name: string, ms: number) => settle(withDeadline(never(), ms, name)).then((r) => ((ended[name] = performance.now() - started), r));
    const results = await Promise.all([wait('late', 300), wait('early', 50), wait('middle', 150)]);
    for (const r of results) expect((r as { error: unknown }).error).toBeInstanceOf(StoreTimeoutError);
    expect(ended.early).toBeGreaterThanOrEqual(49);
    expect(ended.middle).toBeGreaterThanOrEqual(149);
    expect(ended.late).toBeGreaterThanOrEqual(299);
    // Each fired at its own deadline, not at the latest one's: the earlier two ended before the late one.
    expect(ended.early).toBeLessThan(ended.late);
    expect(ended.middle).toBeLessThan(ended.late);
  });

  it('still times out a call whose earlier neighbour answered (the shared timer is re-armed)', async () => {
    let answer!: (v: string) => void;
    const quick = withDeadline(new Promise<string>((resolve) => (answer = resolve)), 20, 'quick');
    const stalled = settle(withDeadline(never(), 100, 'stalled'));
    answer('done');
    expect(await quick).toBe('done');
    const outcome = await stalled;
    expect((outcome as { error: Error }).error).toBeInstanceOf(StoreTimeoutError);
    expect((outcome as { error: Error }).error.message).toBe('stalled: no answer within 100 ms');
  });

  it('never rejects a call that answered, even when its deadline passes later', async () => {
    const call = withDeadline(Promise.resolve('ok'), 10, 'answered');
    expect(await call).toBe('ok');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(await call).toBe('ok');
  });

  it('swallows the late failure of an abandoned call', async () => {
    let fail!: (e: Error) => void;
    const outcome = await settle(withDeadline(new Promise<never>((_, reject) => (fail = reject)), 5, 'abandoned'));
    expect((outcome as { error: unknown }).error).toBeInstanceOf(StoreTimeoutError);
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    fail(new Error('late'));
    await new Promise((resolve) => setImmediate(resolve));
    process.off('unhandledRejection', unhandled);
    expect(unhandled).not.toHaveBeenCalled();
  });
});
