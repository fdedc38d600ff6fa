import { ManualClock } from '../../lib/testing';

describe('ManualClock', () => {
  it('stays where it was put until moved', () => {
    const clock = new ManualClock(1_000);
    expect(clock.now()).toBe(1_000);
    expect(clock.now()).toBe(1_000);
  });

  it('advances forward and back, and can be set', () => {
    const clock = new ManualClock(1_000);
    clock.advance(500);
    expect(clock.now()).toBe(1_500);
    clock.advance(-200);
    expect(clock.now()).toBe(1_300);
    clock.set(42);
    expect(clock.now()).toBe(42);
  });

  it('starts at the wall-clock time when not told otherwise', () => {
    const before = Date.now();
    const now = new ManualClock().now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});
