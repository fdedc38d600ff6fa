import { ManualClock } from '../../lib/core/clock';
import { StoreClock } from '../../lib/store/store-clock';
import { eventually } from '../support/eventually';

const T = 1_700_000_000_000;

/** A store clock whose readings, round trips, monotonic and wall clocks the test moves. */
function scene() {
  let monotonic = 1_000;
  const wall = new ManualClock(5_000_000);
  const fallback = new ManualClock(42);
  let next: { at: number; tripMs: number } = { at: T, tripMs: 4 };
  const clock = new StoreClock(fallback, { monotonic: () => monotonic, wall: () => wall.now(), resampleMs: 60_000 });
  clock.attach(async () => {
    monotonic += next.tripMs;
    wall.advance(next.tripMs);
    return next.at;
  });
  const pass = (ms: number) => {
    monotonic += ms;
    wall.advance(ms);
  };
  return { clock, wall, answer: (at: number, tripMs = 4) => (next = { at, tripMs }), pass, freeze: (ms: number) => wall.advance(ms) };
}

describe('StoreClock: the store\'s clock counted by this node, never behind it', () => {
  it('answers the fallback until read, then the reading plus its round trip, carried forward', async () => {
    const { clock, answer, pass } = scene();
    expect(clock.now()).toBe(42);
    answer(T, 4);
    await clock.sync();
    expect(clock.now()).toBe(T + 5); // the reading, its whole round trip, and a millisecond of rounding
    expect(clock.aheadMs()).toBe(5);
    pass(1_000);
    expect(clock.now()).toBe(T + 5 + 1_000 + 1); // drift counted: 100 ppm of a second, rounded up
  });

  it('a wall clock stepped back changes nothing', async () => {
    const { clock, wall, answer, pass } = scene();
    answer(T, 4);
    await clock.sync();
    const start = clock.now();
    wall.advance(-3_600_000); // an NTP step back
    pass(100);
    expect(clock.now() - start).toBeGreaterThanOrEqual(100);
    expect(clock.now() - start).toBeLessThanOrEqual(101);
  });

  it('the count after a suspended host is ahead of where the monotonic clock alone would put it', async () => {
    const { clock, answer, freeze } = scene();
    answer(T, 4);
    await clock.sync();
    const start = clock.now();
    freeze(30_000);
    expect(clock.now()).toBeGreaterThanOrEqual(start + 30_000);
  });

  it('keeps the lower of two counts: a slow reading does not replace a closer one, a closer one replaces a count pushed ahead', async () => {
    const { clock, answer, pass, freeze } = scene();
    answer(T, 2);
    await clock.sync();
    pass(100);
    const before = clock.now();
    answer(T + 400, 600); // a slow round trip (the store read mid-way): its count would be 600 ms ahead
    await clock.sync();
    expect(clock.now()).toBeLessThan(before + 600 + 10);
    expect(clock.aheadMs()).toBeLessThan(10);
    freeze(60_000); // the wall clock jumped a minute: the count with it
    expect(clock.now()).toBeGreaterThan(T + 60_000);
    answer(T + 800, 2); // the store says otherwise: the count comes back to it
    await clock.sync();
    expect(clock.now()).toBeLessThan(T + 1_000);
  });

  it('a store clock stepped forward is taken at the next reading: the count is never left behind it', async () => {
    const { clock, answer, pass } = scene();
    answer(T, 2);
    await clock.sync();
    pass(1_000);
    answer(T + 60_000, 2); // the store's clock stepped a minute forward
    await clock.sync();
    expect(clock.now()).toBeGreaterThanOrEqual(T + 60_000);
    expect(clock.earliest()).toBeGreaterThanOrEqual(T + 60_000);
  });

  it('its earliest is never ahead of the store: the reading carried by the monotonic clock alone', async () => {
    const { clock, answer, pass, freeze } = scene();
    answer(T, 4);
    await clock.sync();
    expect(clock.earliest()).toBe(T);
    pass(1_000);
    expect(clock.earliest()).toBe(T + 999); // less 100 ppm of drift, rounded down
    freeze(30_000); // a wall clock jumped forward moves the count, not the earliest
    expect(clock.earliest()).toBe(T + 999);
    expect(clock.now()).toBeGreaterThan(T + 30_000);
  });

  it('takes a reading another call brought back as its own: its round trip is the time since the call was sent', async () => {
    const { clock, answer, pass } = scene();
    answer(T, 50);
    await clock.sync();
    expect(clock.aheadMs()).toBe(51);
    // The feed's check was sent at monotonic 1_060 and its answer, read at T + 12, is offered 3 ms later.
    pass(10);
    const sentAt = 1_060;
    pass(3);
    clock.offer(T + 12, sentAt);
    expect(clock.aheadMs()).toBe(4); // closer than the slow reading: taken
    expect(clock.now()).toBe(T + 16);
    expect(clock.earliest()).toBe(T + 12);
    // A slower one than the count it has is not.
    pass(1_000);
    clock.offer(T + 1_012, 1_063 + 500);
    expect(clock.aheadMs()).toBeLessThan(5);
    expect(clock.now()).toBe(T + 1_017);
  });

  it('reads the clock itself only when no reading was offered for its resample interval', async () => {
    let reads = 0;
    const clock = new StoreClock(new ManualClock(0), { resampleMs: 60 });
    clock.attach(async () => {
      reads++;
      return Date.now();
    });
    clock.offer(T, performance.now()); // before start: taken, nothing scheduled
    await clock.start();
    expect(reads).toBe(1);
    const offers = setInterval(() => clock.offer(Date.now(), performance.now()), 20);
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(reads).toBe(1); // every offer put its own reading off
    } finally {
      clearInterval(offers);
    }
    await eventually('a reading of its own once the offers stopped', () => reads === 2, { timeoutMs: 5_000, intervalMs: 10 });
    clock.stop();
  });

  it('does nothing on a store without a clock: the clock it was given', async () => {
    const wall = new ManualClock(42);
    const clock = new StoreClock(wall);
    await clock.start();
    expect(clock.isAttached()).toBe(false);
    expect(clock.now()).toBe(42);
    clock.stop();
  });

  it('gives a reading up after its deadline, and keeps counting from the last one', async () => {
    const clock = new StoreClock(new ManualClock(0), { readTimeoutMs: 20 });
    let hang = false;
    clock.attach(() => (hang ? new Promise<number>(() => undefined) : Promise.resolve(T)));
    await clock.sync();
    hang = true;
    await expect(clock.sync()).rejects.toThrow(/read the store's clock/);
    expect(clock.now()).toBeGreaterThanOrEqual(T);
  });
});
