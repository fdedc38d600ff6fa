import type { AllocationLease } from './allocation-lease';
import type { AllocationHandlers } from './allocation-participant.options';

/**
 * The application's side of a participant: its `onAssigned` and `onRevoked` handlers, each called within a bound so
 * a hanging handler cannot hold the allocation up, and in order (an `onRevoked` waits, within the same bound, for an
 * `onAssigned` still setting work up). Handler failures are reported, never thrown.
 */
export class AllocationWork {
  /** The `onAssigned` call running now, which an `onRevoked` waits for (bounded) before it starts. */
  private assigning?: Promise<unknown>;

  constructor(
    private readonly handlers: AllocationHandlers,
    private readonly onError?: (error: unknown, what: string) => void,
  ) {}

  /**
   * Hands resources to the work. Waited for up to `timeoutMs` (the revoke timeout), so a hanging `onAssigned` cannot
   * stop this node from giving resources up when the plan says so.
   */
  async assign(lease: AllocationLease, resources: ReadonlyMap<string, number>, timeoutMs: number): Promise<void> {
    lease.add(resources);
    const call = Promise.resolve()
      .then(() => this.handlers.onAssigned?.([...resources.keys()].sort(), lease))
      .catch((error: unknown) => this.onError?.(error, 'onAssigned'));
    this.assigning = call;
    const outcome = await bounded(call, timeoutMs);
    if (this.assigning === call) this.assigning = undefined;
    if (outcome === 'overran') this.onError?.(new Error(`onAssigned did not return within ${timeoutMs} ms; going on`), 'onAssigned');
  }

  /** Runs `onRevoked` within `timeoutMs`, after any `onAssigned` still running; false if that overran. */
  async revoke(resources: string[], reason: string, timeoutMs: number): Promise<boolean> {
    const started = performance.now();
    // An onAssigned still setting work up finishes first (within the same bound), so the stop comes after the start.
    if (this.assigning) await bounded(this.assigning, timeoutMs);
    const call = Promise.resolve()
      .then(() => this.handlers.onRevoked?.(resources, reason))
      .catch((error: unknown) => this.onError?.(error, 'onRevoked'));
    return (await bounded(call, Math.max(1, timeoutMs - (performance.now() - started)))) === 'done';
  }
}

async function bounded(promise: Promise<unknown>, timeoutMs: number): Promise<'done' | 'overran'> {
  let timer: NodeJS.Timeout | undefined;
  const overran = new Promise<'overran'>((resolve) => (timer = setTimeout(() => resolve('overran'), timeoutMs)));
  try {
    return await Promise.race([promise.then(() => 'done' as const), overran]);
  } finally {
    clearTimeout(timer);
  }
}
