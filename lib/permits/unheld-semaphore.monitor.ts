import type { PermitDenied } from './acquire-result';
import { DenyReason, TRANSIENT_DENIALS } from './deny-reason';
import { formatDuration } from '../core/duration';
import type { Permit } from './permit';
import type { SemaphoreDefinition } from './semaphore-definition';
import { admittedBy } from './permit.rules';
import type { NodeIdentity } from './permit';

/** What the monitor reads of this node's view: the definition and the live permits of a semaphore. */
export interface UnheldSemaphoreView {
  definition(semaphore: string): SemaphoreDefinition | undefined;
  livePermits(semaphore: string): Permit[];
  /** The last fencing token granted (0 if none): a grant between two looks means someone ran it. */
  lastToken(semaphore: string): number;
  /** The live app instances if presence knows them (confirmed recently), else `undefined`. */
  liveInstances?(): readonly NodeIdentity[] | undefined;
}

/**
 * Notices a decorated job that runs nowhere: its ticks here are denied, and for longer than the semaphore's
 * duration this node's view shows no holder anywhere and no new grant (its last fencing token did not move) (paused, or no live node that its patterns admit). Warns once
 * per semaphore, with this node's own reason, and says so again when someone holds it. Denials for an unreachable
 * cluster are left to the availability warning, and a recovery wait (`RECOVERING`) to its own announcement.
 */
export class UnheldSemaphoreMonitor {
  /** When each semaphore was first seen with no holder (while this node was denied), and whether it was reported. */
  private readonly unheld = new Map<string, { since: number; warned: boolean; token: number }>();

  constructor(
    private readonly view: UnheldSemaphoreView,
    private readonly logger: { warn(message: string): void; log(message: string): void },
    private readonly now: () => number,
  ) {}

  /** A tick of `where` was denied. */
  denied(where: string, denied: PermitDenied): void {
    const { semaphore } = denied;
    if (TRANSIENT_DENIALS.has(denied.reason) || denied.reason === DenyReason.IN_USE) return;
    if (denied.reason === DenyReason.RECOVERING) {
      // The library's own recovery wait, announced once with its end (PermitNotices): nobody may hold it until then,
      // so the time without a holder counts from the wait's end.
      const waiting = this.unheld.get(semaphore);
      if (waiting) waiting.since = this.now();
      return;
    }
    const holders = this.view.livePermits(semaphore);
    if (holders.length > 0) return this.held(semaphore, holders);
    const definition = this.view.definition(semaphore);
    if (!definition) return;
    const now = this.now();
    const token = this.view.lastToken(semaphore);
    const state = this.unheld.get(semaphore) ?? { since: now, warned: false, token };
    this.unheld.set(semaphore, state);
    if (token !== state.token) {
      // Granted elsewhere meanwhile (a short release-mode run this node never saw held): it runs somewhere.
      state.since = now;
      state.token = token;
    }
    if (state.warned || now - state.since < definition.durationMs) return;
    state.warned = true;
    this.logger.warn(
      `"${semaphore}" has had no holder on any node for ${formatDuration(Math.round((now - state.since) / 1000) * 1000)} ` +
        `(longer than its ${formatDuration(definition.durationMs)} duration): ${why(definition, this.view.liveInstances?.())}; here ${where} is denied: ` +
        `${denied.reason} (${denied.message})`,
    );
  }

  /**
   * Since when `semaphore` has had no holder anywhere, once this node warned of it (longer than its duration) and
   * while it is not paused: its instants run nowhere. `undefined` otherwise.
   */
  runsNowhere(semaphore: string): number | undefined {
    const state = this.unheld.get(semaphore);
    if (!state?.warned || this.view.definition(semaphore)?.permits === 0) return undefined;
    return state.since;
  }

  /** A tick of `where` ran here. */
  ran(semaphore: string, holder: Permit): void {
    this.held(semaphore, [holder]);
  }

  private held(semaphore: string, holders: Permit[]): void {
    const state = this.unheld.get(semaphore);
    if (!state) return;
    this.unheld.delete(semaphore);
    if (state.warned) this.logger.log(`"${semaphore}" is held again, by ${holders.map((p) => `${p.acquirer} (group ${p.group})`).join(', ')}`);
  }
}

function why(definition: SemaphoreDefinition, live: readonly NodeIdentity[] | undefined): string {
  if (definition.permits === 0) return 'it is paused (permits 0; resume it)';
  const patterns = `groupPattern "${definition.groupPattern}" and acquirerPattern "${definition.acquirerPattern}"`;
  if (!live || live.length === 0) return `no live node admitted by ${patterns} takes it`;
  const admitted = admittedBy(definition, live);
  if (admitted.length === 0) return `no live instance can run it: ${patterns} admit none of the ${live.length} live instance(s) (${describeInstances(live)})`;
  return `live instance(s) ${describeInstances(admitted)} are admitted by ${patterns} but none holds it (are their jobs scheduled?)`;
}

/** `a (group g), b (group h)`, at most five, for log lines. */
export function describeInstances(instances: readonly NodeIdentity[]): string {
  const shown = instances.slice(0, 5).map((p) => `${p.acquirer} (group ${p.group})`).join(', ');
  return instances.length > 5 ? `${shown} and ${instances.length - 5} more` : shown;
}
