import { MemoryBackend } from '../../lib/backends/memory/memory-backend';
import { MemoryRecords } from '../../lib/backends/memory/memory-records';
import { FakeClock } from '../support/fake-clock';

/** Memory's counters after losses of data: a jump past every value handed out before, however close the losses come. */
describe('memory counters across losses', () => {
  it('never hand out a value twice when a second loss comes in the same ms as the first jump', async () => {
    const clock = new FakeClock(1_000);
    const records = new MemoryRecords(clock);
    const backend = new MemoryBackend({ records });
    await backend.open();
    const counters = await backend.counters();
    records.loseData(); // lost at 1,000 ms
    clock.advance(1); // the first value after it is drawn a ms later: the jump starts from 1,001 ms
    const first = (await counters.next('tokens')).value;
    const last = (await counters.next('tokens')).value;
    records.loseData(); // lost again within that same ms
    const after = (await counters.next('tokens')).value;
    expect([first, last]).toEqual([1_001_000, 1_001_001]);
    expect(after).toBeGreaterThan(last);
  });
});
