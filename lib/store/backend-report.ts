/**
 * Tells a backend's report (what its `onLostData`, `onWarning` or `onUnsafeConfig` option receives) to `receiver`,
 * else writes it as one console line at `level`. A receiver that throws does not stop the call that found it: the
 * report's failure is its receiver's.
 */
export function tellReport<R>(receiver: ((report: R) => void) | undefined, report: R, level: 'error' | 'warn', line: (report: R) => string): void {
  try {
    if (receiver) receiver(report);
    else console[level](`nestjs-gatekeeper: ${line(report)}`);
  } catch {
    // The report's failure is its receiver's.
  }
}
