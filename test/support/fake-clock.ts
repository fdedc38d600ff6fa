import type { Clock } from '../../lib/core/clock';

/** A clock that only moves when told to. */
export class FakeClock implements Clock {
  constructor(private time = 1_700_000_000_000) {}
  now(): number {
    return this.time;
  }
  advance(ms: number): void {
    this.time += ms;
  }
}
