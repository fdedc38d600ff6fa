/*
 * Preloaded (NODE_OPTIONS=--require) into a node process to move its wall clock by CLOCK_SHIFT_MS: `Date.now()` and
 * `new Date()` answer that much later, so the process lives through a moment of the test's choosing (a daylight-
 * saving transition) in real time, or runs on a machine whose clock is off. With CLOCK_STEP_MS, each SIGUSR2 steps the
 * clock that much further (an NTP step). Timers and `performance.now()` are untouched: durations stay real.
 * `globalThis.__realDateNow()` still answers real time, for the history a process writes.
 */
let shift = Number(process.env.CLOCK_SHIFT_MS || 0);
const step = Number(process.env.CLOCK_STEP_MS || 0);
if (shift !== 0 || step !== 0) {
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
  globalThis.__realDateNow = () => RealDate.now();
  globalThis.Date = ShiftedDate;
  if (step !== 0) process.on('SIGUSR2', () => {
    shift += step;
  });
}
