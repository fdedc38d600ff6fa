import { livePermits, type Permit } from '../gatekeeper/permit';
import type { SemaphoreDefinition } from '../gatekeeper/semaphore-definition';
import type { PermitStore } from '../store/permit-store';

/** One semaphore as seen in the cluster: its definition (if any) and its live permits. */
export interface SemaphoreStatus {
  /** The semaphore's name. */
  readonly name: string;
  /** Its definition, or `undefined` if permits exist for a semaphore that is no longer defined. */
  readonly definition: SemaphoreDefinition | undefined;
  /** Live permits, oldest grant first. */
  readonly permits: readonly Permit[];
  /** The highest fencing token granted so far (`undefined` if none was ever granted). */
  readonly lastToken: number | undefined;
}

/** Every semaphore with a definition or a permit state, with its permits live at `now`. */
export async function readSemaphoreStatus(store: PermitStore, now: number): Promise<SemaphoreStatus[]> {
  const states = new Map((await store.listPermitStates()).map((s) => [s.name, s.state]));
  const names = new Set([...store.listDefinitions().map((d) => d.name), ...states.keys()]);
  return [...names].sort().map((name) => {
    const state = states.get(name);
    return {
      name,
      definition: store.getDefinition(name),
      permits: state ? livePermits(state, now) : [],
      lastToken: state && state.revision > 0 ? state.lastToken : undefined,
    };
  });
}
