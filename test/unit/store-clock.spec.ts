import { ManualClock } from '../../lib/core/clock';
import { StoreClock } from '../../lib/store/store-clock';

/** A store clock whose readings and round trips the test sets: `answer(at, tripMs)` for the next reading. */
function scene() {
  let monotonic = 1_000;
  const wall = new ManualClock(5_000_000);
  const steps: number[] = [];
  let next: { at: number; tripMs: number } = { at: 1_700_000_000_000, tripMs: 4 };
  const clock = new StoreClock(wall, { monotonic: () => monotonic, resampleMs: 60_000 });
  clock.attach(async () => {
    monotonic += next.tripMs / 2;
    const at = next.at;
    monotonic += next.tripMs / 2;
    return at;
  }, (byMs) => steps.push(byMs));
  return {
    clock, wall, steps,
    answer: (at: number, tripMs = 4) => (next = { at, tripMs }),
    pass: (ms: number) => (monotonic += ms),
  };
}

describe('StoreClock: the store\'s clock counted on this process\'s monotonic clock', () => {
  it('answers the wall clock until read, then the reading carried forward, whatever the wall clock does', async () => {
    const { clock, wall, answer, pass } = scene();
    expect(clock.now()).toBe(5_000_000);
    answer(1_700_000_000_000, 4);
    await clock.sync();
    expect(clock.now()).toBe(1_700_000_000_002); // the reading plus half its round trip
    expect(clock.errorMs()).toBe(4);
    wall.advance(-3_600_000); // an NTP step of this node's wall clock: no effect
    pass(1_000);
    expect(clock.now()).toBe(1_700_000_001_002);
    expect(clock.errorMs()).toBeCloseTo(4.1, 5); // drift counted: 100 ppm of a second
  });

  it('keeps a precise reading over a later slower one', async () => {
    const { clock, answer, pass } = scene();
    answer(1_700_000_000_000, 2);
    await clock.sync();
    pass(100);
    answer(1_700_000_000_500, 600); // a slow round trip: 300 ms of doubt
    await clock.sync();
    expect(clock.errorMs()).toBeLessThan(10);
  });

  it('never goes back: a reading behind what was counted (the store\'s clock stepped back) is waited for, and told', async () => {
    const { clock, steps, answer, pass } = scene();
    answer(1_700_000_000_000, 2);
    await clock.sync();
    pass(1_000);
    const before = clock.now();
    answer(1_700_000_000_000 - 5_000, 2); // the store's clock stepped back 6 s
    await clock.sync();
    expect(clock.now()).toBe(before + 2); // only the reading's round trip passed
    expect(steps).toHaveLength(1);
    expect(steps[0]).toBeGreaterThan(5_900);
    pass(5_000);
    expect(clock.now()).toBe(before + 2); // still waiting for the store's clock to catch up (6 s behind)
    pass(2_000);
    expect(clock.now()).toBeGreaterThan(before + 2);
  });

  it('does nothing on a store without a clock: the wall clock it was given', async () => {
    const wall = new ManualClock(42);
    const clock = new StoreClock(wall);
    await clock.start();
    expect(clock.isAttached()).toBe(false);
    expect(clock.now()).toBe(42);
    clock.stop();
  });
});
