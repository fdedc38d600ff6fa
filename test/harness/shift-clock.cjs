/*
 * Preloaded (NODE_OPTIONS=--require) into a node process to move its wall clock by CLOCK_SHIFT_MS: `Date.now()` and
 * `new Date()` answer that much later, so the process lives through a moment of the test's choosing (a daylight-
 * saving transition) in real time. Timers and `performance.now()` are untouched: durations stay real.
 */
const shift = Number(process.env.CLOCK_SHIFT_MS || 0);
if (shift !== 0) {
  const RealDate = Date;
  class ShiftedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + shift);
      else super(...args);
    }
    static now() {
      return RealDate.now() + shift;
    }
  }
  globalThis.Date = ShiftedDate;
}
