import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { InvalidInputError } from '../../lib';
import { ScheduleCatalog } from '../../lib/schedules/schedule-catalog';
import { ScheduleRecordStore } from '../../lib/schedules/schedule-record.store';

/**
 * A runtime schedule's duration is its semaphore's, which every node defines with the semaphores' rule (more than
 * twice the clock-skew bound): a shorter one is refused at the upsert, naming the field, with nothing written,
 * rather than accepted and then denied `UNKNOWN_SEMAPHORE` at every tick.
 */
describe('a runtime schedule whose duration its semaphore would refuse', () => {
  it('is refused before the store is written, naming the schedule and its duration', async () => {
    const store = new ScheduleRecordStore(new MemoryBackend());
    await store.connect();
    const catalog = new ScheduleCatalog(store, { by: 'operator', skewMs: 500 });
    const upsert = async () => catalog.upsert({ id: 'report', cron: '* * * * * *', handler: 'h', duration: '1s' });
    await expect(upsert()).rejects.toThrow(InvalidInputError);
    await expect(upsert()).rejects.toThrow(/Schedule "report": invalid duration: 1s is not more than twice maxClockSkew \(500ms\)/);
    expect(await catalog.list()).toEqual([]);
    await expect(catalog.upsert({ id: 'report', cron: '* * * * * *', handler: 'h', duration: '1001ms' })).resolves.toMatchObject({ outcome: 'created' });
  });
});
