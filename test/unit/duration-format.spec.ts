import { formatDuration, parseDuration } from '../../lib/core/duration';

describe('formatDuration', () => {
  it.each([
    [6000, '6s'],
    [90_000, '90s'],
    [60_000, '1m'],
    [5_400_000, '90m'],
    [3_600_000, '1h'],
    [86_400_000, '1d'],
    [1500, '1500ms'],
    [1, '1ms'],
    [0, '0ms'],
    [30_000, '30s'],
    [300_000, '5m'],
    [86_400_001, '86400001ms'],
  ])('writes %p ms as %p', (ms, written) => {
    expect(formatDuration(ms)).toBe(written);
  });

  it('is never lossy: the library parses every result back to the same number of ms', () => {
    const samples = [1, 999, 1000, 1001, 59_999, 60_000, 61_000, 3_599_000, 3_600_000, 3_660_000, 86_399_999, 172_800_000, 2 ** 40];
    for (let ms = 1; ms < 5000; ms += 7) samples.push(ms * 1000, ms * 60_000, ms);
    for (const ms of samples) expect([ms, parseDuration(formatDuration(ms), 'x', 'duration')]).toEqual([ms, ms]);
  });

  it('writes values that are not whole ms as they are', () => {
    expect(formatDuration(0.5)).toBe('0.5ms');
    expect(formatDuration(-6000)).toBe('-6s');
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe('Infinityms');
  });
});
