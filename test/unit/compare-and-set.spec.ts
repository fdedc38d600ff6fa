import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { Deadline } from '../../lib/core/deadline';
import { StoreTimeoutError } from '../../lib/core/errors/store-timeout.error';
import { WriteConflictError } from '../../lib/core/errors/write-conflict.error';
import { CONFLICT, retryOnConflict, type ConflictBounds } from '../../lib/store/compare-and-set';
import { updateRecord } from '../../lib/store/read-decide-write';

/** `writers` increments of one record at once, each in the library's loop with `bounds`: how many were refused, and the sum. */
async function contend(writers: number, bounds: ConflictBounds): Promise<{ refused: number; sum: number }> {
  const backend = new MemoryBackend();
  await backend.open();
  const map = await backend.map('hot');
  const outcomes = await Promise.allSettled(Array.from({ length: writers }, () =>
    updateRecord(map, 'count', (current) => ({ result: true, write: String(Number(current?.value ?? 0) + 1) }), bounds)));
  for (const outcome of outcomes) if (outcome.status === 'rejected' && !(outcome.reason instanceof WriteConflictError)) throw outcome.reason;
  return { refused: outcomes.filter((o) => o.status === 'rejected').length, sum: Number((await map.get('count'))?.value ?? 0) };
}

/** The one bounded compare-and-set loop every read-decide-write of the library runs in. */
describe('retryOnConflict', () => {
  it('spreads writers that keep colliding on one hot record, so 40 at once all land within the default 16 attempts', async () => {
    expect(await contend(40, {})).toEqual({ refused: 0, sum: 40 });
    // Without the backoff they lose in lockstep: the same bounds refuse most of them (a group's count, a hot semaphore).
    const lockstep = await contend(40, { backoffMs: 0 });
    expect(lockstep.refused).toBeGreaterThan(0);
    expect(lockstep.sum).toBe(40 - lockstep.refused);
  });

  it('gives up after its attempts with an error naming what it wrote', async () => {
    let tries = 0;
    await expect(retryOnConflict('count task "t" into group "g"', async () => (tries++, CONFLICT), { attempts: 3, backoffMs: 0 }))
      .rejects.toThrow(WriteConflictError);
    expect(tries).toBe(3);
    await expect(retryOnConflict('count task "t" into group "g"', async () => CONFLICT, { attempts: 2 })).rejects.toThrow(/count task "t" into group "g"/);
  });

  it('never waits past its deadline', async () => {
    const deadline = new Deadline(30, 'hot record');
    const started = performance.now();
    await expect(retryOnConflict('hot record', async () => CONFLICT, { attempts: 1_000, deadline, backoffMs: 10_000 })).rejects.toThrow(StoreTimeoutError);
    // Bounded by the deadline, not by 1,000 attempts of up to 10 s each.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
