import { HazelcastPermitStore } from '../store/hazelcast-permit.store';
import { MemoryPermitStore } from '../store/memory-permit.store';
import type { PermitStore } from '../store/permit-store';
import type { ResolvedGatekeeperOptions } from './gatekeeper.options';

/** Builds the store the options ask for. */
export function createPermitStore(options: ResolvedGatekeeperOptions): PermitStore {
  if (typeof options.store === 'object') return options.store;
  if (options.store === 'memory') return new MemoryPermitStore();
  return new HazelcastPermitStore(options.hazelcast);
}
