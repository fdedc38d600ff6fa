import type { AppProcess } from '../test/support/app-process';
import { eventually } from '../test/support/eventually';

/** Asks a bench node process for its round-trip counter (SIGUSR2; it prints `OPS <unix ms> <n>`) and reads the answer. */
export async function operationsOf(app: AppProcess): Promise<number> {
  const reports = () => app.output().split('\n').filter((l) => l.startsWith('OPS '));
  const before = reports().length;
  app.child.kill('SIGUSR2');
  await eventually(`${app.name} to report its operation count`, () => reports().length > before, { timeoutMs: 10_000, intervalMs: 10 });
  return Number(reports().at(-1)!.split(' ')[2]);
}
